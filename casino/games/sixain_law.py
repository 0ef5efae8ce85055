"""Exact laws for testing the cards of one Trente-et-Quarante sixain (docs/detectors.md, The cards).

Pure: no Django, no database, no clock. The floor reads the cards laid in a sixain's taille, in
order, and hands them here coup by coup (``SixainDeal``); ``sixain_tests`` returns every test of
that sixain with its p-value, and the detector compares each with ``ALPHA / tests``.

Null hypothesis: the sixain was shuffled honestly, i.e. whatever cards have been seen, the cards
still in the talon lie in a uniformly random order. Then every row the tailleur begins is a *first
row* of the cards left before it, and its total has the exact law ``row_law(cards left)``
(RULES.md §1.2: cards are laid until the total exceeds 30). The second row of a coup is the first
row of what the first row left. These conditional laws are what the tests hold the rows against.

>>> law = row_law(composition_of_decks(6))
>>> round(law.p(31), 4)
0.1481
>>> round(poisson_binomial_upper(2, [0.5, 0.5]), 2)
0.25
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

import numpy as np
import numpy.typing as npt

ROW_MAX = 30  # a row is laid while its total is at most 30
VALUES = range(1, 11)

Array = npt.NDArray[np.float64]


def composition_of_decks(decks: int, face: int = 10) -> dict[int, int]:
    """Counts by point value of ``decks`` full packs, figures worth ``face``.

    >>> composition_of_decks(1)[10]
    16
    """
    counts = {v: 4 * decks for v in VALUES}
    counts[face] += 12 * decks
    return counts


# --- the law of one row ----------------------------------------------------------------------


@dataclass(frozen=True)
class RowLaw:
    """The exact law of the total of a row laid from a talon in random order: ``totals[t]`` for
    t = 31..40, and ``incomplete`` the chance the cards run out before the row exceeds 30."""

    totals: Mapping[int, float]
    incomplete: float

    def p(self, total: int) -> float:
        return self.totals.get(total, 0.0)


def _partials(counts: Mapping[int, int]) -> Array:
    """g[s, n] = the number of ways to choose n cards worth s points in all (s ≤ 30) from the
    talon: the coefficients of prod_v (1 + x^v y)^(c_v), truncated at 30 points."""
    g = np.zeros((ROW_MAX + 1, ROW_MAX + 1))
    g[0, 0] = 1.0
    for v, c in counts.items():
        if c <= 0:
            continue
        new = g.copy()
        for a in range(1, min(c, ROW_MAX // v) + 1):
            new[a * v :, a:] += math.comb(c, a) * g[: ROW_MAX + 1 - a * v, : ROW_MAX + 1 - a]
        g = new
    return g


def _less_one(g: Array, v: int) -> Array:
    """The coefficients for the talon less one card worth v: g / (1 + x^v y), solved in order of
    increasing points (h[s, n] = g[s, n] - h[s - v, n - 1]). Checked against building it
    afresh and against enumeration (tests/detectors/test_cards_law.py)."""
    h = g.copy()
    for s in range(v, ROW_MAX + 1):
        h[s, 1:] -= h[s - v, :-1]
    return h


def row_law(counts: Mapping[int, int]) -> RowLaw:
    """The exact law of the total of the next row laid from a talon of ``counts`` cards per point
    value (1..10), its order uniformly random.

    A row is n cards worth s ≤ 30 in some order, then a card v with s + v > 30. Any order of the
    n cards is a valid row (every prefix is at most s ≤ 30), so its chance is

        n! · C(multiset) · c_v / (N)_(n+1)    where C(multiset) counts the talon's choices of them
                                               from the talon less one v

    and summing over the multisets of n cards worth s is the coefficient g_(c - v)[s, n].

    >>> law = row_law({1: 0, 10: 4})          # four tens: the row is 10 + 10 + 10 + 10
    >>> law.p(40), law.incomplete
    (1.0, 0.0)
    """
    c = {v: max(0, int(counts.get(v, 0))) for v in VALUES}
    total = sum(c.values())
    weight = [0.0] * (ROW_MAX + 1)  # n! / (N)_(n+1)
    w = 1.0 / total if total else 0.0
    for n in range(ROW_MAX + 1):
        weight[n] = w if total - n > 0 else 0.0
        if total - n - 1 > 0:
            w *= (n + 1) / (total - n - 1)
        else:
            w = 0.0
    f = np.array(weight)
    totals = dict.fromkeys(range(31, 41), 0.0)
    whole = _partials(c)
    for v in VALUES:
        if not c[v]:
            continue
        g = _less_one(whole, v)
        for s in range(max(0, ROW_MAX + 1 - v), ROW_MAX + 1):
            totals[s + v] += c[v] * float(g[s] @ f)
    complete = sum(totals.values())
    return RowLaw(totals, max(0.0, 1.0 - complete))


# --- Poisson-binomial tails --------------------------------------------------------------------


def poisson_binomial(probabilities: Iterable[float]) -> list[float]:
    """The law of a sum of independent Bernoulli trials with these chances (exact convolution):
    element k is P(sum = k).

    >>> [round(x, 3) for x in poisson_binomial([0.5, 0.5])]
    [0.25, 0.5, 0.25]
    """
    law = [1.0]
    for p in probabilities:
        nxt = [0.0] * (len(law) + 1)
        for k, mass in enumerate(law):
            nxt[k] += mass * (1 - p)
            nxt[k + 1] += mass * p
        law = nxt
    return law


def poisson_binomial_upper(observed: int, probabilities: Sequence[float]) -> float:
    """P(sum ≥ observed)."""
    if observed <= 0:
        return 1.0
    return min(1.0, sum(poisson_binomial(probabilities)[observed:]))


def poisson_binomial_two_sided(observed: int, probabilities: Sequence[float]) -> float:
    """Twice the smaller tail, at most 1."""
    law = poisson_binomial(probabilities)
    lower = sum(law[: observed + 1])
    upper = sum(law[observed:])
    return min(1.0, 2 * min(lower, upper))


# --- runs of noir and rouge ----------------------------------------------------------------------


def runs_law(n1: int, n2: int) -> dict[int, Fraction]:
    """The exact law of the number of runs in a random arrangement of n1 noirs and n2 rouges,
    all C(n1 + n2, n1) arrangements alike (Wald–Wolfowitz).

    >>> runs_law(2, 1)           # NNR NRN RNN
    {2: Fraction(2, 3), 3: Fraction(1, 3)}
    """
    if n1 == 0 or n2 == 0:
        return {1 if n1 + n2 else 0: Fraction(1)}
    whole = math.comb(n1 + n2, n1)
    law: dict[int, Fraction] = {}
    for r in range(2, n1 + n2 + 1):
        k = r // 2
        if r % 2 == 0:
            ways = 2 * math.comb(n1 - 1, k - 1) * math.comb(n2 - 1, k - 1)
        else:
            ways = math.comb(n1 - 1, k) * math.comb(n2 - 1, k - 1) + math.comb(
                n1 - 1, k - 1
            ) * math.comb(n2 - 1, k)
        if ways:
            law[r] = Fraction(ways, whole)
    return law


def runs_two_sided(runs: int, n1: int, n2: int) -> float:
    """Twice the smaller tail of the runs count (too few runs: streaks; too many: alternation)."""
    law = runs_law(n1, n2)
    lower = sum((p for r, p in law.items() if r <= runs), Fraction(0))
    upper = sum((p for r, p in law.items() if r >= runs), Fraction(0))
    return float(min(Fraction(1), 2 * min(lower, upper)))


def longest_run_upper(longest: int, decisive: int) -> float:
    """P(the longest run of one colour ≥ ``longest``) among ``decisive`` coups, each noir or
    rouge with chance 1/2 whatever came before (see ``sixain_tests``): one minus the share of
    the 2^n sequences whose runs are all shorter, counted by the length of their last run.

    >>> longest_run_upper(2, 3)    # all but NRN and RNR
    0.75
    """
    if decisive == 0 or longest <= 1:
        return 1.0 if decisive else 0.0
    ending = [0] * longest  # ending[k]: sequences so far whose last run is k long (k < longest)
    ending[1] = 2
    for _ in range(decisive - 1):
        ending = [0, sum(ending), *ending[1:-1]]
    return float(1 - Fraction(sum(ending), 2**decisive))


def balance_two_sided(noirs: int, decisive: int) -> float:
    """Twice the smaller binomial(decisive, 1/2) tail of the count of noirs, at most 1.

    >>> balance_two_sided(3, 3)
    0.25
    """
    lower = sum(math.comb(decisive, k) for k in range(noirs + 1))
    upper = sum(math.comb(decisive, k) for k in range(noirs, decisive + 1))
    return float(min(Fraction(1), Fraction(2 * min(lower, upper), 2**decisive)))


def runs_of(results: Sequence[str]) -> tuple[int, int, int, int]:
    """(noirs, rouges, runs, longest run) of a sequence of ``"noir"``/``"rouge"``."""
    runs, longest, current = 0, 0, 0
    for i, r in enumerate(results):
        if i and r == results[i - 1]:
            current += 1
        else:
            runs, current = runs + 1, 1
        longest = max(longest, current)
    counts = Counter(results)
    return counts["noir"], counts["rouge"], runs, longest


# --- a slug: a run of cards repeated from an earlier sixain ---------------------------------------

SEED = 5  # common runs shorter than this are not looked for (they are common by chance)


@dataclass(frozen=True)
class CommonRun:
    """The longest run of cards this sixain shares, in the same order, with an earlier one."""

    length: int  # 0: none of at least SEED cards
    other: str = ""  # the earlier sixain's reference
    here: int = 0  # where it starts in this sixain's cards (0-based)
    there: int = 0  # and in the other's


def longest_common_run(cards: Sequence[str], others: Mapping[str, Sequence[str]]) -> CommonRun:
    """The longest run of at least ``SEED`` consecutive cards found, in the same order, both in
    ``cards`` and in one of ``others``: every shared run of ``SEED`` cards is a hit in an index
    of this sixain's runs, extended as far as both go.

    >>> longest_common_run(list("abcdefgh"), {"x": list("zzcdefgz")})
    CommonRun(length=5, other='x', here=2, there=2)
    """
    index: dict[tuple[str, ...], list[int]] = {}
    for i in range(len(cards) - SEED + 1):
        index.setdefault(tuple(cards[i : i + SEED]), []).append(i)
    best = CommonRun(0)
    for ref, other in others.items():
        for j in range(len(other) - SEED + 1):
            for i in index.get(tuple(other[j : j + SEED]), ()):
                if i and j and cards[i - 1] == other[j - 1]:
                    continue  # inside a run already measured from its start
                n = SEED
                while i + n < len(cards) and j + n < len(other) and cards[i + n] == other[j + n]:
                    n += 1
                if n > best.length:
                    best = CommonRun(n, ref, i, j)
    return best


def common_run_upper(length: int, here: int, there: int, pack: int = 312, copies: int = 6) -> float:
    """An upper bound on P(some run of ``length`` cards of this sixain's ``here`` cards appears in
    the same order among ``there`` cards dealt earlier), the sixain shuffled honestly.

    For one start in each, the chance that the shuffled cards repeat a given word of ``length``
    cards is at most prod_k copies / (pack - k) (at most ``copies`` of each card among the
    pack - k not yet placed); there are at most here × there pairs of starts (union bound).

    >>> common_run_upper(7, 312, 312) < 1e-6
    True
    """
    if length <= 0:
        return 1.0
    chance = float(here) * float(there)
    for k in range(length):
        chance *= copies / (pack - k)
    return min(1.0, chance)


# --- the sixain's coups and its tests ------------------------------------------------------------


@dataclass(frozen=True)
class DealtCoup:
    """A coup as its cards were laid: their point values in order. ``counted`` is false for a
    coup that is not a trial (cancelled by the chef): its cards leave the talon all the same."""

    ref: str
    points: tuple[int, ...]
    counted: bool = True


Result = Literal["noir", "rouge", "apres", "refait", "void"]


@dataclass(frozen=True)
class CoupFigures:
    """One coup against the law of the cards left before each of its rows."""

    ref: str
    noir: tuple[int, ...]
    rouge: tuple[int, ...]
    noir_total: int | None  # None: the cards ran out before the row exceeded 30
    rouge_total: int | None
    result: Result
    p_noir_31: float  # P(first row = 31 | the cards left before the coup)
    p_rouge_31: float  # P(second row = 31 | the cards left after the first row)
    p_rouge_same: float  # P(second row = first row's total | after the first row)
    counted: bool


def split_rows(points: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The coup's cards as its two rows: each laid until its total exceeds 30."""
    rows: list[list[int]] = [[], []]
    r = 0
    for v in points:
        if r > 1:
            break
        rows[r].append(v)
        if sum(rows[r]) > ROW_MAX:
            r += 1
    return tuple(rows[0]), tuple(rows[1])


