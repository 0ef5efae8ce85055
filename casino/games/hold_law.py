"""The law of the bank's result at Trente-et-Quarante, given the stakes actually placed.

One coup. The cards decide one of six joint outcomes (``Joint``): noir or rouge wins, with
couleur or inverse; après; refait of 31. Their probabilities come from the odds module
(``first_coup`` of the full shoe): noir, rouge, après and refait exactly, and couleur or inverse
half and half given the winner. That split is exact, not a guess: the couleur is the colour of
the first card of the first row, and swapping the suits spades with hearts and clubs with
diamonds maps each ordering of a shoe holding as many red as black cards of every value onto
another one, as likely, with the same point values (so the same rows, totals and winner) and the
opposite first colour; the first card's colour is therefore independent of the rows' totals, one
half each. The ``incomplete`` mass (the cards running out inside the first coup; nil for a full
shoe) is renormalised away: a coup recorded void is not random here (every stake returned, the
prisoners kept), and its result is what the engine says of a void coup.

The bank's result of the coup under each joint outcome is what the engine itself settles: all
the coup's stakes together with the prisoners it began with go through
``trente_et_quarante.settle`` (and ``refund_at_end`` on the last coup of a taille), and the bank
keeps Σ (to_bank + premium − paid) over the settlements (``bank_result``). So a hedge (rouge and
noir together) cancels where it cancels, an insured stake pays its premium whatever happens and
is not touched by a refait, and a prisoner is lost, freed or kept under that coup's outcome: an
imprisoned stake's money reaches the bank in the coup that settles it, never twice.

A sum of coups (a séance, a day, a month of one table). The coups' stakes are the players' choice,
possibly after seeing the earlier coups, and a prisoner's fate depends on the coups before; but
given everything up to a coup (the stakes on it and the prison it begins with), the coup's result
has exactly the law above. The results less their conditional means are martingale differences,
and the statistic is measured against the laws of the coups as they were actually staked:
``sum_law`` convolves them as independent (exact when the stakes and prisoners do not depend on
the earlier outcomes, and the law the martingale central limit theorem gives otherwise: the sum
of conditional variances is the variance used). Coups are also taken as dealt from a full shoe:
the players cannot see the cards to come, and over the shuffles each coup's outcome has the
first coup's law to within the effect of where in the talon it starts.

Exact while it fits: the sum lives on the lattice of the greatest common divisor of the amounts
the coups can give; while the lattice's cells between the sum's extremes (or ± 9 standard
deviations) stay under ``MAX_CELLS``, the law is convolved exactly (the coups with one law
together, by squaring, then in a balanced tree, by the FFT where the laws are long: rounding
errors of the order of 1e-16 of the whole mass in a cell), cutting the tails only where their
mass is below ``TAIL`` (1e-12 over the whole sum). Amounts in cents rarely share a useful divisor:
then a coarser lattice, each amount rounded to it, while the rounding errors add up to at most
``SLACK`` standard deviations (and coups × cells stays under ``MAX_WORK``); their bounded sum is
read conservatively (the tails a ``slack`` further out), so the p-value is never smaller than the
exact law's. Otherwise the normal law with the exact mean and
variance: many independent bounded coups; the Berry–Esseen bound
(Shevtsova's constant 0.56 for non-identical summands) is given with each normal law, and the
tests check the normal tail against the exact law on a séance that fits both.

>>> chances = Chances.of_shoe(Reglement())
>>> hedge = [Stake("r", Chance.ROUGE, 100), Stake("n", Chance.NOIR, 100)]
>>> law = coup_law(chances, stakes=hedge, prison=(), reglement=Reglement(refait_mode="half"))
>>> sorted({v for v, _ in law.atoms})   # a hedge only loses to the refait (half of each)
[0, 100]
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from functools import lru_cache, reduce

import numpy as np
import numpy.typing as npt

from casino.games.odds import FirstCoup, composition_of_decks, first_coup
from casino.games.reglement import Reglement
from casino.games.trente_et_quarante import (
    Chance,
    Couleur,
    CoupOutcome,
    Prisoner,
    Result,
    Row,
    Settlement,
    Stake,
    refund_at_end,
    settle,
)

__all__ = [
    "Chance",
    "Chances",
    "CoupLaw",
    "CoupLaws",
    "Joint",
    "SumLaw",
    "coup_law",
    "sum_law",
]

MAX_CELLS = 200_000  # lattice cells of an exact law
MAX_WORK = 1e8  # coups × cells of a law on a coarser lattice; beyond, the normal law
SLACK = 0.05  # a coarser lattice's rounding errors add up to at most this many sd
TAIL = 1e-12  # the mass an exact law may drop from its tails, in all
BERRY_ESSEEN = 0.56  # Shevtsova (2010), independent non-identically distributed summands
Z95 = 1.959963984540054

Array = npt.NDArray[np.float64]


class Joint(Enum):
    """What the cards of one coup decide, for every stake at once."""

    __hash__ = object.__hash__  # as cards.Suit's: each coup's law looks up its six outcomes

    NOIR_COULEUR = "noir, couleur"
    NOIR_INVERSE = "noir, inverse"
    ROUGE_COULEUR = "rouge, couleur"
    ROUGE_INVERSE = "rouge, inverse"
    APRES = "après"
    REFAIT = "refait"

    @property
    def outcome(self) -> CoupOutcome:
        """The engine's outcome (rows left empty: settlement reads only result and couleur)."""
        result, couleur = _OUTCOMES[self]
        return CoupOutcome(Row(), Row(), result, couleur)


