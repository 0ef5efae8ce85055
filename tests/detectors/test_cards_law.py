"""The exact laws of the cards detector (casino/games/sixain_law.py) against brute force on small
cases, and the tests of a sixain on seeded shuffles: honest sixains raise no more than the
threshold says, stacked ones (planted refaits, a long run, a slug) are found.

The large measurement, quoted in docs/detectors.md:

    .venv/bin/python -m tests.detectors.test_cards_law honest 4000 1
    .venv/bin/python -m tests.detectors.test_cards_law stacked 200 2
"""

from __future__ import annotations

import doctest
import itertools
import math
import random
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from fractions import Fraction

import pytest

from casino.detectors.stats import binomial_upper
from casino.games import sixain_law as law
from casino.games.odds import first_coup
from tests.conftest import ROOT

CODES = [r + s for r in "A23456789TJQK" for s in "SHDC"]
ALPHA = 0.001  # casino/detectors/thresholds.py, checked equal below
PER_TEST = ALPHA / len(law.TESTS)  # one sixain per séance: Bonferroni over its tests


def pts(code: str) -> int:
    return min(10, "A23456789TJQK".index(code[0]) + 1)


def sixain(rng: random.Random) -> list[str]:
    cards = [c for c in CODES for _ in range(6)]
    rng.shuffle(cards)
    return cards


def deal_one(cards: Sequence[str], start: int) -> int:
    """Where the coup dealt from ``start`` ends (the cards run out: at the end)."""
    i, rows, total = start, 0, 0
    while i < len(cards) and rows < 2:
        total += pts(cards[i])
        i += 1
        if total > 30:
            rows, total = rows + 1, 0
    return i


def more_coups(cards: Sequence[str], start: int) -> bool:
    """The default end of the sixain (RULES.md 1.3): at least 8 cards and 62 points left."""
    rest = cards[start:]
    return len(rest) >= 8 and sum(pts(c) for c in rest) >= 62


def dealt(cards: Sequence[str]) -> list[list[str]]:
    coups, i = [], 0
    while more_coups(cards, i):
        j = deal_one(cards, i)
        coups.append(list(cards[i:j]))
        i = j
    return coups


def result_of(coup: Sequence[str]) -> str:
    noir, rouge = law.split_rows([pts(c) for c in coup])
    t1, t2 = sum(noir), sum(rouge)
    if t1 <= 30 or t2 <= 30:
        return "void"
    if t1 == t2:
        return "refait" if t1 == 31 else "apres"
    return "noir" if t1 < t2 else "rouge"


def stacked(rng: random.Random, wish: Callable[[int], set[str] | None]) -> list[str]:
    """A sixain prepared coup by coup: where ``wish(n)`` names results, the cards left are
    shuffled again until coup n comes out as one of them (at most 2000 times); the order is
    still a sixain's 312 cards."""
    rest, order, n = sixain(rng), [], 0
    while more_coups(rest, 0):
        wanted = wish(n)
        for _ in range(2000 if wanted else 1):
            end = deal_one(rest, 0)
            if not wanted or result_of(rest[:end]) in wanted:
                break
            rng.shuffle(rest)
        order += rest[:end]
        rest = rest[end:]
        n += 1
    return order + rest


def refaits_planted(count: int, rng: random.Random) -> Callable[[int], set[str] | None]:
    """``count`` refaits at random among the first 25 coups (a sixain deals about 29)."""
    chosen = set(rng.sample(range(25), count))
    return lambda n: {"refait"} if n in chosen else None


def run_planted(length: int, at: int = 10) -> Callable[[int], set[str] | None]:
    """``length`` coups from coup ``at`` on where noir wins (après and refaits in between are
    dealt again: they would break nothing, but the run is of decisive coups)."""
    return lambda n: {"noir"} if at <= n < at + length else None


def sixain_tests_of(
    cards: Sequence[str], earlier: dict[str, Sequence[str]] | None = None
) -> list[law.Test]:
    coups = dealt(cards)
    figures = law.coup_figures(
        law.composition_of_decks(6),
        [law.DealtCoup(str(n + 1), tuple(pts(c) for c in coup)) for n, coup in enumerate(coups)],
    )
    laid = [c for coup in coups for c in coup]
    return law.sixain_tests(figures, laid, earlier)


