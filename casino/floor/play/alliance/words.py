"""Alliance's words as the cercle says them, for the pages that show a deal (the admin; the signed
report writes its own in both languages at once): the suits, the calls, the games and the kinds
of payment (RULES.md §3)."""

from __future__ import annotations

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from casino.floor.selectors import SUIT_GLYPHS

SUIT_WORDS = {
    "S": gettext_lazy("pique"),
    "H": gettext_lazy("cœur"),
    "D": gettext_lazy("carreau"),
    "C": gettext_lazy("trèfle"),
}
CALL_WORDS = {
    "pass": gettext_lazy("passe"),
    "alliance": gettext_lazy("alliance"),
    "lever": gettext_lazy("lever"),
    "solo": gettext_lazy("solo"),
    "hold": gettext_lazy("tient (hold)"),
}
GAME_WORDS = {
    "alliance": gettext_lazy("alliance"),
    "lever": gettext_lazy("lever"),
    "solo": gettext_lazy("solo"),
}
PAYMENT_WORDS = {
    "game": gettext_lazy("jeu"),
    "honours": gettext_lazy("honneurs"),
    "bonus": gettext_lazy("prime"),
    "resistance": gettext_lazy("résistance"),
    "neutral": gettext_lazy("neutre gagnant"),
    "both_lose": gettext_lazy("soliste et résistant perdants"),
    "figure": gettext_lazy("figure"),
}


def suit_word(suit: str) -> str:
    """``♥ cœur``: the suit's glyph and its name."""
    return f"{SUIT_GLYPHS[suit][0]} {SUIT_WORDS[suit]}"


def call_word(call: str) -> str:
    return str(CALL_WORDS.get(call, call))


def game_word(game: str, *, forced: bool = False) -> str:
    """``lever forcé``, ``alliance``…"""
    said = str(GAME_WORDS.get(game, game))
    return _("%(game)s forcé") % {"game": said} if forced else said


def payment_word(kind: str) -> str:
    return str(PAYMENT_WORDS.get(kind, kind))
