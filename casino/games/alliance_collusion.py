"""The cercle's collusion detector for Alliance (RULES.md §3: the house does not bank the game, it
supervises it): the pairs of players whose alliances or joint results over a séance (or a week) are
beyond what chance explains, each with the figures and the deals that carry the evidence, for a
person to review. ``docs/detectors.md`` gives the method, the threshold, the measured recall and
false alarms, and what the detector cannot see.

Two statistics for each pair of players who played together:

- ``alliances``: of the deals one of the two declared as an alliance or a lever with an ally, how
  many had the other as ally. An honest declarer calls a card without knowing where it lies, so
  his ally is any of the other n - 1 players alike: the count is a sum of independent trials of
  probability 1 / (n - 1), and its upper tail is computed exactly (``allied_tail``).
- ``marks``: the pair's joint marks (the sum of both players' net marks) over the deals both
  played. Were the two any pair of the deal's players, their joint marks would have mean 0 and a
  variance computed exactly from the deal's marks (``pair_variance``); the sum over the deals,
  standardised, is compared with the normal upper tail once they played ``MARKS_MIN_DEALS``
  deals together.

Every pair is tested on both; the family-wise rate of false alarms of one call under honest play
is held at ``alpha`` (``COLLUSION_ALPHA`` by default, the value the règlement posts) by Bonferroni:
each test fires below ``alpha / (2 × the number of pairs who played together)``.

>>> seance = [
...     DealRecord(
...         ref=f"d{i}",
...         players=("ana", "ben", "carl", "dora"),
...         declarer=("ana", "ben")[i % 2],
...         game=Game.ALLIANCE,
...         ally=("ben", "ana")[i % 2],
...         payments=tuple((p, w, 2) for p in ("carl", "dora") for w in ("ana", "ben")),
...         marks={"ana": 4, "ben": 4, "carl": -4, "dora": -4},
...     )
...     for i in range(12)
... ]
>>> [(f.pair, f.statistics, f.deals[:2]) for f in suspicious_pairs(seance)]
[(('ana', 'ben'), ('alliances',), ('d0', 'd1'))]
>>> allied_tail([4] * 12, 12)  # allied 12 times in 12, at 4 players
Fraction(1, 531441)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import combinations
from typing import Any, Literal

from casino.games.alliance import Game

# The chance, at most, that one call (a séance, a week) on honest play raises any finding (all pairs
# and both statistics together); the règlement posts it.
COLLUSION_ALPHA = 0.001

# Below this many deals together the normal approximation of the marks statistic is not trusted
# (docs/detectors.md measures it), and the pair is tested on its alliances only.
MARKS_MIN_DEALS = 20

Statistic = Literal["alliances", "marks"]
STATISTICS: tuple[Statistic, ...] = ("alliances", "marks")

Pair = tuple[str, str]


@dataclass(frozen=True)
class DealRecord:
    """What the detector needs of one deal played out (REPLAY.md, Alliance output): the players in
    dealing order, the declarer, his game, his ally (None in a solo, or when he played alone), the
    payments in marks (payer, payee, marks) and each player's net marks."""

    ref: str
    players: tuple[str, ...]
    declarer: str
    game: Game
    ally: str | None
    payments: tuple[tuple[str, str, int], ...]
    marks: Mapping[str, int] = field(hash=False)

    def __post_init__(self) -> None:
        players = self.players
        if not 4 <= len(players) <= 6 or len(set(players)) != len(players):
            raise ValueError(f"deal {self.ref!r}: 4 to 6 distinct players, not {list(players)}")
        if self.declarer not in players:
            raise ValueError(f"deal {self.ref!r}: the declarer {self.declarer!r} is not a player")
        if self.ally is not None and (
            self.ally not in players or self.ally == self.declarer or self.game is Game.SOLO
        ):
            raise ValueError(f"deal {self.ref!r}: {self.ally!r} cannot be the ally")
        if sorted(self.marks) != sorted(players) or sum(self.marks.values()) != 0:
            raise ValueError(f"deal {self.ref!r}: the marks {dict(self.marks)} are not the net")
        net = dict.fromkeys(players, 0)
        for payer, payee, marks in self.payments:
            net[payer] -= marks
            net[payee] += marks
        if net != dict(self.marks):
            raise ValueError(f"deal {self.ref!r}: the payments net to {net}, not {self.marks}")