# --- the laws against brute force ----------------------------------------------------------------


def test_the_module_says_what_it_does() -> None:
    assert doctest.testmod(law).failed == 0


def test_the_laws_import_without_django() -> None:
    # STYLE.md 1, as tests/games/test_purity.py checks the engines.
    probe = (
        "import sys, casino.games.sixain_law; "
        "print(','.join(m for m in sys.modules if m.split('.')[0] in ('django', 'celery')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin"},
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


def test_the_posted_threshold_is_the_one_measured_here() -> None:
    from casino.detectors.thresholds import ALPHA as POSTED

    assert POSTED == ALPHA


@pytest.mark.parametrize(
    "counts",
    [
        {10: 4, 1: 2, 5: 2, 9: 1},
        {10: 3, 2: 3, 7: 2, 3: 1, 9: 1},
        {10: 2, 1: 4, 8: 1, 6: 2},  # can run out before 31
    ],
)
def test_the_row_law_is_the_enumeration_of_every_order(counts: dict[int, int]) -> None:
    cards = [v for v, n in counts.items() for _ in range(n)]
    orders = set(itertools.permutations(cards))
    found: Counter[int | None] = Counter()
    for order in orders:
        total = 0
        for v in order:
            total += v
            if total > 30:
                break
        found[total if total > 30 else None] += 1
    computed = law.row_law(counts)
    for t in range(31, 41):
        assert computed.p(t) == pytest.approx(float(Fraction(found[t], len(orders))), abs=1e-12)
    assert computed.incomplete == pytest.approx(found[None] / len(orders), abs=1e-12)


def test_the_row_law_is_the_odds_module_s_first_row_on_depleted_sixains() -> None:
    rng = random.Random(5)
    for _ in range(3):
        left = [pts(c) for c in sixain(rng)][rng.randrange(0, 300) :]
        counts = dict(Counter(left))
        expected = first_coup(counts)
        computed = law.row_law(counts)
        for t in range(31, 41):
            assert computed.p(t) == pytest.approx(expected.row[t], abs=1e-13)
        assert computed.incomplete == pytest.approx(expected.incomplete, abs=1e-13)


def test_one_card_less_by_division_is_the_talon_built_again() -> None:
    counts = law.composition_of_decks(6)
    whole = law._partials(counts)
    for v in law.VALUES:
        again = law._partials({u: counts[u] - (u == v) for u in law.VALUES})
        assert law._less_one(whole, v) == pytest.approx(again, rel=1e-12)


def test_the_poisson_binomial_tails_are_the_sum_over_every_outcome() -> None:
    chances = [0.1, 0.5, 0.03, 0.9, 0.25, 0.6]
    law_of: Counter[int] = Counter()
    for outcome in itertools.product((0, 1), repeat=len(chances)):
        mass = 1.0
        for hit, p in zip(outcome, chances, strict=True):
            mass *= p if hit else 1 - p
        law_of[sum(outcome)] += mass  # type: ignore[assignment]
    for k in range(len(chances) + 1):
        upper = sum(m for j, m in law_of.items() if j >= k)
        lower = sum(m for j, m in law_of.items() if j <= k)
        assert law.poisson_binomial_upper(k, chances) == pytest.approx(upper, abs=1e-14)
        assert law.poisson_binomial_two_sided(k, chances) == pytest.approx(
            min(1, 2 * min(upper, lower)), abs=1e-14
        )


@pytest.mark.parametrize(("n1", "n2"), [(1, 1), (3, 2), (4, 4), (6, 3), (5, 7)])
def test_the_runs_law_is_the_enumeration_of_every_arrangement(n1: int, n2: int) -> None:
    n = n1 + n2
    runs: Counter[int] = Counter()
    for noirs in itertools.combinations(range(n), n1):
        runs[law.runs_of(["noir" if i in noirs else "rouge" for i in range(n)])[2]] += 1
    whole = math.comb(n, n1)
    assert law.runs_law(n1, n2) == {r: Fraction(k, whole) for r, k in runs.items()}