_OUTCOMES: dict[Joint, tuple[Result, Couleur | None]] = {
    Joint.NOIR_COULEUR: (Result.NOIR, Couleur.COULEUR),
    Joint.NOIR_INVERSE: (Result.NOIR, Couleur.INVERSE),
    Joint.ROUGE_COULEUR: (Result.ROUGE, Couleur.COULEUR),
    Joint.ROUGE_INVERSE: (Result.ROUGE, Couleur.INVERSE),
    Joint.APRES: (Result.APRES, None),
    Joint.REFAIT: (Result.REFAIT, None),
}


def joint_of(result: str, couleur: str) -> Joint | None:
    """The joint outcome of a recorded result (``CoupResult.result``, ``.couleur``)."""
    for joint, (r, c) in _OUTCOMES.items():
        if r.value == result and (c.value if c else "") == (couleur or ""):
            return joint
    return None


@dataclass(frozen=True)
class Chances:
    """The probability of each joint outcome of a coup."""

    p: Mapping[Joint, float]

    @classmethod
    def of_first_coup(cls, coup: FirstCoup) -> Chances:
        complete = coup.noir + coup.rouge + coup.apres + coup.refait  # incomplete renormalised
        noir, rouge = coup.noir / complete / 2, coup.rouge / complete / 2
        return cls(
            {
                Joint.NOIR_COULEUR: noir,
                Joint.NOIR_INVERSE: noir,
                Joint.ROUGE_COULEUR: rouge,
                Joint.ROUGE_INVERSE: rouge,
                Joint.APRES: coup.apres / complete,
                Joint.REFAIT: coup.refait / complete,
            }
        )

    @classmethod
    def of_shoe(cls, reglement: Reglement, decks: int = 6) -> Chances:
        """The first coup of a full shoe of ``decks`` packs under the règlement's face values."""
        return _chances(reglement.face_values, decks)


@lru_cache(maxsize=16)
def _chances(faces: tuple[int, int, int], decks: int) -> Chances:
    return Chances.of_first_coup(
        first_coup(composition_of_decks(decks, Reglement(face_values=faces)))
    )


def bank_result(settlements: Iterable[Settlement]) -> int:
    """What the bank kept of a coup: Σ to_bank + premium − paid (a held stake is not yet kept)."""
    return sum(s.to_bank + s.premium - s.paid for s in settlements)


def settle_coup(
    joint: Joint,
    *,
    stakes: Sequence[Stake],
    prison: Sequence[Prisoner],
    reglement: Reglement,
    last: bool = False,
    void: bool = False,
) -> tuple[tuple[Settlement, ...], tuple[Prisoner, ...]]:
    """The engine's settlement of a coup under ``joint``, as the floor settles it: a refait on the
    last coup is void where the règlement says so, and prisoners left at the end of the taille are
    refunded or carried as it says."""
    void = void or (joint is Joint.REFAIT and last and reglement.refait_void_on_last_coup)
    settled = settle(joint.outcome, void=void, stakes=stakes, prison=prison, reglement=reglement)
    settlements, prison_after = settled.settlements, settled.prison
    if last:
        refunds, prison_after = refund_at_end(prison_after, reglement)
        settlements = settlements + refunds
    return settlements, prison_after