def record_from_render(ref: str, rendered: Mapping[str, Any]) -> DealRecord:
    """The ``DealRecord`` of a deal from its output document (``casino.games.alliance.render``).

    >>> from casino.games.alliance import render
    >>> from casino.games.simulator import simulate_alliance_deal
    >>> record = record_from_render("t1-d7", render(simulate_alliance_deal(seed=7).outcome))
    >>> record.players, record.declarer, record.game, record.ally
    (('ana', 'ben', 'carl', 'dora'), 'ben', <Game.ALLIANCE: 'alliance'>, 'dora')
    """
    return DealRecord(
        ref=ref,
        players=tuple(rendered["hands"]),  # keyed in dealing order
        declarer=rendered["declarer"],
        game=Game(rendered["game"]),
        ally=rendered["ally"],
        payments=tuple((p["from"], p["to"], p["marks"]) for p in rendered["payments"]),
        marks=dict(rendered["marks"]),
    )


@dataclass(frozen=True)
class Measure:
    """One statistic of one pair: ``observed`` against ``expected`` and its standard deviation
    ``sd`` under honest play (``z`` standardises), the upper-tail probability ``p_value`` (exact
    for ``alliances``, the normal approximation for ``marks``), the number of deals counted
    (``trials``) and the refs of the deals that carry the evidence (``deals``): where they were
    allies, or where their joint marks were positive."""

    statistic: Statistic
    observed: int
    expected: float
    sd: float
    z: float
    p_value: float
    trials: int
    deals: tuple[str, ...]


@dataclass(frozen=True)
class Finding:
    """A pair whose ``fired`` statistics are beyond chance: each ``p_value`` below ``threshold``
    (``alpha`` divided by the ``tests`` made), after ``together`` deals played together;
    ``deals``, the evidence of the fired statistics, in the order played."""

    pair: Pair
    fired: tuple[Measure, ...]
    alpha: float
    tests: int
    threshold: float
    together: int
    deals: tuple[str, ...]

    @property
    def statistics(self) -> tuple[Statistic, ...]:
        return tuple(m.statistic for m in self.fired)


def allied_tail(sizes: Iterable[int], observed: int) -> Fraction:
    """The exact probability that a declarer honestly calling his ally finds one given player at
    least ``observed`` times in deals at tables of ``sizes`` players: the upper tail of a sum of
    independent trials of probability 1 / (n - 1) (a binomial for each table size, convolved).

    >>> allied_tail([4, 4, 4], 2)  # 3 (2/3)(1/3)^2 + (1/3)^3
    Fraction(7, 27)
    >>> allied_tail([4, 6], 1)  # 1 - (2/3)(4/5)
    Fraction(7, 15)
    """
    counts: dict[int, int] = {}
    for n in sizes:
        counts[n] = counts.get(n, 0) + 1
    # Numerators over the common denominator prod (n - 1)^m, in integers: exact and fast.
    weights = [1]
    denominator = 1
    for n, m in counts.items():
        binomial = [math.comb(m, k) * (n - 2) ** (m - k) for k in range(m + 1)]
        convolved = [0] * (len(weights) + m)
        for i, w in enumerate(weights):
            for k, b in enumerate(binomial):
                convolved[i + k] += w * b
        weights = convolved
        denominator *= (n - 1) ** m
    return Fraction(sum(weights[max(observed, 0) :]), denominator)


def pair_variance(marks: Iterable[int]) -> Fraction:
    """The variance of a pair's joint marks when the pair is any of the deal's C(n, 2) pairs
    alike, given the players' net ``marks`` (summing to 0): (n - 2) Σ m² / C(n, 2).

    >>> pair_variance([4, 4, -4, -4])  # pairs' sums 8, 0, 0, 0, 0, -8
    Fraction(64, 3)
    """
    values = list(marks)
    n = len(values)
    return Fraction((n - 2) * sum(m * m for m in values), math.comb(n, 2))


