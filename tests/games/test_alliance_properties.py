"""Invariants of Alliance over generated deals (hypothesis, bounded to seconds; thousands of deals
in all): marks sum to zero, every card is played once, a trick goes to the highest trump or the
highest card of the suit led, the replay of a generated deal reproduces it."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from casino.games.alliance import (
    TO_WIN,
    TRICKS,
    AllianceDeal,
    LeverContract,
    render,
)
from casino.games.cards import ONE_PACK, Card, Suit
from casino.games.errors import AllianceFault
from casino.games.reglement import Reglement, reglement
from casino.games.replay import replay
from casino.games.simulator import SimulatedAlliance, simulate_alliance_deal

seeds = st.integers(min_value=0, max_value=2**32 - 1)
counts = st.sampled_from([4, 5, 6])
styles = st.sampled_from(["random", "greedy"])
small = st.integers(min_value=0, max_value=9)


@st.composite
def rules(draw: st.DrawFn) -> dict[str, Any]:
    """An Alliance règlement as a replay names it: some keys of each table overridden."""
    overrides = {
        "alliance_values": draw(
            st.dictionaries(st.sampled_from(["alliance", "lever_forced", "lever", "solo"]), small)
        ),
        "alliance_honours": draw(st.dictionaries(st.sampled_from(["fahne", "J", "Q", "K"]), small)),
        "alliance_bonuses": draw(
            st.dictionaries(st.sampled_from(["first_six", "all", "neutral", "both_lose"]), small)
        ),
        "cercle_fee": draw(st.integers(min_value=0, max_value=500)),
    }
    return {"preset": draw(st.sampled_from(["baden-1854", "pierer-1857"])), "overrides": overrides}


# The order of RULES.md 3.4 written out once more, apart from the engine's.
TRUMP = "AKQJT98765432"
RED = "KQJAT98765432"
BLACK = "KQJT98765432A"


def beats(c: Card, other: Card, trumps: Suit) -> bool:
    if c.suit is not other.suit:
        return c.suit is trumps
    order = TRUMP if c.suit is trumps else RED if c.suit in (Suit.HEARTS, Suit.DIAMONDS) else BLACK
    return order.index(c.rank.value) < order.index(other.rank.value)


def check_deal(sim: SimulatedAlliance) -> None:
    o = sim.outcome
    n = len(sim.players)
    # Marks sum to zero and are the payments; money is marks at the mark value less the fee.
    assert sum(o.marks.values()) == 0
    net: Counter[str] = Counter()
    for p in o.payments:
        assert p.marks > 0
        assert p.payer != p.payee
        net[p.payer] -= p.marks
        net[p.payee] += p.marks
    assert all(o.marks[name] == net[name] for name in sim.players)
    assert o.money == {k: m * sim.mark_value - o.fee for k, m in o.marks.items()}
    # Every card once: the tricks and what lies (the table, or the discards after a take).
    played = [c for t in o.tricks for c in t.cards]
    take = isinstance(sim.contract, LeverContract) and sim.contract.take
    lying = list(o.discards) if take else list(o.table.cards)
    assert Counter(played + lying) == Counter(ONE_PACK)
    assert len(o.tricks) == TRICKS[n]
    assert sum(o.taken.values()) == TRICKS[n]
    # Each player played his own hand (the declarer's after a take).
    for index, name in enumerate(sim.players):
        mine = [
            c for t in o.tricks for c, who in zip(t.cards, t.players, strict=True) if who == name
        ]
        if take and name == o.declarer:
            assert set(mine) == (set(o.hands[index]) | set(o.table.cards)) - set(o.discards)
        else:
            assert Counter(mine) == Counter(o.hands[index])
    # A trick goes to the highest trump, else the highest card of the suit led; its winner leads.
    leader = sim.players[0]
    for t in o.tricks:
        assert t.leader == leader
        best = 0
        for i, c in enumerate(t.cards):
            if beats(c, t.cards[best], o.trumps):
                best = i
        assert t.winner == t.players[best]
        leader = t.winner
    # Who wins, as RULES.md 3.5 says, without résistance.
    if o.resister is None:
        side = {o.declarer} | ({o.ally} if o.ally else set())
        mine_tricks = sum(o.taken[p] for p in side)
        if mine_tricks >= TO_WIN[n]:
            assert set(o.winners) == side
        elif 2 * mine_tricks < TRICKS[n]:
            assert set(o.winners) == set(sim.players) - side
        losers = set(sim.players) - set(o.winners)
        # Each loser pays each winner the same whole.
        owed = Counter()
        for p in o.payments:
            assert p.payer in losers
            assert p.payee in o.winners
            owed[(p.payer, p.payee)] += p.marks
        assert len(set(owed.values())) <= 1
    else:
        assert len(o.winners) <= 1
        assert set(o.neutrals) == set(sim.players) - {o.declarer, o.resister}


@settings(max_examples=200, deadline=None)
@given(seed=seeds, players=counts, style=styles, spec=rules(), mark_value=small)
def test_generated_deals_keep_the_invariants(seed, players, style, spec, mark_value):
    sim = simulate_alliance_deal(
        seed=seed, players=players, style=style, reglement=reglement(spec), mark_value=mark_value
    )
    check_deal(sim)


def test_two_thousand_seeded_deals_keep_the_invariants():
    """A fixed sweep (about two seconds): every game and outcome turns up."""
    games = Counter()
    for seed in range(2000):
        sim = simulate_alliance_deal(
            seed=seed, players=4 + seed % 3, style=("random", "greedy")[seed % 2]
        )
        check_deal(sim)
        o = sim.outcome
        games[(o.game.value, o.forced, o.resister is not None, len(o.winners))] += 1
    kinds = {key[:3] for key in games}
    assert {("alliance", False, False), ("lever", True, False), ("lever", False, False)} <= kinds
    assert {("solo", False, False), ("solo", False, True)} <= kinds
    assert any(key[2] and key[3] == 0 for key in games)  # both lost a résistance


@settings(max_examples=200, deadline=None)
@given(seed=seeds, players=counts, spec=rules())
def test_the_replay_of_a_generated_deal_reproduces_it(seed, players, spec):
    sim = simulate_alliance_deal(seed=seed, players=players, reglement=reglement(spec))
    assert replay(sim.replay_document(spec)) == render(sim.outcome)


@settings(max_examples=150, deadline=None)
@given(seed=seeds, players=counts, cut=st.integers(min_value=0, max_value=48))
def test_a_deal_saved_and_restored_plays_on_the_same(seed, players, cut):
    sim = simulate_alliance_deal(seed=seed, players=players)
    played = [c for t in sim.tricks for c in t]
    cut = min(cut, len(played))
    table = start(sim)
    for c in played[:cut]:
        table.play(c)
    again = AllianceDeal.from_json(table.to_json(), sim.reglement)
    assert again.to_json() == table.to_json()
    assert [again.play(c) for c in played[cut:]] == [table.play(c) for c in played[cut:]]


def start(sim: SimulatedAlliance) -> AllianceDeal:
    table = AllianceDeal(sim.players, sim.reglement, mark_value=sim.mark_value)
    for c in sim.cards:
        table.receive(c)
    for word in sim.calls:
        table.call(word)
    table.declare(sim.contract)
    return table


@settings(max_examples=150, deadline=None)
@given(seed=seeds, players=counts)
def test_an_illegal_card_is_refused_and_changes_nothing(seed, players):
    sim = simulate_alliance_deal(seed=seed, players=players)
    rng = random.Random(seed)
    table = start(sim)
    for c in (c for t in sim.tricks for c in t):
        legal = set(table.legal_cards())
        wrong = [x for x in ONE_PACK if x not in legal]
        before = table.to_json()
        bad = rng.choice(wrong)
        try:
            table.play(bad)
        except AllianceFault:
            pass
        else:
            raise AssertionError(f"{bad} was accepted")
        assert table.to_json() == before
        table.play(c)


def test_the_generator_is_seeded():
    one = simulate_alliance_deal(seed=7, reglement=Reglement())
    assert one == simulate_alliance_deal(seed=7, reglement=Reglement())
    assert one.cards != simulate_alliance_deal(seed=8).cards


@settings(max_examples=100, deadline=None)
@given(pack=st.permutations(list(ONE_PACK)), players=counts)
def test_a_pack_received_whole_is_the_pack_received_card_by_card(pack, players):
    """``play_deal`` receives its pack, checked whole, at once (``_receive_pack``): the deal is
    the one 52 ``receive`` make, card by card."""
    names = [f"p{i}" for i in range(players)]
    by_card = AllianceDeal(names)
    for c in pack:
        by_card.receive(c)
    whole = AllianceDeal(names)
    whole._receive_pack(pack)
    assert whole.to_json() == by_card.to_json()
    assert (whole.hands, whole.table, whole.phase) == (by_card.hands, by_card.table, by_card.phase)
    assert (whole._seen, whole._dealt) == (by_card._seen, by_card._dealt)


@settings(max_examples=150, deadline=None)
@given(seed=seeds, players=counts, swaps=st.integers(min_value=0, max_value=3), data=st.data())
def test_a_trick_played_whole_is_its_cards_played_one_by_one(seed, players, swaps, data):
    """``play_all`` plays each trick whole (``play_deal``, the floor's records): the deal is the
    one its cards played one by one make, and a trick with a card ``play`` refuses (swapped with
    another card of the deal) is refused at the same card, for the same reason, the cards before
    it played. The cards of a deal in progress, given at once, are played as one by one too."""
    sim = simulate_alliance_deal(seed=seed, players=players)
    tricks = [list(t) for t in sim.tricks]
    for _ in range(swaps):
        i, j = (data.draw(st.integers(min_value=0, max_value=len(tricks) - 1)) for _ in "ij")
        a, b = (data.draw(st.integers(min_value=0, max_value=players - 1)) for _ in "ab")
        tricks[i][a], tricks[j][b] = tricks[j][b], tricks[i][a]
    whole, by_card = start(sim), start(sim)

    def fault(table: AllianceDeal, trick: list[Card], at_once: bool) -> tuple[str, str] | None:
        try:
            if at_once:
                table.play_all(trick)
            else:
                for c in trick:
                    table.play(c)
        except AllianceFault as exc:
            return exc.code, exc.message
        return None

    for trick in tricks:
        refused = fault(whole, trick, at_once=True)
        assert refused == fault(by_card, trick, at_once=False)
        assert whole.to_json() == by_card.to_json()
        if refused is not None:
            break
    assert whole.tricks == by_card.tricks
    assert whole.outcome == by_card.outcome
    cut = data.draw(st.integers(min_value=0, max_value=52))
    played = [c for t in sim.tricks for c in t][:cut]
    at_once, one_by_one = start(sim), start(sim)
    at_once.play_all(played)
    for c in played:
        one_by_one.play(c)
    assert at_once.to_json() == one_by_one.to_json()
    assert at_once.outcome == one_by_one.outcome
