"""Invariants of Pharao over random packs, stakes and acts (hypothesis, bounded to seconds)."""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from casino.games.cards import ONE_PACK, Card
from casino.games.errors import PharaoRefusal
from casino.games.pharao import Outcome, Side, TailleDeal, _in_order, play_taille
from casino.games.pharao_replay import _stake as _field_by_field
from casino.games.pharao_replay import _well_formed_stake, render
from casino.games.reglement import Reglement, reglement
from casino.games.replay import ReplayError, replay
from casino.games.simulator import SimulatedPharao, simulate_pharao_taille

seeds = st.integers(min_value=0, max_value=2**32 - 1)
packs = st.permutations(list(ONE_PACK))


@st.composite
def marks_tables(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A marks table by RULES.md's rules (pharao_marks), grown row by row from simple."""
    rows: list[dict[str, Any]] = []
    stands = {"simple": (1, 0, 1)}  # mark -> (riding, protected, gain)
    used: set[tuple[str, str]] = set()
    for index in range(draw(st.integers(min_value=0, max_value=6))):
        free = [(m, move) for m in stands for move in ("appe", "paroli") if (m, move) not in used]
        source, move = draw(st.sampled_from(free))
        riding_from, protected_from, gain_from = stands[source]
        total = 2 * riding_from + protected_from
        riding = draw(st.integers(min_value=1, max_value=total))
        row = {
            "mark": f"m{index}",
            "from": source,
            "move": move,
            "riding": riding,
            "protected": total - riding,
        }
        if draw(st.booleans()):
            row["gain"] = gain_from + riding
        rows.append(row)
        stands[f"m{index}"] = (riding, total - riding, gain_from + riding)
        used.add((source, move))
    return rows


@st.composite
def rules(draw: st.DrawFn) -> Reglement:
    overrides: dict[str, Any] = {
        "pharao_last_card": draw(st.sampled_from(["dead", "bank"])),
        "pharao_plie_share": draw(st.sampled_from(["0", "1", "1/2", "1/3", "2/3", "3/7"])),
    }
    if draw(st.booleans()):
        overrides["pharao_marks"] = draw(marks_tables())
    if draw(st.booleans()):
        low = draw(st.integers(min_value=1, max_value=200))
        overrides["min_stake"] = low
        overrides["max_stake"] = draw(st.integers(min_value=low, max_value=low * 100))
    preset = draw(st.sampled_from(["baden-1854", "france-2007"]))
    return reglement({"preset": preset, "overrides": overrides})


def money_of(sim: SimulatedPharao) -> tuple[Counter[str], Counter[str], Counter[str]]:
    """Replay the simulated taille act by act through ``TailleDeal``: per stake, the money put on
    the layout (placed, raised, put back by a mark), the money off it (returned and to_bank of
    every line) and the winnings paid. Also checks every line against the stake as it stood."""
    deal = TailleDeal(sim.cards[-1], sim.reglement)
    on: Counter[str] = Counter()
    off: Counter[str] = Counter()
    paid: Counter[str] = Counter()
    stakes: dict[int, list[Any]] = {}
    for number, stake in sim.stakes:
        stakes.setdefault(number, []).append(stake)
    acts: dict[int, list[Any]] = {}
    for number, action in sim.actions:
        acts.setdefault(number, []).append(action)
    for number in range(1, 27):
        for action in acts.get(number, ()):
            before = deal.to_json()
            try:
                done = deal.act(action)
            except PharaoRefusal:
                assert deal.to_json() == before  # a refusal changes nothing
                continue
            on[action.stake] += done.put
            if done.settlement is not None:
                off[action.stake] += done.settlement.returned + done.settlement.to_bank
        for stake in stakes.get(number, ()):
            try:
                deal.place(stake)
            except PharaoRefusal:
                continue
            on[stake.id] += stake.amount
        standing = dict(deal.standing)
        deal.lay(sim.cards[2 * number - 2])
        laid = deal.lay(sim.cards[2 * number - 1])
        assert laid.settled is not None
        for line in laid.settled.settlements:
            if line.outcome in (Outcome.COLLECTED, Outcome.WITHDRAWN, Outcome.REDUCED):
                continue  # counted when acted
            was = standing[line.stake]
            assert line.mark == was.mark
            if line.outcome is Outcome.WON:
                assert (line.paid, line.returned, line.to_bank) == (was.riding, 0, 0)
            elif line.outcome is Outcome.LOST:
                assert (line.paid, line.returned, line.to_bank) == (0, was.protected, was.riding)
            elif line.outcome is Outcome.PLIE:
                assert line.paid == 0
                assert line.returned == 0
                assert line.to_bank <= was.stands
            paid[line.stake] += line.paid
            off[line.stake] += line.returned + line.to_bank
        for line in laid.end or ():
            off[line.stake] += line.returned
    assert not deal.standing
    return on, off, paid


@settings(max_examples=200, deadline=None)
@given(seed=seeds, rules=rules())
def test_every_unit_staked_is_returned_paid_or_kept_by_the_bank(seed, rules):
    sim = simulate_pharao_taille(seed=seed, reglement=rules, mistakes=0.3)
    on, off, paid = money_of(sim)
    assert on == off  # what went on the card came off it: returned or kept by the bank
    # The replay's lines are the same money.
    lines = [s for d in sim.taille.draws for s in d.settlements] + list(sim.taille.end)
    assert sum(s.paid for s in lines) == sum(paid.values())
    assert sum(s.returned + s.to_bank for s in lines) == sum(off.values())


@settings(max_examples=60, deadline=None)
@given(pack=packs, last=st.sampled_from(["dead", "bank"]))
def test_the_cards_alternate_left_and_right_in_26_draws(pack: list[Card], last: str):
    taille = play_taille(pack, [], [], Reglement(pharao_last_card=last))  # type: ignore[arg-type]
    assert taille.bottom_card == pack[51]
    assert len(taille.draws) == 26
    assert [d.number for d in taille.draws] == list(range(1, 27))
    assert [c for d in taille.draws for c in (d.bank, d.players)] == pack
    for d in taille.draws:
        assert d.plie == (d.number < 26 and d.bank.rank is d.players.rank)
    deal = TailleDeal(pack[51])
    sides = [deal.lay(c).side for c in pack]
    assert sides == [Side.BANK, Side.PLAYERS] * 26


def drive(deal: TailleDeal, sim: SimulatedPharao, draws: range) -> list[object]:
    """Play ``draws`` of the simulated taille on ``deal``: acts, stakes, the two cards; what the
    engine answered each time (a refusal by its code)."""
    events: list[object] = []
    for number in draws:
        for n, action in sim.actions:
            if n == number:
                try:
                    events.append(deal.act(action))
                except PharaoRefusal as exc:
                    events.append(exc.code)
        for n, stake in sim.stakes:
            if n == number:
                try:
                    events.append(deal.place(stake))
                except PharaoRefusal as exc:
                    events.append(exc.code)
        events.append(deal.lay(sim.cards[2 * number - 2]))
        events.append(deal.lay(sim.cards[2 * number - 1]))
    return events


@settings(max_examples=100, deadline=None)
@given(seed=seeds, rules=rules(), cut=st.integers(min_value=0, max_value=26))
def test_a_taille_saved_and_restored_between_draws_plays_on_the_same(seed, rules, cut):
    sim = simulate_pharao_taille(seed=seed, reglement=rules, mistakes=0.3)
    deal = TailleDeal(sim.cards[-1], rules)
    drive(deal, sim, range(1, cut + 1))
    text = deal.to_json()
    again = TailleDeal.from_json(text, rules)
    assert again.to_json() == text
    rest = range(cut + 1, 27)
    assert drive(deal, sim, rest) == drive(again, sim, rest)


@settings(max_examples=100, deadline=None)
@given(seed=seeds, rules=rules())
def test_the_replay_of_a_simulated_taille_is_the_engines(seed, rules):
    sim = simulate_pharao_taille(seed=seed, reglement=rules, mistakes=0.3)
    output = replay(sim.replay_document(_spec(rules)))
    assert output == render(sim.taille)
    # Refusals are listed in the order things happened: by draw, acts before stakes.
    keys = [(r["draw"], r["do"] == "stake") for r in output["refused"]]
    assert keys == sorted(keys)


def _spec(rules: Reglement) -> dict[str, Any]:
    """The règlement as a replay document names it (every Pharao parameter as an override)."""
    data = json.loads(rules.to_json())
    names = ("pharao_last_card", "pharao_plie_share", "pharao_marks", "min_stake", "max_stake")
    return {"preset": "baden-1854", "overrides": {n: data[n] for n in names}}


def test_the_simulator_is_seeded():
    one = simulate_pharao_taille(seed=7, reglement=Reglement())
    assert one == simulate_pharao_taille(seed=7, reglement=Reglement())
    assert one.cards != simulate_pharao_taille(seed=8, reglement=Reglement()).cards
    assert set(one.cards) == set(ONE_PACK)


# A Pharao stake's fields in a document: right values, and wrong ones of every type.
CODES_OF_RANKS = ["A", "7", "T", "K"]
PHARAO_STAKE_VALUES = {
    "id": st.sampled_from(["p0", "p1", "p2"]),
    "draw": st.integers(min_value=1, max_value=26),
    "rank": st.sampled_from(CODES_OF_RANKS),
    "amount": st.sampled_from([1, 100, 10**9]),
}
PHARAO_WRONG_VALUES = {
    "id": st.sampled_from(["", 0, None, ["p1"]]),
    "draw": st.sampled_from([0, 27, 1.0, True, "1"]),
    "rank": st.sampled_from(["k", "10", " 7", "X", "", None, 7, ["A"]]),
    "amount": st.sampled_from([0, -5, 100.0, True, "100", None]),
}


@st.composite
def pharao_stake_entries(draw: st.DrawFn) -> Any:
    """A stake entry as a document may hold it: well formed, or with a fault or two (a field
    missing or wrong, an unknown key), or not an object at all."""
    if draw(st.integers(min_value=0, max_value=9)) == 0:
        return draw(st.sampled_from([None, "p1", [], ["id", "p1"]]))
    entry = {key: draw(right) for key, right in PHARAO_STAKE_VALUES.items()}
    for fault in draw(st.lists(st.sampled_from([*PHARAO_STAKE_VALUES, "note"]), max_size=2)):
        if fault == "note":
            entry["note"] = 1
        elif draw(st.booleans()):
            entry.pop(fault, None)
        else:
            entry[fault] = draw(PHARAO_WRONG_VALUES[fault])
    return entry


@settings(max_examples=1000, deadline=None)
@given(entry=pharao_stake_entries(), taken=st.sets(st.sampled_from(["p0", "p1"])))
def test_a_stake_read_at_once_is_the_stake_read_field_by_field(entry, taken):
    at_once = _well_formed_stake(entry, taken)
    try:
        by_field = _field_by_field(entry, "stakes[0]", taken)
    except ReplayError:
        assert at_once is None
    else:
        assert at_once in (by_field, None)
        # A rank written otherwise than its code (``10``, ``k``) is left to the field-by-field
        # reading; every other entry it accepts is read at once.
        if entry["rank"] in CODES_OF_RANKS:
            assert at_once == by_field


@settings(max_examples=150, deadline=None)
@given(seed=seeds, rules=rules(), shuffled=st.booleans())
def test_a_taille_played_whole_is_its_cards_laid_one_by_one(seed, rules, shuffled):
    """``play_taille`` lays each draw's two cards at once, unchecked (its pack is checked whole),
    and sorts a draw's lines only when the stakes are not given in draw order: the same draws,
    lines and refusals as the terminal's ``lay``, card by card, with every line sorted."""
    sim = simulate_pharao_taille(seed=seed, reglement=rules, mistakes=0.3)
    stakes = list(sim.stakes)
    if shuffled:
        random.Random(seed).shuffle(stakes)
    whole = play_taille(sim.cards, stakes, sim.actions, rules)
    order = {stake.id: index for index, (_, stake) in enumerate(stakes)}
    deal = TailleDeal(sim.cards[-1], rules)
    draws, refused, end = [], [], ()
    for number in range(1, 27):
        for n, action in sim.actions:
            if n == number:
                try:
                    deal.act(action)
                except PharaoRefusal as exc:
                    refused.append((number, action.stake, exc.code))
        for n, stake in stakes:
            if n == number:
                try:
                    deal.place(stake)
                except PharaoRefusal as exc:
                    refused.append((number, stake.id, exc.code))
        assert deal.lay(sim.cards[2 * number - 2]).settled is None
        laid = deal.lay(sim.cards[2 * number - 1])
        draws.append(_in_order(laid.settled, order))
        end = tuple(sorted(laid.end or (), key=lambda s: order[s.stake]))
    assert list(whole.draws) == draws
    assert whole.end == end
    assert [(r.draw, r.stake, r.reason) for r in whole.refused] == refused