@dataclass(frozen=True)
class CoupLaw:
    """The bank's result of one coup: ``by_joint`` under each outcome, ``atoms`` its law
    (distinct results and their probabilities)."""

    by_joint: Mapping[Joint, int]
    atoms: tuple[tuple[int, float], ...]

    @property
    def mean(self) -> float:
        return sum(v * p for v, p in self.atoms)

    @property
    def variance(self) -> float:
        m = self.mean
        return sum(p * (v - m) ** 2 for v, p in self.atoms)

    @property
    def third(self) -> float:
        """E|X − μ|³ (for the Berry–Esseen bound)."""
        m = self.mean
        return sum(p * abs(v - m) ** 3 for v, p in self.atoms)


def coup_law(
    chances: Chances,
    *,
    stakes: Sequence[Stake],
    prison: Sequence[Prisoner],
    reglement: Reglement,
    last: bool = False,
    void: bool = False,
) -> CoupLaw:
    """The bank's result of a coup under each of its joint outcomes, with their probabilities.

    >>> law = coup_law(Chances.of_shoe(Reglement()), stakes=[Stake("a", Chance.COULEUR, 100)],
    ...                prison=(), reglement=Reglement(refait_mode="half"))
    >>> [v for v, _ in law.atoms]   # won, après, refait (half taken), lost
    [-100, 0, 50, 100]
    """
    by_joint = {
        joint: bank_result(
            settle_coup(
                joint, stakes=stakes, prison=prison, reglement=reglement, last=last, void=void
            )[0]
        )
        for joint in Joint
    }
    return _law_of(chances, by_joint)


def _law_of(chances: Chances, by_joint: Mapping[Joint, int]) -> CoupLaw:
    """The law of a coup whose result under each joint outcome is ``by_joint``."""
    mass: dict[int, float] = {}
    for joint, value in by_joint.items():
        if chances.p[joint] > 0:
            mass[value] = mass.get(value, 0.0) + chances.p[joint]
    return CoupLaw(by_joint, tuple(sorted(mass.items())))


class CoupLaws:
    """``coup_law`` for the many coups of one reading under one règlement, each distinct stake
    and prisoner settled by the engine once rather than once per coup.

    A coup's result under a joint outcome is the sum of what each of its prisoners and stakes
    gives alone: ``settle`` settles each one on its own (its chance against the outcome, its own
    insurance and refait choice), and ``refund_at_end`` refunds each prisoner on its own. So each
    stake (chance, amount, insurance, refait choice) and each prisoner (chance, held, level) goes
    through ``settle_coup`` by itself under the six outcomes, once per kind of coup (last of its
    taille, void), and its six results are added up wherever it comes again: a séance repeats a
    handful of stakes thousands of times. The sums are integers, so each coup's law is the one
    ``coup_law`` gives, to the bit (the tests hold the two together on random coups).

    >>> laws = CoupLaws(Chances.of_shoe(Reglement()), Reglement(refait_mode="half"))
    >>> hedge = [Stake("r", Chance.ROUGE, 100), Stake("n", Chance.NOIR, 100)]
    >>> sorted({v for v, _ in laws.law(stakes=hedge, prison=()).atoms})
    [0, 100]
    """

    def __init__(self, chances: Chances, reglement: Reglement) -> None:
        self.chances = chances
        self.reglement = reglement
        self._results: dict[tuple[object, ...], tuple[int, ...]] = {}

    def law(
        self,
        *,
        stakes: Sequence[Stake],
        prison: Sequence[Prisoner],
        last: bool = False,
        void: bool = False,
    ) -> CoupLaw:
        totals = [0] * len(Joint)
        key: tuple[object, ...]  # what the engine reads of a prisoner or a stake, and the coup
        for p in prison:
            key = ("prisoner", p.chance, p.held, p.level, last, void)
            self._add(totals, key, stakes=(), prison=(p,), last=last, void=void)
        for s in stakes:
            key = ("stake", s.chance, s.amount, s.insured, s.on_refait, last, void)
            self._add(totals, key, stakes=(s,), prison=(), last=last, void=void)
        return _law_of(self.chances, dict(zip(Joint, totals, strict=True)))

    def _add(
        self,
        totals: list[int],
        key: tuple[object, ...],
        *,
        stakes: Sequence[Stake],
        prison: Sequence[Prisoner],
        last: bool,
        void: bool,
    ) -> None:
        results = self._results.get(key)
        if results is None:
            alone = coup_law(
                self.chances,
                stakes=stakes,
                prison=prison,
                reglement=self.reglement,
                last=last,
                void=void,
            )
            results = self._results[key] = tuple(alone.by_joint[joint] for joint in Joint)
        for i, value in enumerate(results):
            totals[i] += value