def _total(row: Sequence[int]) -> int | None:
    t = sum(row)
    return t if t > ROW_MAX else None


def coup_figures(
    start: Mapping[int, int], coups: Sequence[DealtCoup], burned: Sequence[int] = ()
) -> list[CoupFigures]:
    """Each coup of a sixain against the exact law of its rows given every card laid before:
    ``start`` is the sixain's composition by point value, ``burned`` the points of the cards
    burned after the cut, ``coups`` in the order dealt."""
    left = Counter({v: int(start.get(v, 0)) for v in VALUES})
    left.subtract(Counter(burned))
    figures = []
    for coup in coups:
        noir, rouge = split_rows(coup.points)
        t1, t2 = _total(noir), _total(rouge)
        first = row_law(left)
        after = Counter(left)
        after.subtract(Counter(noir))
        second = row_law(after) if t1 is not None else RowLaw({}, 1.0)
        if t1 is None or t2 is None:
            result: Result = "void"
        elif t1 == t2:
            result = "refait" if t1 == 31 else "apres"
        else:
            result = "noir" if t1 < t2 else "rouge"
        figures.append(
            CoupFigures(
                coup.ref,
                noir,
                rouge,
                t1,
                t2,
                result,
                first.p(31),
                second.p(31),
                second.p(t1) if t1 is not None else 0.0,
                coup.counted,
            )
        )
        left.subtract(Counter(coup.points))
    return figures


