"""Exact odds of Trente-et-Quarante for a given shoe (RULES.md §1; REPLAY.md, Odds).

The first coup dealt from a shoe of known composition: the distribution of the first row's total,
of the coup's result, and the bank's advantage and variance per unit staked on each chance under
each refait mode, with and without insurance. Exact enumeration, never simulation.

How. Cards matter only by point value (classes 1..10). The probability that the first row is the
partial multiset A followed by a card v1, and the second row B followed by v2, is

    c_v1 (c_v2 - [v1 = v2]) * |A|! |B|! / (N)_(|A|+|B|+2) * prod_v multinomial(c~_v; a_v, b_v)

with c~ the composition less v1 and v2 (every ordering of A is a valid row, since every prefix
of A sums to at most 30). The products of multinomials are the coefficients of

    G(c) = prod_v (1 + x^v y + z^v w)^(c_v)

(x, z count the rows' points up to 30; y, w their cards), truncated at 30 points per row: one
4-dimensional polynomial, built once. Removing v1 and v2 from the shoe is dividing G by
(1 + x^v1 y + z^v1 w)(1 + x^v2 y + z^v2 w), a cheap recursion. Floats carry the sums (all terms
positive, about 15 significant digits); the tests compare them with exact rational enumeration on
small shoes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

from casino.games.errors import GameError
from casino.games.reglement import Reglement

ROW_MAX = 30  # a row is laid while its total is at most 30
VALUES = range(1, 11)
KEYS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "T")

Array = npt.NDArray[np.float64]


class InvalidComposition(GameError):
    """A shoe composition that is not counts of A, 2..9 and T (figures under T)."""

    code = "invalid_composition"


def composition_of_decks(decks: int, reglement: Reglement | None = None) -> dict[int, int]:
    """Counts by point value of a full shoe of ``decks`` packs (figures by ``face_value``)."""
    if not isinstance(decks, int) or isinstance(decks, bool) or not 1 <= decks <= 8:
        raise InvalidComposition(f"--decks takes 1 to 8 packs, not {decks!r}", where="decks")
    faces = (reglement or Reglement()).face_values
    counts = {v: 4 * decks for v in range(1, 10)}
    counts[10] = 4 * decks
    for face in faces:
        counts[face] += 4 * decks
    return counts


def parse_composition(raw: Any) -> dict[int, int]:
    """``{"A": 24, "2": 24, ..., "T": 96}`` by point value; absent keys count 0."""
    if not isinstance(raw, dict):
        raise InvalidComposition(
            'composition is an object like {"A": 24, ..., "T": 96}', where="composition"
        )
    counts = dict.fromkeys(VALUES, 0)
    for key, value in raw.items():
        if key not in KEYS:
            raise InvalidComposition(
                f"{key!r} is not one of {', '.join(KEYS)}", where=f"composition.{key}"
            )
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise InvalidComposition(f"{value!r} is not a count", where=f"composition.{key}")
        counts[KEYS.index(key) + 1] = value
    if sum(counts.values()) == 0:
        raise InvalidComposition("the shoe is empty", where="composition")
    return counts


def _multinomial(c: int, a: int, b: int) -> float:
    if a + b > c:
        return 0.0
    return float(math.comb(c, a) * math.comb(c - a, b))


def _generating(counts: Mapping[int, int], size: int) -> Array:
    """Coefficients of prod_v (1 + x^v y + z^v w)^(c_v), truncated; axes (sA, nA, sB, nB)."""
    g = np.zeros((ROW_MAX + 1, size, ROW_MAX + 1, size))
    g[0, 0, 0, 0] = 1.0
    for v, c in counts.items():
        if c == 0:
            continue
        most = min(ROW_MAX // v, c, size - 1)
        terms = [(a, b) for a in range(most + 1) for b in range(most + 1 - 0) if a + b <= c]
        if 2 * c < len(terms):
            for _ in range(c):  # multiply by (1 + X + Y), c times
                new = g.copy()
                new[v:, 1:, :, :] += g[:-v, :-1, :, :]
                new[:, :, v:, 1:] += g[:, :, :-v, :-1]
                g = new
        else:
            new = np.zeros_like(g)
            for a, b in terms:
                sa, sb = a * v, b * v
                new[sa:, a:, sb:, b:] += (
                    _multinomial(c, a, b)
                    * g[: ROW_MAX + 1 - sa, : size - a, : ROW_MAX + 1 - sb, : size - b]
                )
            g = new
    return g


def _divide(g: Array, u: int) -> Array:
    """g / (1 + x^u y + z^u w): the same shoe with one card of value u fewer.

    h = g - x^u y h - z^u w h, solved in order of increasing points. A block of u consecutive
    point totals on each axis depends only on the blocks before it, so each block is one array
    operation: (31/u)^2 steps instead of 31^2.
    """
    h = np.zeros_like(g)
    for a0 in range(0, ROW_MAX + 1, u):
        a1 = min(a0 + u, ROW_MAX + 1)
        for b0 in range(0, ROW_MAX + 1, u):
            b1 = min(b0 + u, ROW_MAX + 1)
            block = g[a0:a1, :, b0:b1, :].copy()
            if a0 >= u:
                block[:, 1:, :, :] -= h[a0 - u : a1 - u, :-1, b0:b1, :]
            if b0 >= u:
                block[:, :, :, 1:] -= h[a0:a1, :, b0 - u : b1 - u, :-1]
            h[a0:a1, :, b0:b1, :] = block
    return h


@dataclass(frozen=True)
class FirstCoup:
    """Exact figures of the first coup dealt from a shoe."""

    row: dict[int, float]  # first row's total, 31..40
    joint: dict[tuple[int, int], float]  # (noir total, rouge total)
    noir: float
    rouge: float
    apres: float
    refait: float
    incomplete: float


def first_coup(counts: Mapping[int, int]) -> FirstCoup:
    """The exact distribution of the first coup from a shoe with ``counts`` cards per value."""
    counts = {v: counts.get(v, 0) for v in VALUES}
    total = sum(counts.values())
    size = min(ROW_MAX, total) + 1
    g = _generating(counts, size)
    # F[nA, nB] = nA! nB! / (N)_(nA+nB+2): the orderings of both partial rows over the sequences.
    falling = [1.0]
    for k in range(2 * size + 2):
        falling.append(falling[-1] * (total - k) if total - k > 0 else 0.0)
    fact = [float(math.factorial(n)) for n in range(size)]
    f = np.array(
        [
            [
                fact[na] * fact[nb] / falling[na + nb + 2] if falling[na + nb + 2] else 0.0
                for nb in range(size)
            ]
            for na in range(size)
        ]
    )
    removed_one = {u: _divide(g, u) for u in VALUES if counts[u]}
    joint: dict[tuple[int, int], float] = {}
    removed_two: dict[tuple[int, int], Array] = {}
    for v1 in VALUES:
        if not counts[v1]:
            continue
        for v2 in VALUES:
            weight = counts[v1] * (counts[v2] - (v1 == v2))
            if weight <= 0:
                continue
            pair = (min(v1, v2), max(v1, v2))
            if pair not in removed_two:  # the shoe less v1 and v2 does not depend on their order
                removed_two[pair] = np.einsum(
                    "anbm,nm->ab", _divide(removed_one[pair[0]], pair[1]), f
                )
            sums = removed_two[pair]
            for sa in range(ROW_MAX + 1 - v1, ROW_MAX + 1):
                for sb in range(ROW_MAX + 1 - v2, ROW_MAX + 1):
                    key = (sa + v1, sb + v2)
                    joint[key] = joint.get(key, 0.0) + weight * float(sums[sa, sb])
    row: dict[int, float] = {}
    g1 = g[:, :, 0, 0]
    f1 = [fact[n] / falling[n + 1] if falling[n + 1] else 0.0 for n in range(size)]
    for v1 in VALUES:
        if not counts[v1]:
            continue
        h1 = removed_one[v1][:, :, 0, 0]
        for sa in range(ROW_MAX + 1 - v1, ROW_MAX + 1):
            row[sa + v1] = row.get(sa + v1, 0.0) + counts[v1] * float(np.dot(h1[sa], f1))
    del g1
    noir = sum(p for (t1, t2), p in joint.items() if t1 < t2)
    rouge = sum(p for (t1, t2), p in joint.items() if t1 > t2)
    refait = joint.get((31, 31), 0.0)
    apres = sum(p for (t1, t2), p in joint.items() if t1 == t2 and t1 > 31)
    complete = noir + rouge + refait + apres
    return FirstCoup(
        {t: row.get(t, 0.0) for t in range(31, 41)},
        joint,
        noir,
        rouge,
        apres,
        refait,
        max(0.0, 1.0 - complete),
    )


def infinite_deck(reglement: Reglement | None = None) -> tuple[dict[int, Fraction], FirstCoup]:
    """The limit of an infinite shoe: cards drawn with replacement; rows independent. Exact."""
    one = composition_of_decks(1, reglement)
    p = {v: Fraction(n, 52) for v, n in one.items()}
    partial = {0: Fraction(1)}
    row: dict[int, Fraction] = {}
    for s in range(ROW_MAX + 1):  # partial sums in increasing order
        mass = partial.get(s)
        if not mass:
            continue
        for v, pv in p.items():
            target = row if s + v > ROW_MAX else partial
            target[s + v] = target.get(s + v, Fraction(0)) + mass * pv
    noir = sum((row[a] * row[b] for a in row for b in row if a < b), Fraction(0))
    refait = row[31] ** 2
    apres = sum((row[a] ** 2 for a in row if a > 31), Fraction(0))
    joint = {(a, b): float(row[a] * row[b]) for a in row for b in row}
    coup = FirstCoup(
        {t: float(row[t]) for t in row},
        joint,
        float(noir),
        float(noir),
        float(apres),
        float(refait),
        0.0,
    )
    return row, coup


# --- the bank's advantage -----------------------------------------------------------------------


@dataclass(frozen=True)
class Edge:
    """Per unit staked: the bank's expected gain (``edge``) and the variance of the player's result."""

    edge: float
    variance: float


def _prison_value(p: float, q: float, r: float, reglement: Reglement) -> float:
    """Probability that an imprisoned stake comes back (freed), as a fraction of what was held.

    Later coups are taken to have the first coup's probabilities: p its chance wins, q it loses,
    r another refait; après and void coups leave it as it is.
    """
    decisive = p + q + r
    if decisive == 0:
        return 0.0
    if reglement.prison_repeat == "halve":
        # Another refait halves what is held; the next win frees the rest.
        return p / (decisive - r / 2)
    levels = reglement.max_prison_level
    # V_0 = 1, V_(L) = (p V_(L-1) + r V_(L+1)) / decisive, V_(levels+1) = 0: a small linear system.
    matrix = np.zeros((levels, levels))
    rhs = np.zeros(levels)
    for i in range(levels):  # unknown V_(i+1)
        matrix[i, i] = decisive
        if i == 0:
            rhs[i] = p
        else:
            matrix[i, i - 1] = -p
        if i + 1 < levels:
            matrix[i, i + 1] = -r
    return float(np.linalg.solve(matrix, rhs)[0])


def edges(coup: FirstCoup, reglement: Reglement) -> dict[str, dict[str, Edge]]:
    """For each chance: the bank's edge and the variance under ``half``, ``prison``, the player's
    better ``choice`` of the two, and ``insured`` (a premium per unit, refaits pushed)."""
    result: dict[str, dict[str, Edge]] = {}
    even = (coup.noir + coup.rouge) / 2  # couleur and inverse with a colour-balanced shoe
    wins = {
        "rouge": (coup.rouge, coup.noir),
        "noir": (coup.noir, coup.rouge),
        "couleur": (even, even),
        "inverse": (even, even),
    }
    rate = reglement.insurance_premium / reglement.insurance_unit
    r = coup.refait
    for chance, (p, q) in wins.items():
        value = _prison_value(p, q, r, reglement)
        half_mean = p - q - r / 2
        prison_mean = p - q - r * (1 - value)
        insured_mean = p - q - rate
        modes = {
            "half": Edge(-half_mean, p + q + r / 4 - half_mean**2),
            "prison": Edge(-prison_mean, p + q + r * (1 - value) - prison_mean**2),
            "insured": Edge(
                -insured_mean,
                p * (1 - rate) ** 2 + q * (1 + rate) ** 2 + (1 - p - q) * rate**2 - insured_mean**2,
            ),
        }
        modes["choice"] = min(modes["half"], modes["prison"], key=lambda e: e.edge)
        result[chance] = modes
    return result


def odds_document(
    *, decks: int | None = None, composition: Any = None, reglement: Reglement | None = None
) -> dict[str, Any]:
    """The JSON document of ``python -m casino.games odds`` (REPLAY.md, Odds)."""
    rules = reglement or Reglement()
    counts = (
        composition_of_decks(decks, rules) if decks is not None else parse_composition(composition)
    )
    coup = first_coup(counts)
    _, limit = infinite_deck(rules)

    def coup_figures(c: FirstCoup) -> dict[str, float]:
        figures = {"noir": c.noir, "rouge": c.rouge, "apres": c.apres, "refait": c.refait}
        if c.incomplete > 1e-15:
            figures["incomplete"] = c.incomplete
        return figures

    return {
        "row": {str(t): p for t, p in coup.row.items()},
        "coup": coup_figures(coup),
        "edge_half": edges(coup, rules)["rouge"]["half"].edge,
        "infinite": {"row": {str(t): p for t, p in limit.row.items()}, "coup": coup_figures(limit)},
        "edges": {
            chance: {mode: {"edge": e.edge, "variance": e.variance} for mode, e in modes.items()}
            for chance, modes in edges(coup, rules).items()
        },
        "cards": sum(counts.values()),
    }
