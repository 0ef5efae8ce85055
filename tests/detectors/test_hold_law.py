"""The law of the bank's result (``casino.games.hold_law``) against brute force, and the hold
test's false alarms and power on seeded séances played by the engine (no database).

The measurement quoted in docs/detectors.md (thousands of séances) is the entry point:

    .venv/bin/python -m tests.detectors.test_hold_law 4000 60      # séances, coups a séance

The suite runs a bounded version (fixed seeds) that still states and checks its rates.
"""

from __future__ import annotations

import doctest
import itertools
import math
import random
import sys
from dataclasses import dataclass, replace

import casino.games.hold_law
from casino.detectors.stats import binomial_upper
from casino.detectors.thresholds import ALPHA
from casino.games.cards import Colour, card
from casino.games.hold_law import (
    Chances,
    CoupLaw,
    CoupLaws,
    Joint,
    SumLaw,
    bank_result,
    coup_law,
    joint_of,
    settle_coup,
    sum_law,
)
from casino.games.money import bank_half, insurance_premium
from casino.games.odds import composition_of_decks, first_coup
from casino.games.reglement import PRESETS, Reglement, reglement
from casino.games.simulator import cut, random_stakes, shuffled
from casino.games.trente_et_quarante import (
    Chance,
    CoupDeal,
    Prisoner,
    Result,
    Stake,
    next_coup_begins,
    points,
)

MODERN = replace(reglement("trente-et-quarante-modern"), min_stake=500, max_stake=600_000)
HALF = Reglement(refait_mode="half")
CHANCES = Chances.of_shoe(MODERN)


def test_the_pure_module_says_what_it_does() -> None:
    assert doctest.testmod(casino.games.hold_law).failed == 0


def test_the_joint_outcomes_are_the_odds_modules() -> None:
    coup = first_coup(composition_of_decks(6))
    p = CHANCES.p
    assert math.isclose(sum(p.values()), 1.0, rel_tol=1e-12)
    assert math.isclose(p[Joint.NOIR_COULEUR] + p[Joint.NOIR_INVERSE], coup.noir, rel_tol=1e-12)
    assert p[Joint.NOIR_COULEUR] == p[Joint.NOIR_INVERSE]
    assert math.isclose(p[Joint.REFAIT], coup.refait, rel_tol=1e-12)
    for joint in Joint:  # each recorded result names its joint outcome
        o = joint.outcome
        assert joint_of(o.result.value, o.couleur.value if o.couleur else "") is joint


def test_couleur_is_independent_of_the_totals_in_a_colour_balanced_shoe() -> None:
    """The swap of spades with hearts and clubs with diamonds keeps every point value and flips
    the first card's colour: seeded deals and their swapped images give the same rows, and
    opposite couleurs whenever a row wins."""
    swap = str.maketrans("SHCD", "HSDC")
    rng = random.Random(5)
    for _ in range(200):
        cards = iter(shuffled(rng))
        one_deal, two_deal = CoupDeal(), CoupDeal()
        while not one_deal.complete:
            c = next(cards)
            one_deal.lay(c)
            two_deal.lay(card(str(c).translate(swap)))
        one, two = one_deal.outcome(), two_deal.outcome()
        assert (one.noir.total, one.rouge.total, one.result) == (
            two.noir.total,
            two.rouge.total,
            two.result,
        )
        if one.result in (Result.NOIR, Result.ROUGE):
            assert one.couleur != two.couleur
    assert card("KS").colour is Colour.BLACK
    assert card("KH").colour is Colour.RED


# --- one coup, by hand ---------------------------------------------------------------------------


def _by_hand(stakes: list[Stake], prison: list[Prisoner], rules: Reglement) -> dict[Joint, int]:
    """The bank's result per outcome from RULES.md §1 written out here, not through the engine:
    a winner is paid even money, a loser collected, après pushes, a refait takes half (``half``)
    or imprisons; an insured stake pays its premium and is untouched by a refait; a prisoner of
    level 1 is freed by a win (nothing to the bank), lost by a loss (its held amount to the bank)."""
    out = {}
    for joint in Joint:
        o = joint.outcome
        total = 0
        for s in stakes:
            result = o.chance(s.chance)
            if s.insured:
                total += insurance_premium(
                    s.amount, unit=rules.insurance_unit, premium=rules.insurance_premium
                )
                result = "push" if result == "refait" else result
            if result == "win":
                total -= s.amount
            elif result == "lose":
                total += s.amount
            elif result == "refait" and rules.refait_mode == "half":
                total += bank_half(s.amount)
        for p in prison:
            if o.chance(p.chance) == "lose":
                total += p.held
        out[joint] = total
    return out