@dataclass(frozen=True)
class Test:
    """One test of a sixain: what was counted, what the null expects, and its p-value."""

    name: str  # rows_31, refaits, apres, runs, longest_run, slug
    rule: str
    observed: float
    expected: float
    trials: int
    p_value: float
    detail: str = ""
    # The p-value the test gives each possible value of the statistic (``support``): the range
    # that would not fire at a threshold is read from it (``quiet_range``).
    tail: Callable[[int], float] | None = field(default=None, compare=False, repr=False)
    support: range = field(default=range(0), compare=False, repr=False)

    def quiet_range(self, threshold: float) -> tuple[int, int] | None:
        """The least and the greatest values of the statistic whose p-value is at least
        ``threshold`` (``None`` when the test cannot say)."""
        if self.tail is None:
            return None
        quiet = [v for v in self.support if self.tail(v) >= threshold]
        return (min(quiet), max(quiet)) if quiet else None


def _given(
    tail: Callable[[int, Sequence[float]], float], chances: Sequence[float]
) -> Callable[[int], float]:
    """``tail`` with its chances fixed (the chances of one test, not of the next)."""
    return lambda observed: tail(observed, chances)


TESTS = ("rows_31", "refaits", "apres", "runs", "balance", "longest_run", "slug")


def _counted(name: str, text: str, trials: Sequence[tuple[bool, float]], *, upper: bool) -> Test:
    """How many of ``trials`` (hit, its chance) hit, against their Poisson-binomial law: the
    upper tail (``upper``) or both."""
    tail = poisson_binomial_upper if upper else poisson_binomial_two_sided
    observed = sum(hit for hit, _ in trials)
    chances = [p for _, p in trials]
    return Test(
        name,
        text,
        observed,
        sum(chances),
        len(trials),
        tail(observed, chances),
        tail=_given(tail, chances),
        support=range(len(trials) + 1),
    )


