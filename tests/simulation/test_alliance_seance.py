"""A simulated séance at the cercle table, played through the services: every deal is the replay
of its recorded document, the marks and fees balance in the ledger, the players change money and
are paid out at the cage, the dealer goes round the table, a player leaves and another sits
down, and the séance closes on its fees with its audit chain intact."""

from __future__ import annotations

import itertools
import random
from collections import Counter, defaultdict

import pytest

from audit.chain import verify_chain
from casino import clock
from casino.floor.models import Account, Duty, Movement, Shift
from casino.floor.play.alliance.models import CercleSeat, CercleSeatEnd, Deal
from casino.floor.play.alliance.selectors import deal_document
from casino.floor.services import balance, rundown
from casino.games.replay import replay
from casino.simulation.alliance import FEE, MARK, cercle_seance, cercle_table_for
from casino.simulation.seance import Crew, House
from casino.simulation.timeline import play_together
from shoes.models import PackKind, PackState

pytestmark = pytest.mark.django_db

DEALS = 6
PLAY = (Movement.Kind.MARKS_PAID, Movement.Kind.CERCLE_FEE)


def play_seance(cast, number: int, seed: int, **options) -> Shift:
    house = House(cast.directeur, cast.caissier, cast.commissaire)
    crew = Crew(cast.chef, cast.tailleur, cast.croupier)
    table = cercle_table_for(house, number)
    play = cercle_seance(table, crew, house, random.Random(seed), deals_to_play=DEALS, **options)
    play_together([(clock.now(), play)])
    return Shift.objects.get(table=table)


@pytest.fixture
def played(cast):
    return play_seance(cast, 5, 15)


def test_every_deal_of_the_seance_is_the_replay_of_its_document(played):
    found = list(Deal.objects.filter(shift=played).order_by("number"))
    assert [(d.number, d.phase) for d in found] == [(n, "over") for n in range(1, DEALS + 1)]
    for deal in found:
        assert replay(deal_document(deal)) == deal.settlement.outcome
        assert deal.mark_value == MARK


def test_the_marks_and_the_fees_net_to_zero_and_the_rundown_is_the_fees(played):
    net: Counter[str] = Counter()
    for m in Movement.objects.filter(shift=played, kind__in=PLAY).select_related("debit", "credit"):
        net[m.debit.code] += m.amount
        net[m.credit.code] -= m.amount
    fee_box = Account.objects.get(table=played.table, kind=Account.Kind.FEE_BOX)
    fees = FEE * sum(len(d.players) for d in Deal.objects.filter(shift=played))
    assert set(net) - {fee_box.code} == set(
        CercleSeat.objects.filter(shift=played).values_list("patron__code", flat=True)
    )
    assert net[fee_box.code] == fees
    assert sum(net.values()) == 0
    figures = rundown(played)
    assert (figures.opening, figures.result, figures.closing) == (0, fees, fees)
    assert figures.variance == 0
    assert balance(fee_box) == fees


def test_the_players_change_money_and_are_paid_out_at_the_cage(cast, played):
    patrons = set(CercleSeat.objects.filter(shift=played).values_list("patron__code", flat=True))
    cage = Movement.objects.filter(kind__in=[Movement.Kind.BUY_IN, Movement.Kind.CASH_OUT])
    assert set(cage.values_list("reference", flat=True)) == patrons
    assert {m.actor for m in cage} == {cast.caissier}
    paid_out = Counter(cage.filter(kind=Movement.Kind.CASH_OUT).values_list("reference", flat=True))
    assert paid_out == Counter(patrons)  # each once, when he left or after the close
    assert {balance(Account.objects.get(code=p)) for p in patrons} == {0}
    changed = sum(cage.filter(kind=Movement.Kind.BUY_IN).values_list("amount", flat=True))
    out = sum(cage.filter(kind=Movement.Kind.CASH_OUT).values_list("amount", flat=True))
    assert changed - out == rundown(played).result


def test_the_dealer_goes_round_the_table_and_a_player_leaves_for_another(played):
    found = list(Deal.objects.filter(shift=played).order_by("number"))
    seat_of = {
        (s.patron.code, s.pk): s.seat
        for s in CercleSeat.objects.filter(shift=played).select_related("patron")
    }
    assert all(d.cut_by == d.players[-2] for d in found)
    for before, after in itertools.pairwise(found):
        if set(before.players) == set(after.players):
            # The seat after the dealer's deals next: the last deal's first player.
            assert after.dealer == before.players[0]
    left = CercleSeatEnd.objects.filter(seating__shift=played, reason="left").get()
    changed = [(a, b) for a, b in itertools.pairwise(found) if set(a.players) != set(b.players)]
    assert len(changed) == 1
    before, after = changed[0]
    assert set(before.players) - set(after.players) == {left.seating.patron.code}
    assert before.opened_at < left.at < after.opened_at
    assert len(seat_of) == 5


def test_the_seance_closes_with_its_pack_counted_back_and_no_tailleur(played):
    assert played.closed_at is not None
    packs = {d.pack for d in Deal.objects.filter(shift=played)}
    assert [(p.kind, p.state) for p in packs] == [(PackKind.SINGLE, PackState.RETIRED)]
    posts = Counter(Duty.objects.filter(shift=played).values_list("post", flat=True))
    assert posts == {Duty.Post.CHEF_DE_PARTIE: 1, Duty.Post.CROUPIER: 1}
    assert not CercleSeat.objects.filter(shift=played, end__isnull=True).exists()
    assert verify_chain().ok


def test_the_same_seed_plays_the_same_seance(cast, played):
    again = play_seance(cast, 6, 15)
    documents = defaultdict(list)
    for shift in (played, again):
        for deal in Deal.objects.filter(shift=shift).order_by("number"):
            documents[shift.pk].append(deal_document(deal))
    assert documents[played.pk] == documents[again.pk]
    assert len(documents[played.pk]) == DEALS


def test_a_planted_pair_sits_at_every_deal_and_calls_each_other(cast):
    shift = play_seance(cast, 5, 15, colluders=("dora", "emil"))
    pair = {"patron:dora", "patron:emil"}
    found = list(Deal.objects.filter(shift=shift))
    assert all(pair <= set(d.players) for d in found)
    allied = [
        d
        for d in found
        if d.settlement.outcome["declarer"] in pair
        and d.settlement.outcome["ally"] in pair - {d.settlement.outcome["declarer"]}
    ]
    assert allied
