"""Les cartes passent with their count: the undealt cards of the talon are recorded, as scanned
or as counted, checked against the pack; a taille the engine ended is counted before the talon
is shuffled again or leaves the table; only the tailleur on duty at that table counts it."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from audit.models import Anomaly, AuditEvent
from casino.errors import RoleRequired
from casino.floor.coups import coup_cancel
from casino.floor.models import Coup
from casino.floor.services import NotOnDuty, shift_open, table_create
from casino.people.roles import Role
from casino.people.services import staff_create
from shoes.errors import (
    CountInvalid,
    IllegalPackState,
    NotACard,
    TalonCounted,
    TalonNotCounted,
)
from shoes.models import PackEvent, PackState, TalonCount
from shoes.services import (
    cards_left,
    cards_pass,
    pack_cut,
    pack_retire,
    pack_shuffle,
    replacement_demand,
)
from tests.actors import login_admin
from tests.conftest import FLOAT, lay_in_coups, talon
from tests.reports.test_export_replay import play, sixain

# Noir K 7 9 T = 36, rouge T T J K = 40: noir wins, eight cards out of the sixain.
COUP = ["KS", "7H", "9D", "TC", "TD", "TH", "JS", "KC"]


def recorded():
    """What a refused count must leave as it was."""
    return (
        PackEvent.objects.count(),
        TalonCount.objects.count(),
        Anomaly.objects.count(),
        AuditEvent.objects.count(),
    )


def test_passing_records_the_undealt_cards_in_the_order_scanned(cast, shift, sixain_in_play):
    pack = sixain_in_play
    lay_in_coups(cast, shift, COUP)
    scanned = list(reversed(talon(pack)))  # the order they lie in, whatever it is
    assert len(scanned) == 312 - 8
    count = cards_pass(actor=cast.tailleur, pack_id=pack.pk, undealt=scanned, method="scanned")
    pack.refresh_from_db()
    assert pack.state == PackState.PASSED
    assert (count.taille, count.method, count.cards, count.expected) == (1, "scanned", scanned, 304)
    assert (count.counted_by, count.shift, count.balanced) == (cast.tailleur, shift, True)
    passed = pack.events.get(kind=PackEvent.Kind.PASSED)
    assert passed.details["talon"] == count.pk
    assert (passed.details["counted"], passed.details["missing"]) == (304, {})
    audit = AuditEvent.objects.get(action="pack.passed")
    assert (
        json.loads(audit.payload)["cards"] == scanned
    )  # the chain pins what was counted, in order
    assert not Anomaly.objects.exists()


def test_cards_counted_by_hand_are_read_like_any_card_code(cast, shift, sixain_in_play):
    pack = sixain_in_play
    listed = [code.lower().replace("T", "10") for code in talon(pack)]
    count = cards_pass(actor=cast.tailleur, pack_id=pack.pk, undealt=listed)
    assert count.method == "counted"  # unless the tailleur says they were scanned in order
    assert count.cards == talon(pack)
    assert count.balanced


def test_a_count_with_a_card_missing_is_recorded_and_names_that_card(cast, shift, sixain_in_play):
    pack = sixain_in_play
    lay_in_coups(cast, shift, COUP)
    counted = talon(pack)
    counted.remove("QC")  # one queen of clubs is not in the talon any more
    count = cards_pass(actor=cast.tailleur, pack_id=pack.pk, undealt=counted)
    pack.refresh_from_db()
    assert pack.state == PackState.PASSED  # a count is evidence: recorded as counted
    assert (count.missing, count.extra, len(count.cards), count.expected) == (
        {"QC": 1},
        {},
        303,
        304,
    )
    anomaly = Anomaly.objects.get(detector="missing_card")
    assert anomaly.severity == "critical"
    assert "QC x1" in anomaly.summary
    assert "taille 1" in anomaly.summary
    assert anomaly.evidence["cards"] == {"QC": 1}
    assert (anomaly.evidence["count"], anomaly.evidence["talon"]) == ("pass", count.pk)
    assert anomaly.involved == [cast.tailleur.pk]  # the tailleur does not review his count
    assert not Anomaly.objects.filter(detector="extra_card").exists()


def test_a_card_the_talon_cannot_hold_is_named_as_extra(cast, shift, sixain_in_play):
    pack = sixain_in_play
    lay_in_coups(cast, shift, COUP)  # one KS is out: the talon holds five
    counted = talon(pack)
    counted[counted.index("7H")] = "KS"  # a sixth KS instead of a 7H
    count = cards_pass(actor=cast.tailleur, pack_id=pack.pk, undealt=counted)
    assert (count.missing, count.extra) == ({"7H": 1}, {"KS": 1})
    assert Anomaly.objects.get(detector="extra_card").evidence["cards"] == {"KS": 1}
    assert Anomaly.objects.get(detector="missing_card").evidence["cards"] == {"7H": 1}


def test_a_wrong_number_of_cards_is_named_card_by_card(cast, shift, sixain_in_play):
    pack = sixain_in_play
    counted = [*talon(pack)[:-6], "AS", "AS"]  # six cards short, two aces too many
    count = cards_pass(actor=cast.tailleur, pack_id=pack.pk, undealt=counted)
    assert sum(count.missing.values()) - sum(count.extra.values()) == 4
    assert count.extra == {"AS": 2}
    assert {a.detector for a in Anomaly.objects.all()} == {"missing_card", "extra_card"}


@pytest.mark.parametrize(
    ("undealt", "method", "refusal", "where"),
    [
        (["AS", "KH", "QD", "ZZ", "2C"], "counted", NotACard, "undealt[3]"),
        (["AS", "11H"], "counted", NotACard, "undealt[1]"),
        (["AS", 7], "counted", NotACard, "undealt[1]"),
        ("AS KH QD", "counted", CountInvalid, "undealt"),
        (["AS"], "guessed", CountInvalid, "method"),
    ],
)
def test_a_malformed_count_is_refused_and_records_nothing(
    cast, shift, sixain_in_play, undealt, method, refusal, where
):
    pack = sixain_in_play
    before = recorded()
    with pytest.raises(refusal) as refused:
        cards_pass(actor=cast.tailleur, pack_id=pack.pk, undealt=undealt, method=method)
    assert refused.value.where == where
    assert recorded() == before
    pack.refresh_from_db()
    assert pack.state == PackState.IN_PLAY


@pytest.fixture
def table2(cast, posted):
    """Table 2 in séance with its own chef de partie, tailleur and croupier, and a tailleur on
    duty nowhere."""
    from casino.floor.services import count_countersign, count_record

    people = {
        name: staff_create(
            actor=cast.directeur, username=name, full_name=name.replace("_", " "), roles=[role]
        )
        for name, role in (
            ("t2_chef", Role.CHEF_DE_PARTIE),
            ("t2_tailleur", Role.TAILLEUR),
            ("t2_croupier", Role.CROUPIER),
            ("idle_tailleur", Role.TAILLEUR),
        )
    }
    table = table_create(
        actor=cast.directeur,
        number=2,
        game="trente-et-quarante",
        reglement_id=posted.pk,
        min_stake=500,
        max_stake=600_000,
    )
    count = count_record(
        actor=people["t2_croupier"], table_id=table.pk, moment="opening", chips=FLOAT
    )
    count_countersign(actor=cast.directeur, count_id=count.pk)
    shift_open(
        actor=people["t2_chef"],
        table=table,
        count_id=count.pk,
        tailleur=people["t2_tailleur"],
        croupiers=[people["t2_croupier"]],
    )
    return people


@pytest.mark.parametrize(
    ("who", "error"),
    [
        ("idle_tailleur", NotOnDuty),  # a tailleur on duty nowhere
        ("t2_tailleur", NotOnDuty),  # the tailleur on duty at another table
        ("t2_chef", RoleRequired),  # the chef de partie of another table
        ("croupier", RoleRequired),  # the croupier on duty at this very table
        ("chef", RoleRequired),  # the chef de partie on duty at this very table
    ],
)
def test_only_the_tailleur_on_duty_at_that_table_passes_the_cards(
    cast, shift, sixain_in_play, table2, who, error
):
    pack = sixain_in_play
    actor = table2[who] if who in table2 else getattr(cast, who)
    before = recorded()
    with pytest.raises(error):
        cards_pass(actor=actor, pack_id=pack.pk, undealt=talon(pack), method="scanned")
    assert recorded() == before
    pack.refresh_from_db()
    assert pack.state == PackState.IN_PLAY


@pytest.mark.reglement("france-2007")
def test_a_taille_the_engine_ended_is_counted_before_it_is_shuffled_again(
    cast, shift, sixain_in_play, table2
):
    pack = sixain_in_play
    cards = sixain([], seed=11)
    play(cast, shift, cards)  # to the cut card: the settlement passes the cards
    pack.refresh_from_db()
    assert pack.state == PackState.PASSED
    assert not TalonCount.objects.exists()
    dealt = pack.cards_laid.count()
    assert cards_left(pack)[0] == 5  # the cut card lies before the last five
    before = recorded()
    with pytest.raises(TalonNotCounted, match="5 undealt cards of taille 1"):
        pack_shuffle(actor=cast.croupier, pack_id=pack.pk)
    with pytest.raises(TalonNotCounted):
        replacement_demand(actor=cast.chef, pack_id=pack.pk, demanded_by="M. Weih", side="bank")
    with pytest.raises(NotOnDuty):  # nor does a tailleur of another table count it
        cards_pass(actor=table2["t2_tailleur"], pack_id=pack.pk, undealt=cards[dealt:])
    assert recorded() == before
    count = cards_pass(
        actor=cast.tailleur, pack_id=pack.pk, undealt=cards[dealt:], method="scanned"
    )
    pack.refresh_from_db()
    assert pack.state == PackState.PASSED  # already passed: this act is the count
    assert (count.cards, count.balanced) == (cards[dealt:], True)
    kinds = list(pack.events.values_list("kind", flat=True))
    assert kinds[-2:] == ["passed", "talon_counted"]
    assert pack.events.get(kind="passed").actor == cast.croupier  # who settled the last coup
    before = recorded()
    with pytest.raises(TalonCounted, match="were recorded by"):
        cards_pass(actor=cast.tailleur, pack_id=pack.pk, undealt=cards[dealt:])
    assert recorded() == before
    pack_shuffle(actor=cast.croupier, pack_id=pack.pk)  # now the talon may be shuffled
    pack_shuffle(actor=cast.tailleur, pack_id=pack.pk)
    pack_cut(actor=cast.tailleur, pack_id=pack.pk, cut_by="M. Martin")
    pack.refresh_from_db()
    assert pack.state == PackState.IN_PLAY


def test_passing_is_refused_mid_coup_and_after_the_pack_left_play(cast, shift, sixain_in_play):
    pack = sixain_in_play
    lay_in_coups(cast, shift, ["KS", "7H"])
    before = recorded()
    with pytest.raises(IllegalPackState, match="a coup is in progress"):
        cards_pass(actor=cast.tailleur, pack_id=pack.pk, undealt=talon(pack))
    assert recorded() == before
    coup_cancel(actor=cast.chef, coup_id=Coup.objects.get().pk, reason="misdeal")
    pack_retire(actor=cast.chef, pack_id=pack.pk, counted={})
    before = recorded()
    with pytest.raises(IllegalPackState, match="retired"):
        cards_pass(actor=cast.tailleur, pack_id=pack.pk, undealt=[])
    assert recorded() == before


def play_out(cast, shift, cards: list[str]):
    """Coups with no stakes until the taille ends; the last may run out of cards inside it."""
    from casino.floor.coups import coup_close_betting, coup_lay_card, coup_open, coup_settle

    talon = iter(cards)
    while True:
        coup = coup_open(actor=cast.tailleur, shift_id=shift.pk)
        coup_close_betting(actor=cast.tailleur, coup_id=coup.pk)
        for code in talon:
            if coup_lay_card(actor=cast.tailleur, coup_id=coup.pk, code=code).coup_complete:
                break
        if coup_settle(actor=cast.croupier, coup_id=coup.pk).last:
            return


@pytest.mark.reglement("pierer-1857")
def test_an_exhausted_talon_is_shuffled_again_without_a_count_of_nothing(
    cast, shift, sixain_in_play
):
    pack = sixain_in_play
    play_out(cast, shift, sixain([], seed=5))
    pack.refresh_from_db()
    assert (pack.state, cards_left(pack)[0]) == (PackState.PASSED, 0)
    assert pack.events.get(kind="passed").details["reason"] == "exhausted"
    pack_shuffle(actor=cast.croupier, pack_id=pack.pk)  # nothing undealt: nothing to count
    assert not TalonCount.objects.exists()


def test_the_pack_page_shows_the_undealt_cards_of_each_pass(cast, shift, sixain_in_play):
    pack = sixain_in_play
    lay_in_coups(cast, shift, COUP)
    counted = talon(pack)
    counted.remove("QC")
    cards_pass(actor=cast.tailleur, pack_id=pack.pk, undealt=counted, method="scanned")
    client = Client()
    login_admin(client, cast.inspecteur)
    page = client.get(f"/admin/shoes/pack/{pack.pk}/change/").content.decode()
    assert "Talons comptés quand les cartes passent" in page
    assert " ".join(counted[:12]) in page
    assert "lues dans l&#x27;ordre" in page
    assert "manquent QC ×1" in page


# --- over the API ------------------------------------------------------------------------------


def post_pass(client, pack, body, key):
    return client.post(
        f"/api/v1/packs/{pack.pk}/pass", body, format="json", HTTP_IDEMPOTENCY_KEY=key
    )


def test_the_terminal_passes_the_cards_with_the_scanned_talon(api, cast, shift, sixain_in_play):
    pack = sixain_in_play
    lay_in_coups(cast, shift, COUP)
    body = {"undealt": talon(pack), "method": "scanned"}
    tailleur = api(cast.tailleur)
    answer = post_pass(tailleur, pack, body, "pass-1")
    assert answer.status_code == 201, answer.json()
    again = post_pass(tailleur, pack, body, "pass-1")
    assert again.json() == answer.json()
    assert TalonCount.objects.count() == 1
    found = answer.json()
    assert found["state"] == "passed"
    passed = found["timeline"][-1]
    assert (passed["kind"], passed["actor"]) == ("passed", "tailleur")
    assert (passed["details"]["method"], passed["details"]["counted"]) == ("scanned", 304)
    assert (passed["details"]["missing"], passed["details"]["extra"]) == ({}, {})
    count = TalonCount.objects.get()
    assert (count.cards, count.method, count.balanced) == (talon(pack), "scanned", True)


def test_a_count_that_does_not_reconcile_is_answered_with_the_cards_named(
    api, cast, shift, sixain_in_play
):
    pack = sixain_in_play
    counted = talon(pack)[1:]  # the first card of the talon is not there
    answer = post_pass(api(cast.tailleur), pack, {"undealt": counted}, "short")
    assert answer.status_code == 201
    details = answer.json()["timeline"][-1]["details"]
    assert (details["counted"], details["missing"], details["extra"]) == (311, {"AS": 1}, {})
    assert Anomaly.objects.get(detector="missing_card").evidence["cards"] == {"AS": 1}


@pytest.mark.parametrize(
    ("body", "code", "where"),
    [
        ({}, "missing_field", "undealt"),
        ({"undealt": [], "colour": "rouge"}, "unknown_field", "colour"),
        ({"undealt": "AS KS"}, "invalid", "undealt"),
        ({"undealt": {"AS": 1}}, "invalid", "undealt"),
        ({"undealt": ["AS", "KS", "QH", 5]}, "invalid", "undealt[3]"),
        ({"undealt": ["AS", None]}, "invalid", "undealt[1]"),
        ({"undealt": ["AS", "KS", "QUEEN"]}, "invalid", "undealt[2]"),
        ({"undealt": ["", "KS"]}, "invalid", "undealt[0]"),
        ({"undealt": ["AS", "KS", "XX"]}, "not_a_card", "undealt[2]"),
        ({"undealt": ["AS"], "method": "guessed"}, "invalid", "method"),
        ({"undealt": ["AS"] * 313}, "invalid", "undealt"),
    ],
)
def test_bad_pass_requests_get_a_clear_error_and_record_nothing(
    api, cast, sixain_in_play, body, code, where
):
    tailleur = api(cast.tailleur)  # logged in (a token issued) before the count is taken
    before = recorded()
    response = post_pass(tailleur, sixain_in_play, body, "bad")
    assert response.status_code == 400, response.json()
    assert response.json()["code"] == code
    assert response.json()["where"] == where
    assert recorded() == before
    sixain_in_play.refresh_from_db()
    assert sixain_in_play.state == PackState.IN_PLAY


def test_the_croupier_cannot_pass_the_cards_over_the_api(api, cast, sixain_in_play):
    croupier = api(cast.croupier)
    before = recorded()
    body = {"undealt": talon(sixain_in_play)}
    response = post_pass(croupier, sixain_in_play, body, "croupier")
    assert (response.status_code, response.json()["code"]) == (403, "role_required")
    assert recorded() == before