def test_a_hedge_an_insured_stake_and_a_prisoner_against_the_rules_by_hand() -> None:
    insured = replace(HALF, insurance=True)
    cases = [
        ([Stake("r", Chance.ROUGE, 1000), Stake("n", Chance.NOIR, 1000)], [], HALF),
        ([Stake("r", Chance.ROUGE, 1000), Stake("n", Chance.NOIR, 600)], [], HALF),
        (
            [Stake("c", Chance.COULEUR, 5000, insured=True), Stake("i", Chance.INVERSE, 700)],
            [],
            insured,
        ),
        ([Stake("r", Chance.ROUGE, 300)], [Prisoner("old", Chance.NOIR, 2000, 1)], HALF),
    ]
    for stakes, prison, rules in cases:
        law = coup_law(CHANCES, stakes=stakes, prison=prison, reglement=rules)
        assert dict(law.by_joint) == _by_hand(stakes, prison, rules)
    hedge = coup_law(CHANCES, stakes=cases[0][0], prison=[], reglement=HALF)
    assert [v for v, _ in hedge.atoms] == [0, 1000]  # the hedge cancels but for the refait
    assert math.isclose(hedge.atoms[1][1], CHANCES.p[Joint.REFAIT])


def test_each_distinct_stake_settled_once_gives_every_coups_law_to_the_bit() -> None:
    """``CoupLaws`` adds up what each stake and prisoner gives alone, settled once per kind:
    seeded coups under every preset and refait mode (insured stakes, refait choices, prisoners
    carried from coup to coup, last coups, void coups) have exactly ``coup_law``'s results and
    law, and a séance that repeats its stakes settles each kind once."""
    rng = random.Random(1854)
    presets = [replace(reglement(name), min_stake=500, max_stake=60_000) for name in PRESETS]
    for rules in [*presets, HALF, replace(MODERN, refait_mode="choice")]:
        chances = Chances.of_shoe(rules)
        laws = CoupLaws(chances, rules)
        prison: list[Prisoner] = []
        for n in range(150):
            # A few amounts over and over, as at a table, and now and then any amount.
            stakes = random_stakes(rng, n, rng.randint(0, 6), rules)
            last, void = rng.random() < 0.1, rng.random() < 0.05
            expected = coup_law(
                chances, stakes=stakes, prison=prison, reglement=rules, last=last, void=void
            )
            got = laws.law(stakes=stakes, prison=prison, last=last, void=void)
            assert dict(got.by_joint) == dict(expected.by_joint), (rules.name, n)
            assert got.atoms == expected.atoms, (rules.name, n)
            joint = rng.choice(list(Joint))
            _, kept = settle_coup(
                joint, stakes=stakes, prison=prison, reglement=rules, last=last, void=void
            )
            prison = [] if last else list(kept)

    repeated = CoupLaws(CHANCES, HALF)
    stakes = [Stake(f"{i}", Chance.ROUGE, 1000) for i in range(10)]
    for _ in range(100):
        repeated.law(stakes=stakes, prison=())
    assert len(repeated._results) == 1


# --- many coups: exact convolution against enumeration --------------------------------------------


def _enumerate(
    coups: list[list[Stake]], prison: list[Prisoner], rules: Reglement
) -> tuple[dict[int, float], float]:
    """Every sequence of joint outcomes, the prison carried from coup to coup by the engine: the
    exact law of the total, and the sum along each path of the coup laws' means (the tower law)."""
    law: dict[int, float] = {}
    means = 0.0
    for path in itertools.product(list(Joint), repeat=len(coups)):
        p, total, mean, held = 1.0, 0, 0.0, list(prison)
        for joint, stakes in zip(path, coups, strict=True):
            p *= CHANCES.p[joint]
            mean += coup_law(CHANCES, stakes=stakes, prison=held, reglement=rules).mean
            settled, kept = settle_coup(joint, stakes=stakes, prison=held, reglement=rules)
            total += bank_result(settled)
            held = list(kept)
        law[total] = law.get(total, 0.0) + p
        means += p * mean
    return law, means


