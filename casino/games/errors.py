"""Errors of the games engines. Each names the rule and the offending value.

The codes are the replay's vocabulary (REPLAY.md): ``bad_card``, ``bad_pack``, ``bad_reglement``,
``bad_stake``; the replay adds ``bad_json``, ``bad_input`` and ``unknown_field``.
"""

from __future__ import annotations


class GameError(Exception):
    """Root of the engines' errors. ``where`` points at the offending input when known."""

    code = "game_error"

    def __init__(self, message: str, *, where: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.where = where


class IllegalCard(GameError):
    """A card code that is not rank + suit (``KS``, ``TH``, ``10D``)."""

    code = "bad_card"


class ForeignCard(GameError):
    """A card the pack cannot contain any more: a seventh ace of spades in a sixain."""

    code = "bad_pack"


class IllegalDeal(GameError):
    """A card laid where none may be: the coup is complete, or the shoe has ended."""

    code = "illegal_deal"


class InvalidReglement(GameError):
    """A règlement parameter outside what RULES.md allows, or an unknown preset or parameter."""

    code = "bad_reglement"


class StakeRefused(GameError):
    """A stake the règlement does not accept: outside the limits, insurance where there is none."""

    code = "bad_stake"