@pytest.mark.parametrize("n", [1, 2, 5, 11])
def test_the_longest_run_and_the_balance_are_the_enumeration_of_every_sequence(n: int) -> None:
    sequences = list(itertools.product(("noir", "rouge"), repeat=n))
    longest = Counter(law.runs_of(s)[3] for s in sequences)
    noirs = Counter(law.runs_of(s)[0] for s in sequences)
    for m in range(1, n + 2):
        share = sum(k for j, k in longest.items() if j >= m) / len(sequences)
        assert law.longest_run_upper(m, n) == pytest.approx(share, abs=1e-12)
    for k in range(n + 1):
        lower = sum(c for j, c in noirs.items() if j <= k) / len(sequences)
        upper = sum(c for j, c in noirs.items() if j >= k) / len(sequences)
        assert law.balance_two_sided(k, n) == pytest.approx(min(1, 2 * min(lower, upper)))


def test_the_two_rows_of_a_coup_are_alike_so_noir_and_rouge_are_a_fair_coin() -> None:
    # The exact joint law of the coup's two rows (casino/games/odds.py) is symmetric for any
    # talon: the argument of docs/detectors.md for the balance and the longest run.
    rng = random.Random(11)
    for _ in range(2):
        counts = dict(Counter([pts(c) for c in sixain(rng)][rng.randrange(0, 280) :]))
        coup = first_coup(counts)
        assert coup.noir == pytest.approx(coup.rouge, abs=1e-14)
        for (a, b), p in coup.joint.items():
            assert coup.joint.get((b, a), 0.0) == pytest.approx(p, abs=1e-14)


def test_the_slug_bound_holds_on_a_small_pack_by_enumeration() -> None:
    # Two copies each of 3 cards (a pack of 6): every order of it against one fixed order; the
    # share of orders sharing a run of L cards with it is at most the union bound.
    fixed = ["a", "b", "c", "a", "b", "c"]
    orders = set(itertools.permutations(fixed))
    for length in (2, 3, 4):
        share = sum(_share_a_run(o, fixed, length) for o in orders) / len(orders)
        assert share <= law.common_run_upper(length, 6, 6, pack=6, copies=2)


def _share_a_run(a: Sequence[str], b: Sequence[str], length: int) -> bool:
    return any(
        tuple(a[i : i + length]) == tuple(b[j : j + length])
        for i in range(len(a) - length + 1)
        for j in range(len(b) - length + 1)
    )


def test_a_slug_is_found_and_measured_whole() -> None:
    rng = random.Random(3)
    before = sixain(rng)
    again = sixain(rng)
    again[100:130] = before[40:70]  # thirty cards put back in the same order
    common = law.longest_common_run(again, {"earlier": before})
    assert (common.length, common.here, common.there) >= (30, 100, 40)
    assert common.length < 40


# --- honest and stacked sixains ------------------------------------------------------------------


def test_honest_sixains_raise_no_more_than_the_threshold() -> None:
    # 60 seeded honest sixains, each against the one before for the slug. Each test is exact
    # or conservative: the share of p-values below 0.05 must not be beyond chance (the upper
    # 0.001 tail of a binomial at 0.05), and at the detector's threshold (ALPHA / 6 a test)
    # none fires (at the posted rate, 60 sixains hold a false alarm 6 % of the time; the large
    # measurement in docs/detectors.md finds the rate below ALPHA).
    rng = random.Random(2026)
    below, fired, previous = 0, 0, None
    for _ in range(60):
        cards = sixain(rng)
        tests = sixain_tests_of(cards, {"before": previous} if previous else None)
        below += sum(t.p_value < 0.05 for t in tests)
        fired += any(t.p_value < PER_TEST for t in tests)
        previous = dealt_cards(cards)
    assert binomial_upper(below, 60 * len(law.TESTS), 0.05) > 0.001
    assert fired == 0


