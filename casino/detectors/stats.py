"""Exact tails for the detectors: pure Python, no database.

The binomial and Poisson tails are summed term by term in log space (``math.lgamma``), exact to
about twelve significant digits however far out; the normal tail is ``erfc``'s.

>>> round(binomial_upper(10, 10, 0.5) * 2**10, 9)
1.0
>>> round(poisson_upper(3, 1.0), 6)   # 1 - e^-1 (1 + 1 + 1/2)
0.080301
>>> round(normal_upper(1.959964), 4)
0.025
"""

from __future__ import annotations

import math


def _log_binomial_term(n: int, k: int, p: float) -> float:
    return (
        math.lgamma(n + 1)
        - math.lgamma(k + 1)
        - math.lgamma(n - k + 1)
        + (k * math.log(p) if k else 0.0)
        + ((n - k) * math.log1p(-p) if n - k else 0.0)
    )


def binomial_upper(observed: int, trials: int, p: float) -> float:
    """P(X ≥ observed) for X ~ Binomial(trials, p)."""
    if observed <= 0:
        return 1.0
    if observed > trials or p <= 0:
        return 0.0
    if p >= 1:
        return 1.0
    return min(
        1.0, sum(math.exp(_log_binomial_term(trials, k, p)) for k in range(observed, trials + 1))
    )


def binomial_lower(observed: int, trials: int, p: float) -> float:
    """P(X ≤ observed) for X ~ Binomial(trials, p)."""
    return binomial_upper(trials - observed, trials, 1 - p)


def poisson_upper(observed: int, mean: float) -> float:
    """P(X ≥ observed) for X ~ Poisson(mean): one minus the lower terms, or the upper terms
    summed directly where that loses less."""
    if observed <= 0:
        return 1.0
    if mean <= 0:
        return 0.0
    if observed > mean:
        total, k = 0.0, observed
        while True:
            term = math.exp(k * math.log(mean) - mean - math.lgamma(k + 1))
            total += term
            if term < total * 1e-17 or k > observed + 10_000:
                return min(1.0, total)
            k += 1
    lower = sum(math.exp(k * math.log(mean) - mean - math.lgamma(k + 1)) for k in range(observed))
    return max(0.0, 1.0 - lower)


def normal_upper(z: float) -> float:
    """P(Z ≥ z) for a standard normal Z."""
    return 0.5 * math.erfc(z / math.sqrt(2))


def normal_two_sided(z: float) -> float:
    """P(|Z| ≥ |z|)."""
    return math.erfc(abs(z) / math.sqrt(2))


def bonferroni(alpha: float, tests: int) -> float:
    """Each of ``tests`` tests fires below this, so that all together raise a false alarm with
    probability at most ``alpha``."""
    return alpha / max(1, tests)
