"""Invariants over random shoes and stakes (hypothesis), on every preset."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from casino.games.cards import SIXAIN, card
from casino.games.errors import ForeignCard
from casino.games.reglement import PRESETS, reglement
from casino.games.replay import replay
from casino.games.simulator import simulate_taille
from casino.games.trente_et_quarante import (
    CoupDeal,
    deal_talon,
    next_coup_begins,
    play_talon,
    points,
)

presets = st.sampled_from(sorted(PRESETS))
seeds = st.integers(min_value=0, max_value=2**32 - 1)


@settings(max_examples=60, deadline=None)
@given(seed=seeds, preset=presets)
def test_complete_rows_total_31_to_40_and_no_card_is_used_twice(seed, preset):
    sim = simulate_taille(seed=seed, reglement=reglement(preset), stakes_per_coup=0)
    used = []
    for coup in sim.taille.coups:
        for r in (coup.outcome.noir, coup.outcome.rouge):
            if r.closed:
                assert 31 <= r.total <= 40
        used.extend(coup.cards)
    # The coups took the talon's cards in order, each once; what is left is the end's count.
    assert tuple(used) == sim.talon[: len(used)]
    assert len(used) + sim.taille.end.cards_left == len(sim.talon)


@settings(max_examples=60, deadline=None)
@given(seed=seeds, preset=presets, keep=st.integers(min_value=0, max_value=312))
def test_a_talon_dealt_whole_lays_the_rows_a_terminal_lays_card_by_card(seed, preset, keep):
    rules = reglement(preset)
    talon = simulate_taille(seed=seed, reglement=rules, stakes_per_coup=0).talon[:keep]
    dealt = deal_talon(talon, rules, composition=None)
    # The terminal's way: CoupDeal card by card, the end rule asked before each coup, no card
    # dealt from beyond the cut card; a coup cut short ends the taille.
    stop = len(talon)
    if rules.end_rule == "cut_card":
        stop = max(0, len(talon) - rules.cut_card_from_end)
    position, outcomes = 0, []
    left = sum(points(c, rules) for c in talon)
    while next_coup_begins(len(talon) - position, left, rules):
        deal = CoupDeal(rules)
        while not deal.complete and position < stop:
            left -= deal.lay(talon[position]).value
            position += 1
        outcomes.append(deal.outcome())
        if not deal.complete:
            break
    assert [coup.outcome for coup in dealt.coups] == outcomes
    assert (dealt.cards_left, dealt.points_left) == (len(talon) - position, left)


@settings(max_examples=60, deadline=None)
@given(seed=seeds, preset=presets, per_coup=st.integers(min_value=1, max_value=6))
def test_every_stakes_money_is_accounted_for_over_its_life(seed, preset, per_coup):
    sim = simulate_taille(seed=seed, reglement=reglement(preset), stakes_per_coup=per_coup)
    amount = {
        s.id: s.amount for coup in range(1, len(sim.taille.coups) + 1) for s in sim.stakes[coup]
    }
    accounted: Counter[str] = Counter()
    for coup in sim.taille.coups:
        for s in coup.settlements:
            accounted[s.stake] += s.returned + s.to_bank
            assert s.paid in (0, amount[s.stake])  # even money, or nothing
    for s in sim.taille.end.settlements:
        accounted[s.stake] += s.returned + s.to_bank
    for p in sim.taille.end.prison:
        accounted[p.stake] += p.held
    assert accounted == Counter(amount)


@settings(max_examples=25, deadline=None)
@given(seed=seeds, preset=presets)
def test_replaying_a_replays_own_cards_reproduces_it(seed, preset):
    sim = simulate_taille(seed=seed, reglement=reglement(preset), stakes_per_coup=3)
    first = replay(sim.replay_document(preset))
    cards = [
        c for coup in first["coups"] for side in ("noir", "rouge") for c in coup[side]["cards"]
    ]
    rest = [str(c) for c in sim.talon[len(cards) :]]
    again = replay({**sim.replay_document(preset), "cards": cards + rest})
    assert again == first
    assert [c["number"] for c in first["coups"]] == list(range(1, len(first["coups"]) + 1))


@settings(max_examples=40, deadline=None)
@given(seed=seeds, extra=st.sampled_from(["AS", "KH", "7D", "TC"]))
def test_a_sixain_never_accepts_a_seventh_copy_of_a_card(seed, extra):
    cards = list(SIXAIN.cards)
    random.Random(seed).shuffle(cards)
    position = random.Random(seed + 1).randint(0, len(cards))
    cards.insert(position, card(extra))
    with pytest.raises(ForeignCard, match=f"{extra} appears 7 times"):
        play_talon(cards, {}, reglement("baden-1854"))