@dataclass(frozen=True)
class SumLaw:
    """The law of the bank's result over many coups.

    ``exact``: ``probs[i]`` is P(S = ``offset`` + i·``step``) (tails below ``dropped`` cut);
    otherwise the normal law of ``mean`` and ``variance`` (``berry_esseen`` bounds its error on
    the distribution function).
    """

    mean: float
    variance: float
    coups: int
    exact: bool
    offset: int = 0
    step: int = 1
    probs: Array = field(default_factory=lambda: np.ones(1))
    dropped: float = 0.0
    berry_esseen: float = 0.0
    slack: float = 0.0  # amounts rounded to the lattice: the sum is off by at most this

    @property
    def sd(self) -> float:
        return math.sqrt(self.variance)

    def z(self, observed: float) -> float:
        return 0.0 if self.variance <= 0 else (observed - self.mean) / self.sd

    def _values(self) -> Array:
        return self.offset + self.step * np.arange(len(self.probs), dtype=np.float64)

    def at_most(self, observed: float) -> float:
        """P(S ≤ observed)."""
        if not self.exact:
            return 0.5 * math.erfc(-self.z(observed) / math.sqrt(2)) if self.variance else 1.0
        return float(min(1.0, self.probs[self._values() <= observed + self.slack + 1e-9].sum()))

    def at_least(self, observed: float) -> float:
        """P(S ≥ observed)."""
        if not self.exact:
            return 0.5 * math.erfc(self.z(observed) / math.sqrt(2)) if self.variance else 1.0
        return float(min(1.0, self.probs[self._values() >= observed - self.slack - 1e-9].sum()))

    def p_value(self, observed: float) -> float:
        """Two-sided: a table winning too much is as much a question as one losing too much
        (twice the smaller tail, at most 1)."""
        if self.variance <= 0:
            return 1.0 if abs(observed - self.mean) < 0.5 else 0.0
        return min(1.0, 2 * min(self.at_most(observed), self.at_least(observed)))

    def quantile(self, q: float) -> float:
        """The least value v with P(S ≤ v) ≥ q (the normal law's quantile when not exact)."""
        if not self.exact:
            return self.mean + self.sd * _normal_quantile(q)
        cumulative = np.cumsum(self.probs)
        index = int(np.searchsorted(cumulative, q * cumulative[-1]))
        value = float(self.offset + self.step * min(index, len(self.probs) - 1))
        return value - self.slack if q < 0.5 else value + self.slack

    def band(self, level: float = 0.95) -> tuple[float, float]:
        """The central band holding ``level`` of the law (exact quantiles where exact)."""
        return self.quantile((1 - level) / 2), self.quantile((1 + level) / 2)