def test_each_test_s_quiet_range_is_where_its_p_value_stays_above_the_threshold() -> None:
    rng = random.Random(3)
    stacked_one = stacked(rng, refaits_planted(12, rng))
    tests = {t.name: t for t in sixain_tests_of(stacked_one, {"x": dealt_cards(sixain(rng))})}
    for t in tests.values():
        assert t.tail is not None
        assert t.tail(int(t.observed)) == pytest.approx(t.p_value)
        low, high = t.quiet_range(PER_TEST)  # type: ignore[misc]
        assert t.tail(low) >= PER_TEST
        assert t.tail(high) >= PER_TEST
        assert high + 1 not in t.support or t.tail(high + 1) < PER_TEST
    assert tests["rows_31"].observed > tests["rows_31"].quiet_range(PER_TEST)[1]  # type: ignore[index]
    assert tests["slug"].quiet_range(PER_TEST) == (0, 5)  # six cards against one sixain


def dealt_cards(cards: Sequence[str]) -> list[str]:
    return [c for coup in dealt(cards) for c in coup]


def test_a_sixain_stacked_with_a_dozen_refaits_is_found_by_its_rows_at_31() -> None:
    rng = random.Random(7)
    found = 0
    for _ in range(5):
        tests = {t.name: t for t in sixain_tests_of(stacked(rng, refaits_planted(12, rng)))}
        found += tests["rows_31"].p_value < PER_TEST or tests["refaits"].p_value < PER_TEST
    assert found >= 4


def test_a_run_of_eighteen_noirs_is_found() -> None:
    rng = random.Random(8)
    found = 0
    for _ in range(5):
        tests = {t.name: t for t in sixain_tests_of(stacked(rng, run_planted(18)))}
        found += tests["longest_run"].p_value < PER_TEST
    assert found == 5


# --- the large measurement -----------------------------------------------------------------------


def _measure_honest(count: int, seed: int) -> None:
    rng = random.Random(seed)
    shares = {name: [0, 0, 0] for name in law.TESTS}
    fired, previous = 0, None
    for n in range(count):
        cards = sixain(rng)
        tests = sixain_tests_of(cards, {"before": previous} if previous else None)
        for t in tests:
            for i, level in enumerate((0.01, 0.001, PER_TEST)):
                shares[t.name][i] += t.p_value < level
        fired += any(t.p_value < PER_TEST for t in tests)
        previous = dealt_cards(cards)
        if (n + 1) % 500 == 0:
            print(f"{n + 1} sixains: {fired} raised", file=sys.stderr)
    print(f"{count} honest sixains (seed {seed}); share of p-values below:")
    print(f"| test | 0.01 | 0.001 | {PER_TEST:.3g} (the threshold) |")
    print("|---|---|---|---|")
    for name, (a, b, c) in shares.items():
        print(f"| {name} | {a / count:.4f} | {b / count:.4f} | {c / count:.4f} |")
    print(f"sixains raising a finding: {fired} of {count} ({fired / count:.2g}; posted {ALPHA})")


def _measure_stacked(count: int, seed: int) -> None:
    rng = random.Random(seed)
    plans: dict[str, Callable[[random.Random], list[str]]] = {
        f"{k} refaits planted": (lambda r, k=k: stacked(r, refaits_planted(k, r)))  # type: ignore[misc]
        for k in (6, 8, 10, 12)
    }
    for length in (12, 15, 18):
        plans[f"a run of {length} noirs"] = lambda r, n=length: stacked(r, run_planted(n))  # type: ignore[misc]
    print(f"| stacked sixain ({count} each, seed {seed}) | found | by |")
    print("|---|---|---|")
    for label, plan in plans.items():
        found, by = 0, Counter[str]()
        for _ in range(count):
            tests = sixain_tests_of(plan(rng))
            fired = [t.name for t in tests if t.p_value < PER_TEST]
            found += bool(fired)
            by.update(fired)
        print(f"| {label} | {found / count:.2f} | {dict(by)} |")


if __name__ == "__main__":
    what, count, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    {"honest": _measure_honest, "stacked": _measure_stacked}[what](count, seed)
