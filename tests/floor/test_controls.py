"""Controls at the table, each tried as the attack it stops: acting away from one's post, laying or
passing cards out of turn, voiding a coup by claiming the cut card, closing mid-coup, editing a
table's règlement behind the director's back."""

from __future__ import annotations

import random

import pytest
from django.db import DatabaseError, connection, transaction

from audit.models import Anomaly, AuditEvent
from casino.errors import Conflict, RoleRequired
from casino.floor.coups import (
    IllegalCoupPhase,
    VoidAttempt,
    coup_cancel,
    coup_close_betting,
    coup_open,
    coup_settle,
    rules_of,
    stake_place,
)
from casino.floor.models import Account, Coup, CoupResult, Movement, PostedReglement, TableChange
from casino.floor.services import NotOnDuty, balance, shift_close, table_configure
from casino.games.cards import SIXAIN
from casino.people.roles import Role
from casino.people.services import staff_create
from shoes.errors import CardRefused, IllegalPackState
from shoes.models import CardLaid, PackEvent
from shoes.services import cards_pass, pack_cut, pack_retire, pack_shuffle
from tests.conftest import FLOAT, lay_in_coups, pass_the_cards, signed_count, talon


@pytest.fixture
def other(cast):
    """A second tailleur and a second chef de partie, on duty nowhere."""
    return {
        role: staff_create(
            actor=cast.directeur,
            username=f"other_{role.value}",
            full_name=f"Other {role.value}",
            roles=[role],
        )
        for role in (Role.TAILLEUR, Role.CHEF_DE_PARTIE, Role.CROUPIER)
    }


def recorded():
    """What a refused act must leave as it was."""
    return (
        PackEvent.objects.count(),
        CardLaid.objects.count(),
        Movement.objects.count(),
        CoupResult.objects.count(),
        AuditEvent.objects.count(),
    )


def test_staff_off_duty_cannot_shuffle_cut_or_pass_the_pack(cast, other, sixain_in_play):
    pack = sixain_in_play
    before = recorded()
    with pytest.raises(NotOnDuty):
        cards_pass(actor=other[Role.TAILLEUR], pack_id=pack.pk, undealt=talon(pack))
    assert recorded() == before
    pass_the_cards(cast, pack)
    before = recorded()
    with pytest.raises(NotOnDuty):
        pack_shuffle(actor=other[Role.CROUPIER], pack_id=pack.pk)
    with pytest.raises(NotOnDuty):
        pack_shuffle(actor=other[Role.TAILLEUR], pack_id=pack.pk)
    pack_shuffle(actor=cast.croupier, pack_id=pack.pk)
    pack_shuffle(actor=cast.tailleur, pack_id=pack.pk)
    middle = recorded()
    with pytest.raises(NotOnDuty):
        pack_cut(actor=other[Role.TAILLEUR], pack_id=pack.pk, cut_by="M. Dupont")
    assert recorded() == middle
    assert before[0] + 2 == middle[0]  # only the two shuffles on duty were recorded


def test_the_card_endpoint_outside_a_coup_is_gone(api, cast, sixain_in_play):
    response = api(cast.tailleur).post(
        f"/api/v1/packs/{sixain_in_play.pk}/cards",
        {"code": "AS"},
        format="json",
        HTTP_IDEMPOTENCY_KEY="outside",
    )
    assert (response.status_code, response.json()["code"]) == (404, "not_found")
    assert not CardLaid.objects.exists()


def test_no_passing_retiring_or_closing_while_a_coup_is_open(cast, shift, sixain_in_play):
    lay_in_coups(cast, shift, ["KS", "7H"])
    before = recorded()
    with pytest.raises(IllegalPackState, match="coup is in progress"):
        pass_the_cards(cast, sixain_in_play)
    with pytest.raises(IllegalPackState, match="coup is in progress"):
        pack_retire(actor=cast.chef, pack_id=sixain_in_play.pk, counted={})
    count = signed_count(cast, shift.table, "closing", FLOAT)
    before = recorded()
    with pytest.raises(Conflict, match="coup in progress"):
        shift_close(actor=cast.chef, shift=shift, count_id=count.pk)
    shift.refresh_from_db()
    assert shift.closed_at is None
    assert recorded() == before