def _normal_quantile(q: float) -> float:
    """Φ⁻¹(q) by bisection on erfc (the few quantiles a report needs; no SciPy)."""
    lo, hi = -40.0, 40.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if 0.5 * math.erfc(-mid / math.sqrt(2)) < q:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def sum_law(
    laws: Iterable[CoupLaw],
    *,
    max_cells: int = MAX_CELLS,
    max_work: float = MAX_WORK,
    tail: float = TAIL,
    slack: float = SLACK,
) -> SumLaw:
    """The law of the sum of the coups' results, taken as independent given their stakes.

    Exact on the lattice of the amounts' gcd when it fits in ``max_cells``; else on a coarser
    lattice, each amount rounded to it, when the rounding errors add up to at most ``slack``
    standard deviations and the work (coups × cells) stays under ``max_work``: the tails are then
    read ``SumLaw.slack`` further out, so the p-value is never smaller than the exact law's;
    else the normal law.

    >>> c = Chances.of_shoe(Reglement())
    >>> one = coup_law(c, stakes=[Stake("a", Chance.ROUGE, 100)], prison=(), reglement=Reglement())
    >>> law = sum_law([one, one])
    >>> law.exact, law.step, round(law.at_least(200), 6) == round(sum(p for v, p in one.atoms
    ...     if v == 100) ** 2, 6)
    (True, 100, True)
    """
    laws = [law for law in laws if law.atoms != ((0, 1.0),)]
    mean = sum(law.mean for law in laws)
    variance = sum(law.variance for law in laws)
    third = sum(law.third for law in laws)
    berry = BERRY_ESSEEN * third / variance**1.5 if variance > 0 else 0.0
    normal = SumLaw(mean, variance, len(laws), False, berry_esseen=berry)
    values = [v for law in laws for v, _ in law.atoms]
    step = reduce(math.gcd, (abs(v) for v in values), 0)
    if not laws or step == 0:
        return SumLaw(mean, variance, len(laws), True, offset=0, step=1, probs=np.ones(1))
    span = sum(law.atoms[-1][0] - law.atoms[0][0] for law in laws)

    def cells(step: int) -> float:
        return min(span, 18 * math.sqrt(variance)) / step

    if cells(step) <= max_cells:
        exact = _convolve(laws, step, tail, max_cells)
        if exact is not None:
            return replace(exact, mean=mean, variance=variance, berry_esseen=berry)
    coarse = max(step, int(2 * slack * math.sqrt(variance) / len(laws)))
    if cells(coarse) <= max_cells and len(laws) * cells(coarse) <= max_work:
        rounded = _convolve(laws, coarse, tail, max_cells)
        if rounded is not None:
            return replace(rounded, mean=mean, variance=variance, berry_esseen=berry)
    return normal


def _convolve(laws: list[CoupLaw], step: int, tail: float, max_cells: int) -> SumLaw | None:
    """The laws' convolution on the lattice ``step`` (each amount rounded to it: the errors'
    sum bound is the law's ``slack``); None when it outgrows ``max_cells``.

    Coup by coup, each coup cost as many cells as the running law held, and those grow as the
    square root of the coups: a séance's law grew as n^1.5. So the coups with the same law on
    the lattice (a séance repeats its stakes) are taken together, that law raised to their
    number by squaring, and these powers are multiplied in a balanced tree: a product of two
    laws of many cells goes through the FFT (``_product``). Each product cuts its tails, at most
    ``_Cut.each_side`` of mass, so that the whole still loses at most ``tail``; the tests hold
    the result to the coup-by-coup law within that."""
    groups: dict[tuple[tuple[int, float], ...], int] = {}
    slack = 0.0
    for law in laws:
        cells = tuple((round(v / step), p) for v, p in law.atoms)
        slack += max(abs(v - k * step) for (v, _), (k, _) in zip(law.atoms, cells, strict=True))
        groups[cells] = groups.get(cells, 0) + 1
    cut = _Cut(tail, len(laws), max_cells)
    try:
        powers = [_power(_Part.of(cells), count, cut) for cells, count in groups.items()]
        whole = _tree(powers, cut)
    except _TooLarge:
        return None
    return SumLaw(
        0.0,
        0.0,
        len(laws),
        True,
        offset=whole.offset * step,
        step=step,
        probs=whole.probs,
        dropped=whole.dropped,
        slack=slack,
    )


class _TooLarge(Exception):
    """A partial law outgrew ``max_cells``: the caller falls back to a coarser lattice."""