def test_the_sum_of_independent_coups_is_the_enumerated_law() -> None:
    coups = [
        [Stake("a", Chance.ROUGE, 200), Stake("b", Chance.NOIR, 100)],
        [Stake("c", Chance.COULEUR, 300)],
        [Stake("d", Chance.INVERSE, 100), Stake("e", Chance.ROUGE, 100)],
    ]
    exact, _ = _enumerate(coups, [], HALF)
    law = sum_law(coup_law(CHANCES, stakes=s, prison=[], reglement=HALF) for s in coups)
    assert law.exact
    assert law.slack == 0
    got = {int(law.offset + law.step * i): float(p) for i, p in enumerate(law.probs) if p > 0}
    assert set(got) == {v for v, p in exact.items() if p > 0}
    for value, p in exact.items():
        assert math.isclose(got[value], p, rel_tol=1e-9, abs_tol=1e-15)
    for value in exact:  # the tails the p-value reads
        assert math.isclose(law.at_least(value), sum(p for v, p in exact.items() if v >= value))


def test_the_tails_cut_are_those_of_the_whole_running_sum() -> None:
    """The cells cut at each coup are found in a first window of the law; beyond it, or with
    the whole law under the cut, the answer is the running sum over every cell's."""
    import numpy as np

    from casino.games.hold_law import _cells_within

    rng = random.Random(17)
    for size, mass in itertools.product((1, 3, 64, 65, 300), (0.0, 1e-9, 0.01, 0.5, 1.0)):
        probs = np.array([rng.random() ** 12 for _ in range(size)])
        probs /= probs.sum()
        for window in (1, 8, 64):
            expected = int(np.searchsorted(np.cumsum(probs), mass, side="right"))
            assert _cells_within(probs, mass, window) == expected, (size, mass, window)


def _uncut(laws: list[CoupLaw], law: SumLaw) -> SumLaw:
    """``law`` as the plain convolution gives it: coup by coup on its lattice, each amount
    rounded to it as ``sum_law`` rounds them, nothing cut from the tails."""
    import numpy as np

    offset, probs = 0, np.ones(1)
    for coup in laws:
        cells = [(round(v / law.step), p) for v, p in coup.atoms]
        low = min(k for k, _ in cells)
        one = np.zeros(max(k for k, _ in cells) - low + 1)
        for k, p in cells:
            one[k - low] += p
        offset, probs = offset + low, np.convolve(probs, one)
    return replace(law, offset=offset * law.step, probs=probs, dropped=0.0)