def _upper_normal(z: float) -> float:
    return 0.5 * math.erfc(z / math.sqrt(2))


def pair_measures(deals: Sequence[DealRecord]) -> dict[Pair, tuple[Measure, ...]]:
    """Both statistics (``STATISTICS`` order) of every pair of players who played a deal together
    (the names sorted), over ``deals``; a ref twice is refused (the deal would count twice)."""
    refs = [d.ref for d in deals]
    if len(set(refs)) != len(refs):
        twice = next(r for r in refs if refs.count(r) > 1)
        raise ValueError(f"the deal {twice!r} is given twice")
    pairs = sorted({p for d in deals for p in combinations(sorted(d.players), 2)})
    return {pair: (_alliances(pair, deals), _marks(pair, deals)) for pair in pairs}


def _alliances(pair: Pair, deals: Sequence[DealRecord]) -> Measure:
    a, b = pair
    sizes: list[int] = []
    allied: list[str] = []
    for d in deals:
        if d.ally is None or {a, b} - set(d.players) or d.declarer not in pair:
            continue
        sizes.append(len(d.players))
        if d.ally in pair:
            allied.append(d.ref)
    expected = sum(Fraction(1, n - 1) for n in sizes)
    variance = sum(Fraction(n - 2, (n - 1) ** 2) for n in sizes)
    sd = math.sqrt(variance)
    return Measure(
        statistic="alliances",
        observed=len(allied),
        expected=float(expected),
        sd=sd,
        z=float(len(allied) - expected) / sd if sd else 0.0,
        p_value=float(allied_tail(sizes, len(allied))),
        trials=len(sizes),
        deals=tuple(allied),
    )


def _marks(pair: Pair, deals: Sequence[DealRecord]) -> Measure:
    a, b = pair
    joint = 0
    variance = Fraction(0)
    trials = 0
    won: list[str] = []
    for d in deals:
        if {a, b} - set(d.players):
            continue
        trials += 1
        both = d.marks[a] + d.marks[b]
        joint += both
        variance += pair_variance(d.marks.values())
        if both > 0:
            won.append(d.ref)
    sd = math.sqrt(variance)
    z = joint / sd if sd else 0.0
    return Measure(
        statistic="marks",
        observed=joint,
        expected=0.0,
        sd=sd,
        z=z,
        p_value=_upper_normal(z) if sd else 1.0,
        trials=trials,
        deals=tuple(won),
    )


def suspicious_pairs(
    deals: Sequence[DealRecord], *, alpha: float = COLLUSION_ALPHA
) -> list[Finding]:
    """The pairs of ``deals`` (a séance, a week...) beyond chance on either statistic, at a
    family-wise false-alarm rate ``alpha`` for the whole call (Bonferroni over the pairs who
    played together × ``STATISTICS``); ``marks`` only counts after ``MARKS_MIN_DEALS`` deals
    together. Sorted by pair."""
    measures = pair_measures(deals)
    tests = len(measures) * len(STATISTICS)
    threshold = alpha / tests if tests else 0.0
    order = {d.ref: i for i, d in enumerate(deals)}
    findings = []
    for pair, pair_stats in measures.items():
        fired = tuple(
            m
            for m in pair_stats
            if m.p_value < threshold and (m.statistic != "marks" or m.trials >= MARKS_MIN_DEALS)
        )
        if fired:
            evidence = sorted({ref for m in fired for ref in m.deals}, key=order.__getitem__)
            findings.append(
                Finding(
                    pair=pair,
                    fired=fired,
                    alpha=alpha,
                    tests=tests,
                    threshold=threshold,
                    together=next(m.trials for m in pair_stats if m.statistic == "marks"),
                    deals=tuple(evidence),
                )
            )
    return findings


__all__ = [
    "COLLUSION_ALPHA",
    "MARKS_MIN_DEALS",
    "DealRecord",
    "Finding",
    "Measure",
    "allied_tail",
    "pair_measures",
    "pair_variance",
    "record_from_render",
    "suspicious_pairs",
]