def test_only_the_chef_de_partie_on_duty_cancels_a_coup_and_the_stakes_come_back(
    cast, other, shift, sixain_in_play
):
    coup = coup_open(actor=cast.tailleur, shift_id=shift.pk)
    stake_place(
        actor=cast.croupier, coup_id=coup.pk, ref="a", holder="3", chance="rouge", amount=2500
    )
    coup_close_betting(actor=cast.tailleur, coup_id=coup.pk)
    lay_in_coups(cast, shift, ["KS", "7H"])
    seat = Account.objects.get(code="T1:seat:3")
    before = recorded()
    for who, error in (
        (cast.tailleur, RoleRequired),
        (cast.croupier, RoleRequired),
        (other[Role.CHEF_DE_PARTIE], NotOnDuty),
    ):
        with pytest.raises(error):
            coup_cancel(actor=who, coup_id=coup.pk, reason="a card fell")
    with pytest.raises(Exception, match="say why"):
        coup_cancel(actor=cast.chef, coup_id=coup.pk, reason="  ")
    assert recorded() == before
    coup_cancel(actor=cast.chef, coup_id=coup.pk, reason="a card fell on the floor")
    coup.refresh_from_db()
    assert coup.phase == "cancelled"
    assert balance(seat) == 0  # the 2,500 placed came back
    anomaly = Anomaly.objects.get(detector="coup_cancelled")
    assert set(anomaly.involved) == {cast.chef.pk, cast.tailleur.pk}
    assert anomaly.evidence["cards"] == ["KS", "7H"]
    coup_open(actor=cast.tailleur, shift_id=shift.pk)  # the table plays on


def test_claiming_the_cut_card_where_there_is_none_is_refused_and_recorded(
    cast, shift, sixain_in_play
):
    lay_in_coups(cast, shift, ["KS", "7H"])
    coup = Coup.objects.get()
    before = recorded()
    with pytest.raises(VoidAttempt, match="has no cut card"):
        coup_settle(actor=cast.croupier, coup_id=coup.pk, cut_card=True)
    coup.refresh_from_db()
    assert coup.phase == "dealing"
    assert not CoupResult.objects.exists()
    assert recorded()[:4] == before[:4]  # nothing settled, moved or laid...
    anomaly = Anomaly.objects.get(detector="void_attempt")  # ...but the attempt is evidence
    assert anomaly.involved == [cast.croupier.pk]
    assert anomaly.severity == "critical"


@pytest.mark.reglement("france-2007")
def test_the_cut_card_is_believed_only_when_the_pack_says_it_is_out(cast, shift, sixain_in_play):
    rules = shift.rules()
    assert (rules.end_rule, rules.cut_card_from_end) == ("cut_card", 5)
    # Deal a shuffled sixain until the red card comes out inside a coup.
    cards = list(SIXAIN.cards)
    random.Random(5).shuffle(cards)
    early = None
    for code in map(str, cards):
        coup = Coup.objects.filter(shift=shift).exclude(phase="settled").first()
        if coup is not None and coup.phase == "dealing" and early is None:
            early = coup.pk
            with pytest.raises(VoidAttempt, match="cards are left"):
                coup_settle(actor=cast.croupier, coup_id=coup.pk, cut_card=True)
        try:
            lay_in_coups(cast, shift, [code])
        except IllegalCoupPhase:  # the cut card is next: no card may be laid any more
            break
        except Conflict:  # the taille ended between two coups: no coup begins
            break
    left = 312 - CardLaid.objects.filter(burned=False).count()
    assert left == 5
    coup = Coup.objects.filter(shift=shift).exclude(phase="settled").first()
    if coup is not None:  # the cut card came out inside a coup: void, the cards pass
        result = coup_settle(actor=cast.croupier, coup_id=coup.pk, cut_card=True)
        assert (result.void, result.last) == (True, True)
    else:  # it was next as a coup would begin: the last coup said so
        assert CoupResult.objects.order_by("-id").first().last
    assert sixain_in_play.__class__.objects.get(pk=sixain_in_play.pk).state == "passed"
    assert Anomaly.objects.filter(detector="void_attempt").count() == 1


def test_a_reshuffled_sixain_plays_its_cards_again(cast, shift, sixain_in_play):
    pack = sixain_in_play
    lay_in_coups(cast, shift, ["AS"] * 6)
    with pytest.raises(CardRefused):
        lay_in_coups(cast, shift, ["AS"])  # a seventh in one taille is foreign
    coup_cancel(actor=cast.chef, coup_id=Coup.objects.get(phase="dealing").pk, reason="misdeal")
    pass_the_cards(cast, pack)
    pack_shuffle(actor=cast.croupier, pack_id=pack.pk)
    pack_shuffle(actor=cast.tailleur, pack_id=pack.pk)
    pack_cut(actor=cast.tailleur, pack_id=pack.pk, cut_by="Mme Martin")
    lay_in_coups(cast, shift, ["AS"] * 3)  # the same aces, in the new taille
    new = Coup.objects.get(phase="dealing")
    assert (new.taille, new.number) == (2, 1)
    # At retirement every card is counted once: the three out now, and the 309 in the box.
    counted = {str(c): 6 for c in set(SIXAIN.cards)}
    counted["AS"] = 3
    coup_cancel(actor=cast.chef, coup_id=new.pk, reason="end of the séance")
    reconciliation = pack_retire(actor=cast.chef, pack_id=pack.pk, counted=counted)
    assert reconciliation.balanced, (reconciliation.missing, reconciliation.extra)


