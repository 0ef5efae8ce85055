"""Pharao at the table, act by act through the services (RULES.md §2): each act checked by the
engine and by who is on duty, each movement in the ledger, each refusal that is evidence recorded."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction

from audit.models import Anomaly, AuditEvent
from casino.errors import RoleRequired, SegregationViolation, WrongGame
from casino.floor.models import Account, Movement
from casino.floor.play.pharao.models import (
    PharaoApproval,
    PharaoDraw,
    PharaoStake,
    PharaoStakeAct,
    Taille,
)
from casino.floor.play.pharao.selectors import standing, taille_document
from casino.floor.play.pharao.tailles import (
    BottomCardOutOfPlace,
    FalseParoli,
    NotApproved,
    RankExhausted,
    StakeNotStanding,
    WrongSide,
    pharao_approval_give,
    pharao_stake_collect,
    pharao_stake_mark,
    pharao_stake_place,
    pharao_stake_raise,
    pharao_stake_reduce,
    pharao_stake_withdraw,
    taille_lay_card,
    taille_open,
)
from casino.floor.services import LateStake, balance, duty_assign, duty_end, shift_close
from casino.games.replay import replay
from casino.people.roles import Role
from shoes.errors import CardRefused, IllegalPackState
from shoes.models import CardLaid, PackEvent, PackKind, PackState
from shoes.services import cards_pass, pack_open
from tests.actors import hire
from tests.conftest import open_seance, signed_count
from tests.floor.pharao_world import pack_order, pharao_table, single_pack_in_play

pytestmark = pytest.mark.django_db

BOTTOM = "KS"
# Draw 1: 3C left (the bank's), 7H right (the players'); draw 2: 2D | 9S; draw 3: 7C | 4D.
ORDER = pack_order(["3C", "7H", "2D", "9S", "7C", "4D"], BOTTOM)


@pytest.fixture
def seance(cast, posted):
    return open_seance(cast, pharao_table(cast))


@pytest.fixture
def pack(cast, seance):
    return single_pack_in_play(cast, seance)


@pytest.fixture
def taille(cast, seance, pack):
    return taille_open(actor=cast.tailleur, shift_id=seance.pk, bottom_card=BOTTOM)


def lay(cast, taille, count, order=ORDER):
    """Lay the next ``count`` cards of ``order``; the last answer."""
    done = len(CardLaid.objects.filter(pack=taille.pack, taille=taille.pack_taille))
    laid = None
    for code in order[done : done + count]:
        laid = taille_lay_card(actor=cast.tailleur, taille_id=taille.pk, code=code)
    return laid


def place(cast, taille, ref, rank, amount, holder="1"):
    return pharao_stake_place(
        actor=cast.croupier, taille_id=taille.pk, ref=ref, holder=holder, rank=rank, amount=amount
    )


def kinds(stake):
    return [
        (m.kind, m.amount)
        for m in Movement.objects.filter(
            reference=f"taille:{stake.taille_id}:pharao_stake:{stake.pk}"
        ).order_by("id")
    ]


def recorded():
    return (
        PharaoStake.objects.count(),
        PharaoStakeAct.objects.count(),
        PharaoApproval.objects.count(),
        Movement.objects.count(),
        CardLaid.objects.count(),
    )


# --- the taille opened -------------------------------------------------------------------------


def test_a_taille_opens_on_the_single_pack_in_play_with_its_bottom_card_shown(cast, taille, pack):
    assert (taille.bottom_card, taille.pack, taille.number, taille.phase) == (
        BOTTOM,
        pack,
        1,
        "dealing",
    )
    event = AuditEvent.objects.filter(action="taille.opened").get()
    assert event.subject_id == str(taille.pk)
    assert '"bottom_card":"KS"' in event.payload


def test_a_taille_at_a_trente_et_quarante_table_is_refused(cast, shift, sixain_in_play):
    before = AuditEvent.objects.count()
    with pytest.raises(WrongGame, match="Trente-et-Quarante table, this act is Pharao's"):
        taille_open(actor=cast.tailleur, shift_id=shift.pk, bottom_card="KS")
    assert not Taille.objects.exists()
    assert AuditEvent.objects.count() == before


def test_only_the_tailleur_on_duty_opens_a_taille(cast, seance, pack):
    with pytest.raises(RoleRequired):
        taille_open(actor=cast.croupier, shift_id=seance.pk, bottom_card="KS")


# --- stakes, wins, marks ------------------------------------------------------------------------


def test_a_winning_stake_is_paid_and_a_paroli_puts_the_winnings_back(cast, taille):
    stake = place(cast, taille, "p1", "7", 1000)
    laid = lay(cast, taille, 2)  # 3C | 7H
    assert [(s.stake, s.outcome.value, s.paid) for s in laid.settled.settlements] == [
        (str(stake.pk), "won", 1000)
    ]
    act = pharao_stake_mark(actor=cast.croupier, stake_id=stake.pk, move="paroli")
    assert (act.mark, act.put) == ("paroli", 1000)
    assert kinds(stake) == [("stake_placed", 1000), ("win_paid", 1000), ("winnings_ridden", 1000)]
    assert standing(taille)[stake.pk]["riding"] == 2000
    lay(cast, taille, 4)  # 2D | 9S, then 7C | 4D: the paroli loses all that rides
    assert kinds(stake)[-1] == ("loss_collected", 2000)
    assert balance(Account.objects.get(code="T3:layout")) == 0


def test_an_appe_loses_only_what_rides_and_returns_the_protected_stake(cast, taille):
    stake = place(cast, taille, "p1", "7", 1000)
    lay(cast, taille, 2)
    pharao_stake_mark(actor=cast.croupier, stake_id=stake.pk, move="appe")
    lay(cast, taille, 4)
    assert kinds(stake)[-2:] == [("loss_collected", 1000), ("stake_returned", 1000)]


def test_a_won_stake_is_collected_before_the_next_draw_not_after(cast, taille):
    won, other = place(cast, taille, "w", "7", 500), place(cast, taille, "o", "5", 500)
    lay(cast, taille, 2)
    pharao_stake_collect(actor=cast.croupier, stake_id=won.pk)
    assert kinds(won)[-1] == ("stake_returned", 500)
    with pytest.raises(NotApproved, match="did not win"):
        pharao_stake_collect(actor=cast.croupier, stake_id=other.pk)


def test_a_false_paroli_is_refused_and_recorded(cast, taille):
    stake = place(cast, taille, "p1", "5", 1000)
    lay(cast, taille, 2)  # 5 neither wins nor loses
    before = recorded()
    with pytest.raises(FalseParoli, match="false paroli"):
        pharao_stake_mark(actor=cast.croupier, stake_id=stake.pk, move="paroli")
    assert recorded() == before
    anomaly = Anomaly.objects.get(detector="false_paroli")
    assert (anomaly.evidence["ref"], anomaly.evidence["move"]) == ("p1", "paroli")
    assert AuditEvent.objects.filter(action="pharao.false_paroli_refused").count() == 1


def test_a_second_mark_after_one_win_is_a_false_paroli(cast, taille):
    stake = place(cast, taille, "p1", "7", 1000)
    lay(cast, taille, 2)
    pharao_stake_mark(actor=cast.croupier, stake_id=stake.pk, move="paroli")
    with pytest.raises(FalseParoli):
        pharao_stake_mark(actor=cast.croupier, stake_id=stake.pk, move="appe")
    assert PharaoStakeAct.objects.count() == 1


def test_a_stake_is_changed_only_after_the_draw_it_was_placed_for(cast, taille):
    stake = place(cast, taille, "p1", "5", 1000)
    with pytest.raises(StakeNotStanding):
        pharao_stake_raise(actor=cast.croupier, stake_id=stake.pk, amount=100)
    lay(cast, taille, 2)
    act = pharao_stake_raise(actor=cast.croupier, stake_id=stake.pk, amount=100)
    assert (act.put, kinds(stake)[-1]) == (100, ("stake_placed", 100))


def test_a_stake_on_an_exhausted_rank_is_refused(cast, seance, pack):
    # KS shown at the bottom, the three other kings in the first two draws.
    order = pack_order(["KH", "2C", "KD", "KC"], "KS")
    taille = taille_open(actor=cast.tailleur, shift_id=seance.pk, bottom_card="KS")
    lay(cast, taille, 4, order)
    with pytest.raises(RankExhausted, match="exhausted"):
        place(cast, taille, "k", "K", 500)
    assert not PharaoStake.objects.exists()


# --- the banker's approval ------------------------------------------------------------------------


def test_a_reduction_without_the_chef_de_partie_approval_is_refused(cast, taille):
    stake = place(cast, taille, "p1", "5", 1000)
    lay(cast, taille, 2)
    before = recorded()
    with pytest.raises(NotApproved, match="banker's approval"):
        pharao_stake_reduce(actor=cast.croupier, stake_id=stake.pk, amount=400)
    with pytest.raises(NotApproved):
        pharao_stake_withdraw(actor=cast.croupier, stake_id=stake.pk)
    assert recorded() == before


def test_an_approved_reduction_is_made_once_and_returns_the_amount(cast, taille):
    stake = place(cast, taille, "p1", "5", 1000)
    lay(cast, taille, 2)
    approval = pharao_approval_give(actor=cast.chef, stake_id=stake.pk, act="reduce", amount=400)
    with pytest.raises(NotApproved):  # the approval is for 400, not for 300
        pharao_stake_reduce(actor=cast.croupier, stake_id=stake.pk, amount=300)
    act = pharao_stake_reduce(actor=cast.croupier, stake_id=stake.pk, amount=400)
    assert (act.approval, act.returned, kinds(stake)[-1]) == (
        approval,
        400,
        ("stake_returned", 400),
    )
    assert standing(taille)[stake.pk]["base"] == 600
    with pytest.raises(NotApproved):  # used up
        pharao_stake_reduce(actor=cast.croupier, stake_id=stake.pk, amount=400)


def test_an_approval_lapses_when_the_next_draw_begins(cast, taille):
    stake = place(cast, taille, "p1", "5", 1000)
    lay(cast, taille, 2)
    pharao_approval_give(actor=cast.chef, stake_id=stake.pk, act="withdraw")
    lay(cast, taille, 2)
    with pytest.raises(NotApproved):
        pharao_stake_withdraw(actor=cast.croupier, stake_id=stake.pk)


def test_whoever_recorded_the_stake_never_approves_its_reduction(cast, seance, taille):
    # A croupier who is also a chef de partie records the stake, then takes the table over.
    both = hire(cast.directeur, "polyvalent", Role.CROUPIER, Role.CHEF_DE_PARTIE)
    duty = duty_assign(actor=cast.chef, shift_id=seance.pk, person=both, post="croupier")
    stake = pharao_stake_place(
        actor=both, taille_id=taille.pk, ref="p1", holder="2", rank="5", amount=1000
    )
    with pytest.raises(RoleRequired):  # a croupier approves nothing
        pharao_approval_give(actor=cast.croupier, stake_id=stake.pk, act="withdraw")
    duty_end(actor=cast.chef, duty_id=duty.pk, reason="takes the table")
    duty_assign(actor=cast.chef, shift_id=seance.pk, person=both, post="chef_de_partie")
    lay(cast, taille, 2)
    with pytest.raises(SegregationViolation, match="another approves it"):
        pharao_approval_give(actor=both, stake_id=stake.pk, act="withdraw")
    assert not PharaoApproval.objects.exists()


def test_the_database_refuses_an_approval_by_whoever_recorded_the_stake(cast, taille):
    stake = place(cast, taille, "p1", "5", 1000)
    with pytest.raises(DatabaseError, match="does not approve it"), transaction.atomic():
        PharaoApproval.objects.create(
            stake=stake, act="withdraw", draw=1, approved_by=cast.croupier, at=stake.placed_at
        )


# --- changes of stake while a draw is dealt ---------------------------------------------------------


def test_a_change_of_stake_between_a_draws_first_card_and_its_settlement_is_late(cast, taille):
    stake = place(cast, taille, "p1", "7", 1000)
    lay(cast, taille, 2)
    lay(cast, taille, 1)  # 2D on the left: draw 2 has begun
    before = recorded()
    with pytest.raises(LateStake, match="draw 2 has begun"):
        place(cast, taille, "late", "9", 500)
    with pytest.raises(LateStake):
        pharao_stake_mark(actor=cast.croupier, stake_id=stake.pk, move="paroli")
    with pytest.raises(LateStake):
        pharao_stake_raise(actor=cast.croupier, stake_id=stake.pk, amount=100)
    assert recorded() == before
    anomalies = Anomaly.objects.filter(detector="late_stake")
    assert [a.evidence["what"] for a in anomalies.order_by("id")] == [
        "a stake",
        "a paroli",
        "a raise",
    ]
    assert {a.evidence["draw"] for a in anomalies} == {2}


# --- the cards --------------------------------------------------------------------------------------


def test_a_card_the_pack_cannot_hold_is_refused_and_recorded(cast, taille):
    lay(cast, taille, 2)
    with pytest.raises(CardRefused, match="foreign card"):
        taille_lay_card(actor=cast.tailleur, taille_id=taille.pk, code="7H")
    assert CardLaid.objects.count() == 2
    assert PackEvent.objects.filter(kind=PackEvent.Kind.FOREIGN_CARD).count() == 1
    assert Anomaly.objects.filter(detector="foreign_card").count() == 1


def test_the_bottom_card_out_of_its_place_is_refused_and_recorded(cast, taille):
    with pytest.raises(BottomCardOutOfPlace, match="bottom card"):
        taille_lay_card(actor=cast.tailleur, taille_id=taille.pk, code=BOTTOM)
    assert not CardLaid.objects.exists()
    anomaly = Anomaly.objects.get(detector="bottom_card")
    assert (anomaly.evidence["card"], anomaly.evidence["position"]) == (BOTTOM, 1)


def test_the_last_card_is_the_bottom_card_shown_any_other_is_foreign(cast, taille):
    lay(cast, taille, 51)
    with pytest.raises(CardRefused, match="foreign card"):
        taille_lay_card(actor=cast.tailleur, taille_id=taille.pk, code="QS")  # came out already
    laid = taille_lay_card(actor=cast.tailleur, taille_id=taille.pk, code=BOTTOM)
    assert (laid.draw, laid.side.value, laid.next_side) == (26, "players", None)


def test_a_card_announced_for_the_wrong_side_is_refused(cast, taille):
    with pytest.raises(WrongSide, match="waits for its left card, the bank's"):
        taille_lay_card(actor=cast.tailleur, taille_id=taille.pk, code="3C", side="players")
    laid = taille_lay_card(actor=cast.tailleur, taille_id=taille.pk, code="3C", side="bank")
    assert (laid.side.value, laid.next_side.value) == ("bank", "players")


# --- the whole taille ---------------------------------------------------------------------------------


def test_a_taille_ends_with_the_standing_stakes_returned_and_the_pack_passed(
    cast, seance, taille, pack
):
    standing_stake = place(cast, taille, "s", "J", 700)  # JS is the 11th card: it comes in draw 9
    lay(cast, taille, 52)
    taille.refresh_from_db()
    pack.refresh_from_db()
    assert (taille.phase, pack.state) == ("ended", PackState.PASSED)
    assert PharaoDraw.objects.filter(taille=taille).count() == 26
    assert PharaoDraw.objects.get(taille=taille, number=26).players_card == BOTTOM
    assert balance(Account.objects.get(code="T3:layout")) == 0
    assert standing_stake.settlements.exists()
    # The recorded taille replays as it was settled.
    document = replay(taille_document(taille))
    assert document["refused"] == []
    assert len(document["draws"]) == 26
    # The pack passed with nothing left to count, and is cut again for the next taille.
    cards_pass(actor=cast.tailleur, pack_id=pack.pk, undealt=[])


def test_no_closing_and_no_passing_while_a_taille_is_dealt(cast, seance, taille, pack):
    lay(cast, taille, 2)
    with pytest.raises(IllegalPackState, match="taille is in progress"):
        cards_pass(actor=cast.tailleur, pack_id=pack.pk, undealt=[])
    count = signed_count(cast, seance.table, "closing", {"10000": 40})
    with pytest.raises(Exception, match="taille in progress"):
        shift_close(actor=cast.chef, shift=seance, count_id=count.pk)


def test_a_sixain_is_not_opened_at_a_pharao_table(cast, seance, verified):
    sixain = verified(PackKind.SIXAIN)
    with pytest.raises(Exception, match="single pack"):
        pack_open(actor=cast.chef, pack_id=sixain.pk, shift_id=seance.pk)


# --- history is never edited -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "table",
    ["floor_pharaostake", "floor_pharaostakeact", "floor_pharaodraw", "floor_pharaosettlement"],
)
def test_the_database_refuses_to_edit_pharao_history(cast, taille, table):
    stake = place(cast, taille, "p1", "7", 1000)
    lay(cast, taille, 2)
    pharao_stake_mark(actor=cast.croupier, stake_id=stake.pk, move="paroli")
    for statement in (f"UPDATE {table} SET id = id", f"DELETE FROM {table}"):
        with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(statement)


def test_a_taille_moves_forward_only(cast, taille):
    lay(cast, taille, 52)
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE floor_taille SET phase = 'dealing' WHERE id = %s", [taille.pk])
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE floor_taille SET bottom_card = 'AS' WHERE id = %s", [taille.pk])
    taille.refresh_from_db()
    assert (taille.phase, taille.bottom_card) == ("ended", BOTTOM)


def test_a_stake_outside_the_limits_is_refused_with_the_code_of_every_table(cast, taille):
    """Above the table's maximum or below its minimum: ``stake_refused``, as at a
    Trente-et-Quarante table (one vocabulary), the message saying which limit; nothing recorded."""
    from casino.floor.services import StakeRefused
    from tests.floor.pharao_world import MAX_STAKE, MIN_STAKE

    for amount in (MAX_STAKE + 1, MIN_STAKE - 1):
        with pytest.raises(StakeRefused) as refused:
            pharao_stake_place(
                actor=cast.croupier,
                taille_id=taille.pk,
                ref=f"x{amount}",
                holder="4",
                rank="3",
                amount=amount,
            )
        assert (refused.value.code, refused.value.where) == ("stake_refused", "amount")
    assert not taille.stakes.exists()


def test_a_reference_already_in_the_taille_is_refused_before_its_holder(cast, taille):
    """As at a Trente-et-Quarante table: the reference, asked with the accounts, is refused
    first (``ref``), even for a new seat, whose account is not made; a holder who is nobody is
    ``no_holder``. Nothing recorded."""
    from casino.errors import Conflict
    from casino.floor.play.pharao.tailles import NoHolder

    place(cast, taille, "a", "3", 1000)
    before = (recorded(), Account.objects.count())
    for holder in ("7", ""):
        with pytest.raises(Conflict, match="'a' is already in taille") as taken:
            place(cast, taille, "a", "5", 1000, holder=holder)
        assert taken.value.where == "ref"
    with pytest.raises(NoHolder) as nobody:
        place(cast, taille, "b", "5", 1000, holder="")
    assert (nobody.value.code, nobody.value.where) == ("no_holder", "holder")
    assert (recorded(), Account.objects.count()) == before
