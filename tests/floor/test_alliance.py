"""Alliance at the cercle table, act by act through the services (RULES.md §3): the players
seated, each deal checked by the engine and by who is on duty, its payments between the players'
accounts, the fee into the fee box, each refusal that is evidence recorded."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction

from audit.models import Anomaly, AuditEvent
from casino.floor.models import Account, Movement
from casino.floor.play.alliance import deals
from casino.floor.play.alliance.models import CercleSeat, Deal, DealCall, DealPlay
from casino.floor.play.alliance.seats import SeatTaken, seat_leave, seat_take
from casino.floor.play.alliance.selectors import deal_document
from casino.floor.services import balance, rundown
from casino.games.replay import replay
from shoes.errors import CardRefused
from tests.floor.alliance_world import (
    FEE,
    MARK,
    cercle_pack,
    cercle_seance,
    cercle_table,
    codes,
    play_act_by_act,
    sheet,
    simulated,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def seance(cast, posted):
    shift = cercle_seance(cast, cercle_table(cast))
    cercle_pack(cast, shift)
    return shift


def test_a_seance_of_deals_equals_the_replay_of_each_deals_document(cast, seance):
    before = {
        c: balance(Account.objects.get(code=c)) for c in codes(("ana", "ben", "carl", "dora"))
    }
    played = [play_act_by_act(cast, seance, simulated(seed)) for seed in (1, 2, 3)]
    fee_box = Account.objects.get(table=seance.table, kind=Account.Kind.FEE_BOX)
    total = {c: 0 for c in before}
    for deal in played:
        assert deal.phase == "over"
        result = replay(deal_document(deal))
        assert result == deal.settlement.outcome
        moved = Movement.objects.filter(reference=f"deal:{deal.pk}")
        paid = [
            (m.credit.code, m.debit.code, m.amount)
            for m in moved.filter(kind=Movement.Kind.MARKS_PAID).order_by("id")
        ]
        assert paid == [
            (p["from"], p["to"], p["marks"] * MARK) for p in result["payments"] if p["marks"]
        ]
        fees = moved.filter(kind=Movement.Kind.CERCLE_FEE)
        assert sorted(f.credit.code for f in fees) == sorted(deal.players)
        assert {f.debit_id for f in fees} == {fee_box.pk}
        assert {f.amount for f in fees} == {FEE}
        for player, money in result["money"].items():
            total[player] += money
    for player, start in before.items():
        assert balance(Account.objects.get(code=player)) == start + total[player]
    assert balance(fee_box) == 3 * 4 * FEE == rundown(seance).result
    # The players' accounts net to zero against each other plus the fees.
    assert sum(total.values()) == -balance(fee_box)


def test_a_whole_deal_from_its_paper_sheet_is_recorded_through_the_same_acts(cast, seance):
    sim = simulated(4)
    deal = deals.deal_record(actor=cast.croupier, shift_id=seance.pk, sheet=sheet(sim))
    assert deal.phase == "over"
    assert deal.settlement.outcome["marks"] == {
        f"patron:{k}": v for k, v in sim.outcome.marks.items()
    }
    acts = AuditEvent.objects.filter(subject_id=str(deal.pk), action__startswith="deal.")
    assert acts.filter(action="deal.called").count() == len(sim.calls)
    assert acts.filter(action="deal.card_played").count() == 48


def test_a_card_not_following_suit_is_refused_with_the_rule_and_recorded(cast, seance):
    sim = simulated(5)
    doc = sheet(sim)
    players = doc["players"]
    deal = deals.deal_open(
        actor=cast.croupier, shift_id=seance.pk, dealer=players[-1], cut_by=players[-2]
    )
    state = deals.deal_cards(actor=cast.croupier, deal_id=deal.pk, cards=doc["cards"])
    caller = state.next_caller
    for word in doc["auction"]:
        caller = deals.deal_call(
            actor=cast.croupier, deal_id=deal.pk, player=caller, call=word
        ).next_caller
    deals.deal_declare(actor=cast.croupier, deal_id=deal.pk, contract=doc["contract"])
    state = deals.deal_of(deal)
    lead = state.legal_cards()[0]
    deals.deal_play(actor=cast.croupier, deal_id=deal.pk, player=players[0], code=str(lead))
    state = deals.deal_of(deal)
    hand = state.hands[1]
    off = [c for c in hand if c.suit is not lead.suit]
    if len(off) == len(hand):
        pytest.skip("this deal's second player cannot follow")
    with pytest.raises(deals.MustFollowSuit) as refused:
        deals.deal_play(actor=cast.croupier, deal_id=deal.pk, player=players[1], code=str(off[0]))
    assert refused.value.code == "must_follow_suit"
    assert DealPlay.objects.filter(deal=deal).count() == 1
    assert AuditEvent.objects.filter(action="deal.card_refused").count() == 1
    with pytest.raises(deals.OutOfTurn):
        deals.deal_play(actor=cast.croupier, deal_id=deal.pk, player=players[2], code=str(hand[0]))
    assert AuditEvent.objects.filter(action="deal.out_of_turn").count() == 1


def test_a_deal_with_a_foreign_card_is_refused_and_recorded(cast, seance):
    doc = sheet(simulated(6))
    players = doc["players"]
    deal = deals.deal_open(
        actor=cast.croupier, shift_id=seance.pk, dealer=players[-1], cut_by=players[-2]
    )
    cards = list(doc["cards"])
    cards[30] = cards[3]
    with pytest.raises(CardRefused) as refused:
        deals.deal_cards(actor=cast.croupier, deal_id=deal.pk, cards=cards)
    assert refused.value.code == "foreign_card"
    assert Anomaly.objects.filter(detector="foreign_card").count() == 1
    deal.refresh_from_db()
    assert deal.phase == "dealing"


def test_a_seat_taken_twice_is_refused_and_nothing_is_recorded(cast, seance):
    from casino.floor.cage import patron_buy_in

    patron_buy_in(actor=cast.caissier, patron="emil", amount=1000)
    seats = CercleSeat.objects.count()
    with pytest.raises(SeatTaken):
        seat_take(actor=cast.croupier, shift_id=seance.pk, seat=1, patron="emil")
    with pytest.raises(SeatTaken):
        seat_take(actor=cast.croupier, shift_id=seance.pk, seat=5, patron="ana")
    assert CercleSeat.objects.count() == seats
    seat_take(actor=cast.croupier, shift_id=seance.pk, seat=5, patron="emil")
    seat_leave(actor=cast.croupier, shift_id=seance.pk, patron="emil")


def test_the_records_of_a_deal_are_never_edited(cast, seance):
    deal = play_act_by_act(cast, seance, simulated(7))
    for table in ("floor_dealcall", "floor_dealplay", "floor_dealsettlement"):
        with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(f"DELETE FROM {table} WHERE deal_id = %s", [deal.pk])
    with pytest.raises(DatabaseError), transaction.atomic():
        Deal.objects.filter(pk=deal.pk).update(phase="play")
    assert DealCall.objects.filter(deal=deal).exists()


def test_a_deal_in_play_is_never_made_over_without_its_settlement(cast, seance):
    doc = sheet(simulated(8))
    players = doc["players"]
    deal = deals.deal_open(
        actor=cast.croupier, shift_id=seance.pk, dealer=players[-1], cut_by=players[-2]
    )
    with pytest.raises(DatabaseError), transaction.atomic():
        Deal.objects.filter(pk=deal.pk).update(phase="auction")  # forward, but not dealt: allowed
        Deal.objects.filter(pk=deal.pk).update(phase="contract")
        Deal.objects.filter(pk=deal.pk).update(phase="play")
        Deal.objects.filter(pk=deal.pk).update(phase="over")
    deal.refresh_from_db()
    assert deal.phase == "dealing"


def test_a_seated_player_is_paid_out_only_once_he_has_left(cast, seance):
    from casino.errors import Conflict
    from casino.floor.cage import patron_cash_out

    movements = Movement.objects.count()
    with pytest.raises(Conflict):
        patron_cash_out(actor=cast.caissier, patron="ana")
    assert Movement.objects.count() == movements
    seat_leave(actor=cast.croupier, shift_id=seance.pk, patron="ana")
    patron_cash_out(actor=cast.caissier, patron="ana")
    assert balance(Account.objects.get(code="patron:ana")) == 0