@dataclass(frozen=True)
class _Part:
    """The law of some of the coups: ``probs[i]`` is P(sum = (``offset`` + i) lattice steps),
    for ``coups`` coups, ``dropped`` the mass cut from its tails so far."""

    offset: int
    probs: Array
    coups: int
    dropped: float = 0.0

    @classmethod
    def of(cls, cells: Sequence[tuple[int, float]]) -> _Part:
        low = min(k for k, _ in cells)
        probs = np.zeros(max(k for k, _ in cells) - low + 1)
        for k, p in cells:  # two amounts may round to one cell
            probs[k - low] += p
        return cls(low, probs, 1)


@dataclass(frozen=True)
class _Cut:
    """How much mass a product may cut from each of its tails (and how many cells it may keep).

    A product of ``m`` of the ``coups`` coups cuts at most tail·m / (8·coups·depth) each side,
    ``depth`` the bit length of ``coups``. A law's deficit adds up its factors', times how often
    each factor is used: raising to the power k, the squares' cuts count at most
    tail·k / (8·coups) each side in all (the square of 2^j coups is used k / 2^j times, for
    fewer than ``depth`` squares) and the multiplications into the power as much again; each
    coup is in fewer than ``depth`` levels of the tree, tail / 8 each side. So the whole loses
    at most 3/4 of ``tail``."""

    tail: float
    coups: int
    max_cells: int

    def each_side(self, coups: int) -> float:
        return self.tail * coups / (8 * self.coups * self.coups.bit_length())


def _power(part: _Part, count: int, cut: _Cut) -> _Part:
    """``part`` convolved with itself ``count`` times, by squaring."""
    result: _Part | None = None
    while count:
        if count & 1:
            result = part if result is None else _product(result, part, cut)
        count >>= 1
        if count:
            part = _product(part, part, cut)
    assert result is not None  # count was at least 1
    return result


def _tree(parts: list[_Part], cut: _Cut) -> _Part:
    """The product of ``parts``, two by two in rounds, so that every product is of laws of
    about the same number of coups."""
    while len(parts) > 1:
        pairs = [_product(a, b, cut) for a, b in zip(parts[::2], parts[1::2], strict=False)]
        parts = pairs + parts[len(parts) - len(parts) % 2 :]  # an odd one waits a round
    return parts[0]


DIRECT = 64  # cells of the shorter law up to which a product is direct rather than by FFT


def _product(a: _Part, b: _Part, cut: _Cut) -> _Part:
    """The law of the two parts' sum, its tails cut. Direct when one is short, as a coup's law
    is: each cell a sum of products, as exact as floating point goes. Else by the FFT, whose
    rounding is of the order of 1e-16 of the whole mass in every cell (far below what the
    tails may lose): the few cells it makes negative are set to nought."""
    if min(len(a.probs), len(b.probs)) <= DIRECT:
        probs = np.convolve(a.probs, b.probs)
    else:
        size = len(a.probs) + len(b.probs) - 1
        fast = 1 << (size - 1).bit_length()
        spectrum = np.fft.rfft(a.probs, fast) * np.fft.rfft(b.probs, fast)
        probs = np.maximum(np.fft.irfft(spectrum, fast)[:size], 0.0)
    coups = a.coups + b.coups
    limit = cut.each_side(coups)
    front = _cells_within(probs, limit)
    back = _cells_within(probs[::-1], limit)
    if front + back >= len(probs):
        front = back = 0
    lost = float(probs[:front].sum() + probs[len(probs) - back :].sum())
    probs = probs[front : len(probs) - back]
    if len(probs) > cut.max_cells:
        raise _TooLarge
    # The mass kept is (1 − a's deficit)(1 − b's) less what is cut here.
    dropped = a.dropped + b.dropped - a.dropped * b.dropped + lost
    return _Part(a.offset + b.offset + front, probs, coups, dropped)


def _cells_within(probs: Array, cut: float, window: int = 64) -> int:
    """How many leading cells hold at most ``cut`` of mass together. The running sum is taken
    over a first window only, where the answer almost always lies: over the whole array, for
    every product, it made the séance's law grow faster than its coups. (The window's running sums
    are the whole array's first ones, so the answer is the same.)"""
    head = np.cumsum(probs[:window])
    found = int(np.searchsorted(head, cut, side="right"))
    if found < len(head):
        return found
    return int(np.searchsorted(np.cumsum(probs), cut, side="right"))
