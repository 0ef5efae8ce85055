"""Exact odds: checked against exact rational enumeration, published figures and simulation."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from fractions import Fraction
from functools import cache

import pytest

from casino.games.cards import SIXAIN
from casino.games.odds import composition_of_decks, edges, first_coup, infinite_deck
from casino.games.reglement import reglement
from casino.games.trente_et_quarante import CoupDeal, Result
from tests.conftest import ROOT


def brute_force(counts: dict[int, int]) -> dict[object, Fraction]:
    """Every sequence, in exact rationals: the reference the fast method must match."""

    @cache
    def go(remaining: tuple[int, ...], total: int, first: int | None) -> dict[object, Fraction]:
        if total > 30:
            if first is None:
                return go(remaining, 0, total)
            return {(first, total): Fraction(1)}
        left = sum(remaining)
        if left == 0:
            return {"incomplete": Fraction(1)}
        result: dict[object, Fraction] = {}
        for index, count in enumerate(remaining):
            if count:
                after = (*remaining[:index], count - 1, *remaining[index + 1 :])
                for key, p in go(after, total + index + 1, first).items():
                    result[key] = result.get(key, Fraction(0)) + p * Fraction(count, left)
        return result

    return go(tuple(counts.get(v, 0) for v in range(1, 11)), 0, None)


@pytest.mark.parametrize(
    "counts",
    [
        {1: 2, 5: 3, 9: 3, 10: 8},
        {1: 4, 2: 2, 5: 3, 7: 2, 9: 3, 10: 12},
        {3: 1, 8: 2, 10: 9},  # a shoe that can run out inside the coup
    ],
)
def test_the_fast_method_equals_exact_enumeration(counts):
    exact = brute_force(counts)
    fast = first_coup(counts)
    for (t1, t2), p in fast.joint.items():
        assert p == pytest.approx(float(exact.get((t1, t2), 0)), rel=1e-12, abs=1e-15)
    assert fast.refait == pytest.approx(float(exact.get((31, 31), 0)), rel=1e-12, abs=1e-15)
    assert fast.incomplete == pytest.approx(float(exact.get("incomplete", 0)), abs=1e-12)
    rows: dict[int, Fraction] = {}
    for key, p in exact.items():
        if key != "incomplete":
            rows[key[0]] = rows.get(key[0], Fraction(0)) + p
    # The first row alone ends whether or not the second can be completed.
    for t, p in fast.row.items():
        assert p >= float(rows.get(t, 0)) - 1e-12


def test_a_full_sixain_matches_the_published_example_of_replay_md():
    coup = first_coup(composition_of_decks(6))
    # REPLAY.md quotes these two figures of the full six-pack shoe.
    assert coup.row[31] == pytest.approx(0.14805777707565693, rel=1e-13)
    assert coup.row[40] == pytest.approx(0.05156787262091923, rel=1e-13)
    assert sum(coup.row.values()) == pytest.approx(1, abs=1e-13)
    assert coup.noir + coup.rouge + coup.apres + coup.refait == pytest.approx(1, abs=1e-13)
    assert coup.noir == pytest.approx(coup.rouge, rel=1e-13)  # the rows are exchangeable


def test_the_infinite_deck_is_exact():
    row, coup = infinite_deck()
    assert sum(row.values()) == 1
    assert row[31] == Fraction(row[31].numerator, row[31].denominator)
    assert coup.refait == pytest.approx(float(row[31] ** 2), rel=1e-15)


def test_the_edge_with_half_lost_at_refait_is_half_the_refait_probability():
    coup = first_coup(composition_of_decks(6))
    table = edges(coup, reglement("baden-1854"))
    assert table["rouge"]["half"].edge == pytest.approx(coup.refait / 2, rel=1e-12)
    assert table["rouge"]["prison"].edge > table["rouge"]["half"].edge  # prison can be lost again
    insured = edges(coup, reglement("trente-et-quarante-modern"))["noir"]["insured"]
    assert insured.edge == pytest.approx(0.01, rel=1e-9)  # 5 per 500, refaits pushed
    # Per unit: +1 or -1 when decided, 0 after an après, -1/2 at a refait.
    edge = coup.refait / 2
    for chance in ("rouge", "noir", "couleur", "inverse"):
        assert table[chance]["half"].variance == pytest.approx(
            coup.noir + coup.rouge + coup.refait / 4 - edge**2, rel=1e-12
        )


def test_the_odds_command_follows_the_contract():
    done = subprocess.run(
        [sys.executable, "-m", "casino.games", "odds", "--decks", "6"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout
    document = json.loads(done.stdout)
    assert list(document["row"]) == [str(t) for t in range(31, 41)]
    assert set(document["coup"]) == {"noir", "rouge", "apres", "refait"}
    assert set(document["infinite"]) == {"row", "coup"}
    assert document["edge_half"] == pytest.approx(document["coup"]["refait"] / 2)
    bad = subprocess.run(
        [sys.executable, "-m", "casino.games", "odds", "--decks", "9"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert bad.returncode == 2
    assert json.loads(bad.stdout)["error"]["where"] == "decks"
    typo = subprocess.run(
        [sys.executable, "-m", "casino.games", "odds", "--composition", '{"A": 4, "X": 3}'],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert (typo.returncode, json.loads(typo.stdout)["error"]["where"]) == (2, "composition.X")


def test_simulation_agrees_with_the_exact_odds_within_its_error():
    """Monte Carlo: first coups of freshly shuffled sixains, 4 standard errors allowed."""
    exact = first_coup(composition_of_decks(6))
    rng = random.Random(20261122)
    deck = list(SIXAIN.cards)
    trials = 20_000
    seen = dict.fromkeys(Result, 0)
    for _ in range(trials):
        rng.shuffle(deck)
        deal = CoupDeal()
        position = 0
        while not deal.complete:
            deal.lay(deck[position])
            position += 1
        seen[deal.outcome().result] += 1
    for result, p in (
        (Result.NOIR, exact.noir),
        (Result.ROUGE, exact.rouge),
        (Result.APRES, exact.apres),
        (Result.REFAIT, exact.refait),
    ):
        error = math.sqrt(p * (1 - p) / trials)
        assert abs(seen[result] / trials - p) < 4 * error, (result, seen[result] / trials, p)