def test_a_table_changes_only_by_the_directors_recorded_act_from_the_next_seance(
    cast, shift, sixain_in_play
):
    table = shift.table
    modern = PostedReglement.objects.get(name="trente-et-quarante-modern")
    # Raw edits are refused by the database, whoever writes them.
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE floor_table SET max_stake = 10000000 WHERE id = %s", [table.pk])
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE floor_table SET number = 9 WHERE id = %s", [table.pk])
    for who in (cast.chef, cast.commissaire, cast.root):
        with pytest.raises(RoleRequired):
            table_configure(
                actor=who, table_id=table.pk, reglement_id=modern.pk, min_stake=500, max_stake=9000
            )
    assert TableChange.objects.filter(table=table).count() == 1  # its creation
    lay_in_coups(cast, shift, ["KS"])
    table_configure(
        actor=cast.directeur,
        table_id=table.pk,
        reglement_id=modern.pk,
        min_stake=1000,
        max_stake=9000,
    )
    # The séance under way plays on under what it opened with; so is a coup recomputed later.
    coup = Coup.objects.get()
    assert (coup.reglement.name, coup.min_stake, coup.max_stake) == ("baden-1854", 500, 600_000)
    assert rules_of(coup).max_stake == 600_000
    shift.refresh_from_db()
    assert shift.rules().name == "baden-1854"
    assert AuditEvent.objects.filter(action="table.changed").count() == 1


def test_tables_over_the_api_only_by_the_director(api, cast, posted):
    body = {
        "number": 7,
        "game": "trente-et-quarante",
        "reglement": posted.pk,
        "min_stake": 500,
        "max_stake": 100_000,
    }
    for who in ("chef", "commissaire", "root", "inspecteur"):
        refused = api(getattr(cast, who)).post(
            "/api/v1/tables", body, format="json", HTTP_IDEMPOTENCY_KEY=f"t-{who}"
        )
        assert refused.status_code == 403, refused.json()
        assert refused.json()["code"] == "role_required"
    assert not TableChange.objects.exists()
    made = api(cast.directeur).post(
        "/api/v1/tables", body, format="json", HTTP_IDEMPOTENCY_KEY="t-ok"
    )
    assert made.status_code == 201, made.json()
    modern = PostedReglement.objects.get(name="trente-et-quarante-modern")
    moved = api(cast.directeur).post(
        "/api/v1/tables/7/settings",
        {"reglement": modern.pk, "min_stake": 1000, "max_stake": 50_000},
        format="json",
        HTTP_IDEMPOTENCY_KEY="t-move",
    )
    assert moved.status_code == 201, moved.json()
    listed = api(cast.inspecteur).get("/api/v1/tables").json()["results"]
    assert [(t["number"], t["min_stake"], t["reglement"]) for t in listed] == [(7, 1000, modern.pk)]
    assert TableChange.objects.count() == 2


def test_bad_floor_input_gets_a_clear_error_not_a_500(api, cast, shift, sixain_in_play):
    client = api(cast.croupier)
    for url, body in (
        ("/api/v1/stakes/999999/withdraw", {}),
        ("/api/v1/transfers", {"shift": shift.pk, "kind": "fill", "amount": 10**20}),
        ("/api/v1/counts", {"table": 1, "moment": "closing", "chips": {"10000": 10**20}}),
    ):
        response = client.post(url, body, format="json", HTTP_IDEMPOTENCY_KEY=url)
        assert 400 <= response.status_code < 500, (url, response.status_code)
        assert set(response.json()) == {"code", "message", "where"}
    coup = coup_open(actor=cast.tailleur, shift_id=shift.pk)
    long_seat = api(cast.croupier).post(
        "/api/v1/stakes",
        {"coup": coup.pk, "ref": "a", "holder": "x" * 60, "chance": "rouge", "amount": 1000},
        format="json",
        HTTP_IDEMPOTENCY_KEY="long",
    )
    assert long_seat.status_code == 400
    assert long_seat.json()["where"] == "holder"
    for query in ("date=2026-13-45", "date=yesterday", "shift=abc", "table=99999999999999"):
        response = api(cast.inspecteur).get(f"/api/v1/coups?{query}")
        assert response.status_code == 400, query
        assert set(response.json()) == {"code", "message", "where"}
