"""Money in the engines: integers in minor units, and the one rounding rule.

>>> bank_half(1001), 1001 - bank_half(1001)
(500, 501)
>>> insurance_premium(501, unit=500, premium=5)
10
"""

from __future__ import annotations


def bank_half(amount: int) -> int:
    """The half the bank takes of ``amount``: rounded down, so an odd minor unit stays the player's.

    Used for every halving of RULES.md: a refait under ``half``, a halved prisoner, the refund of
    prisoners at the end, and Pharao's plié.
    """
    if amount < 0:
        raise ValueError(f"cannot halve a negative amount {amount}")
    return amount // 2


def insurance_premium(amount: int, *, unit: int, premium: int) -> int:
    """``premium`` for each started ``unit`` of the stake (RULES.md 1.5)."""
    return premium * -(-amount // unit)