def sixain_tests(
    figures: Sequence[CoupFigures],
    cards: Sequence[str] = (),
    earlier: Mapping[str, Sequence[str]] | None = None,
    *,
    pack: int = 312,
    copies: int = 6,
) -> list[Test]:
    """The ``TESTS`` of one sixain: its coups' figures (``coup_figures``), and for the slug its
    ``cards`` as laid and the cards of the ``earlier`` sixains to compare them with."""
    counted = [f for f in figures if f.counted]
    tests = []
    # Rows at 31: every row begun, against its chance of 31 given every card before it.
    rows = [(f.noir_total == 31, f.p_noir_31) for f in counted]
    rows += [(f.rouge_total == 31, f.p_rouge_31) for f in counted if f.noir_total is not None]
    tests.append(
        _counted("rows_31", "rows totalling 31 (one-sided, more than chance)", rows, upper=True)
    )
    # Refaits: a first row at 31 followed by a second at 31.
    tests.append(
        _counted(
            "refaits",
            "refaits after a first row of 31 (one-sided, more than chance)",
            [(f.result == "refait", f.p_rouge_31) for f in counted if f.noir_total == 31],
            upper=True,
        )
    )
    # Après: a second row equal to a first row of 32..40.
    tests.append(
        _counted(
            "apres",
            "après after a first row of 32..40 (two-sided)",
            [
                (f.result == "apres", f.p_rouge_same)
                for f in counted
                if f.noir_total is not None and f.noir_total > 31
            ],
            upper=False,
        )
    )
    # Runs of noir and rouge among the decisive coups.
    results = [f.result for f in counted if f.result in ("noir", "rouge")]
    n1, n2, runs, longest = runs_of(results)
    law = runs_law(n1, n2)
    tests.append(
        Test(
            "runs",
            "runs of noir and rouge (two-sided: streaks or alternation)",
            runs,
            float(sum((r * p for r, p in law.items()), Fraction(0))),
            n1 + n2,
            runs_two_sided(runs, n1, n2) if n1 and n2 else 1.0,
            f"{n1} noir, {n2} rouge",
            tail=lambda v: runs_two_sided(v, n1, n2) if n1 and n2 else 1.0,
            support=range(min(1, n1 + n2), n1 + n2 + 1),
        )
    )
    tests.append(
        Test(
            "balance",
            "noir wins against rouge wins (two-sided, a fair coin)",
            n1,
            (n1 + n2) / 2,
            n1 + n2,
            balance_two_sided(n1, n1 + n2),
            f"{n1} noir, {n2} rouge",
            tail=lambda v: balance_two_sided(v, n1 + n2),
            support=range(n1 + n2 + 1),
        )
    )
    tests.append(
        Test(
            "longest_run",
            "the longest run of one colour (one-sided, longer than a fair coin's)",
            longest,
            0.0,
            n1 + n2,
            longest_run_upper(longest, n1 + n2),
            f"{n1} noir, {n2} rouge",
            tail=lambda v: longest_run_upper(v, n1 + n2),
            support=range(min(1, n1 + n2), n1 + n2 + 1),
        )
    )
    others = earlier or {}
    there = sum(len(o) for o in others.values())
    common = longest_common_run(cards, others)
    tests.append(
        Test(
            "slug",
            "the longest run of cards repeated in order from an earlier sixain (one-sided)",
            common.length,
            0.0,
            len(others),
            # Below SEED cards nothing is looked for: the p-value is then 1, which errs on the
            # side of silence (P(p ≤ a) ≤ a still holds).
            common_run_upper(common.length, len(cards), there, pack, copies)
            if common.length
            else 1.0,
            f"{common.other} at card {common.there + 1}, here at card {common.here + 1}"
            if common.length
            else f"none of {SEED} cards or more",
            tail=lambda v: (
                common_run_upper(v, len(cards), there, pack, copies)
                if v >= SEED and others
                else 1.0
            ),
            support=range(len(cards) + 1),
        )
    )
    return tests