def test_a_seances_law_is_the_coup_by_coup_convolution_within_its_tails() -> None:
    """``sum_law`` takes the coups with one law together and multiplies by the FFT: seeded
    séances under every preset and refait mode (insured stakes, refait choices, prisoners, last
    and void coups; stakes drawn anew each coup, or from a table's regulars so that many coups
    share a law), on their amounts' lattice or a coarser one, against the plain convolution coup
    by coup with nothing cut. Every tail of the law (what a p-value reads) is within ``TAIL`` of
    it, plus 1e-13 for rounding; the 95 % band is the same, and so is the p-value to the three
    figures a report prints wherever it is above 1e-9. (Below, the coup-by-coup law of main
    differed in the third figure too: its tails were cut by up to ``TAIL`` as well.)"""
    import numpy as np

    from casino.games.hold_law import TAIL

    rng = random.Random(1866)
    presets = [replace(reglement(name), min_stake=500) for name in PRESETS]
    lattices = set()
    for rules in [*presets, HALF, replace(MODERN, refait_mode="choice")]:
        # Any amount up to 600, a few sets of them, or only chips of 5 (on their own lattice).
        for coups, regulars, top in ((60, 0, 60_000), (60, 4, 60_000), (200, 6, 500)):
            played = replace(rules, min_stake=500, max_stake=top)
            laws = play_seance(rng, coups, played, regulars=regulars).laws
            law = sum_law(laws)
            assert law.exact, (rules.name, coups)
            lattices.add(law.slack > 0)
            plain = _uncut(laws, law)
            assert law.dropped <= TAIL
            values = plain.offset + plain.step * np.arange(-1, len(plain.probs) + 1)
            for x in values[:: max(1, len(values) // 300)]:
                assert abs(law.at_least(x) - plain.at_least(x)) <= TAIL + 1e-13, x
                assert abs(law.at_most(x) - plain.at_most(x)) <= TAIL + 1e-13, x
            assert law.band() == plain.band()
            for z in np.linspace(-6, 6, 49):
                x = law.mean + z * law.sd
                if plain.p_value(x) > 1e-9:
                    assert f"{law.p_value(x):.3g}" == f"{plain.p_value(x):.3g}", (rules, z)
    assert lattices == {False, True}  # the amounts' own lattice and a coarser one, rounded to


def test_a_prisoner_is_counted_once_in_the_coup_that_settles_it() -> None:
    """Under ``prison``, an imprisoned stake brings nothing to the bank when imprisoned and its
    held amount when lost later: the enumerated total's mean is the sum of each coup's law's mean
    given the prison it began with, path by path (the increments are martingale differences)."""
    rules = Reglement()  # prison
    coups = [[Stake("a", Chance.ROUGE, 1000)], [Stake("b", Chance.NOIR, 100)], []]
    exact, means = _enumerate(coups, [Prisoner("old", Chance.NOIR, 500, 1)], rules)
    assert math.isclose(sum(v * p for v, p in exact.items()), means, rel_tol=1e-12)
    # At most: a refait imprisons the 1000 (the old prisoner goes down a level), noir wins (the
    # 1000 lost, the 100 paid), rouge wins (the old prisoner lost): 1000 − 100 + 500.
    assert max(exact) == 1000 - 100 + 500


def test_the_normal_tail_against_the_exact_law_of_a_seance() -> None:
    """Sixty coups of stakes in whole chips (exact on the lattice of 100): the normal law's
    two-sided p-values at 3 and 4 standard deviations against the exact law's."""
    rng = random.Random(11)
    laws = [
        coup_law(
            CHANCES,
            stakes=[
                Stake(f"{n}-{i}", rng.choice(list(Chance)), 100 * rng.choice([5, 10, 20, 50]))
                for i in range(rng.randint(0, 5))
            ],
            prison=[],
            reglement=HALF,
        )
        for n in range(60)
    ]
    exact = sum_law(laws)
    normal = SumLaw(exact.mean, exact.variance, exact.coups, False)
    assert exact.exact
    assert exact.dropped < 1e-12
    for z in (3.0, 4.0):
        for sign in (-1, 1):
            x = exact.mean + sign * z * exact.sd
            assert 1 / 3 < normal.p_value(x) / exact.p_value(x) < 3, (z, sign)
    low, high = exact.band()
    assert exact.at_most(low) >= 0.025
    assert exact.at_least(high) >= 0.025


def test_a_coarser_lattice_never_gives_a_smaller_p_value() -> None:
    rng = random.Random(12)
    laws = [
        coup_law(
            CHANCES,
            stakes=[Stake(f"{n}", rng.choice(list(Chance)), rng.randint(500, 60_000))],
            prison=[],
            reglement=HALF,
        )
        for n in range(40)
    ]
    fine = sum_law(laws, max_cells=10**7, max_work=1e12)
    coarse = sum_law(laws, max_cells=20_000, max_work=1e12)
    assert (fine.exact, fine.slack, coarse.exact) == (True, 0, True)
    assert coarse.slack > 0
    assert coarse.slack <= 0.05 * coarse.sd
    for z in (-4, -3, -2, 2, 3, 4):
        x = fine.mean + z * fine.sd
        assert coarse.p_value(x) >= fine.p_value(x)


# --- seeded séances played by the engine ------------------------------------------------------------


@dataclass(frozen=True)
class Seance:
    actual: int
    law: SumLaw
    laws: list[CoupLaw]


def play_seance(
    rng: random.Random,
    coups: int,
    rules: Reglement = MODERN,
    *,
    steer: float = 0.0,
    regulars: int = 0,
) -> Seance:
    """``coups`` coups from shuffled sixains with the simulator's random stakes, settled by the
    engine; ``steer``: the share of coups whose result the tailleur steers to the outcome that
    costs the bank most (the planted anomaly); ``regulars``: each coup's stakes drawn from that
    many sets of stakes drawn first, as at a table where the same players stake the same again
    (so that many coups have one law)."""
    talon: list[str] = []
    prison: list[Prisoner] = []
    laws: list[CoupLaw] = []
    actual = 0
    sets = [random_stakes(rng, n, rng.randint(0, 5), rules, prefix="r") for n in range(regulars)]
    for n in range(coups):
        if not talon:
            talon = [str(c) for c in cut(shuffled(rng), rng.randint(1, 311))]
        stakes = (
            rng.choice(sets)
            if sets
            else random_stakes(rng, n, rng.randint(0, 5), rules, prefix="p")
        )
        deal = CoupDeal(rules)
        while talon and not deal.complete:
            deal.lay(card(talon.pop(0)))
        values = [points(card(c), rules) for c in talon]
        last = not next_coup_begins(len(talon), sum(values), rules)
        outcome = deal.outcome()
        void = outcome.result is Result.INCOMPLETE
        law = coup_law(CHANCES, stakes=stakes, prison=prison, reglement=rules, last=last, void=void)
        joint = joint_of(outcome.result.value, outcome.couleur.value if outcome.couleur else "")
        if steer and not void and rng.random() < steer:
            joint = min(Joint, key=lambda j: law.by_joint[j])
        settled, kept = settle_coup(
            joint or Joint.APRES,
            stakes=stakes,
            prison=prison,
            reglement=rules,
            last=last,
            void=void,
        )
        actual += bank_result(settled)
        assert void or joint is None or bank_result(settled) == law.by_joint[joint]
        prison = list(kept)
        laws.append(law)
        if last:
            talon = []
    return Seance(actual, sum_law(laws), laws)


def rates(seances: int, coups: int, seed: int, steer: float = 0.0) -> list[float]:
    rng = random.Random(seed)
    return [
        (s := play_seance(rng, coups, steer=steer)).law.p_value(s.actual) for _ in range(seances)
    ]


def test_honest_seances_are_within_the_threshold() -> None:
    """120 honest séances of 60 coups: the p-values are as uniform as the draw allows (the share
    below 0.05 and below 0.01 within the binomial's 1e-4 tails) and none is below ALPHA (the chance
    that one of 120 is, at ALPHA = 0.001, is 11 %; this seed has none). Measured on 4000 séances
    with the entry point: see docs/detectors.md."""
    p = rates(120, 60, seed=2026)
    for level in (0.05, 0.01):
        below = sum(1 for v in p if v < level)
        assert binomial_upper(below, len(p), level) > 1e-4, (level, below)
    assert min(p) >= ALPHA


def test_steered_seances_are_found() -> None:
    """A tailleur steering one coup in two to the outcome that costs the bank most, over séances
    of 200 coups: found in 5 of these 6 seeded séances at least (measured: 170 in 200, and 200 in
    200 séances of 60 coups all steered; see docs/detectors.md)."""
    p = rates(6, 200, seed=7, steer=0.5)
    assert sum(1 for v in p if v < ALPHA) >= 5, p
    p = rates(3, 60, seed=8, steer=1.0)
    assert max(p) < ALPHA, p


def main(argv: list[str]) -> None:
    seances = int(argv[0]) if argv else 2000
    coups = int(argv[1]) if len(argv) > 1 else 60
    honest = rates(seances, coups, seed=1)
    print(f"honest séances: {seances} of {coups} coups")
    for level in (0.05, 0.01, 0.001, ALPHA / 20):
        below = sum(1 for v in honest if v < level)
        print(f"  p < {level:g}: {below} ({below / seances:.4%}; expected {level:.4%})")
    for length in (coups, 200):
        for steer in (0.1, 0.25, 0.5, 1.0):
            steered = rates(max(1, seances // 20), length, seed=2, steer=steer)
            found = sum(1 for v in steered if v < ALPHA)
            print(
                f"steered {steer:.0%} of {length} coups: found {found} of {len(steered)} "
                f"at ALPHA {ALPHA}"
            )


if __name__ == "__main__":
    main(sys.argv[1:])
