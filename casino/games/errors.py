"""Errors of the games engines. Each names the rule and the offending value.

The codes are the replay's vocabulary (REPLAY.md): ``bad_card``, ``bad_rank``, ``bad_pack``,
``bad_reglement``, ``bad_stake``; the replay adds ``bad_json``, ``bad_input`` and ``unknown_field``.
Pharao's refusals (``PharaoRefusal``) carry the reason codes of its replay (``false_paroli``,
``not_approved``, ``over_limit``, ``under_limit``, ``rank_exhausted``, ``unknown_stake``,
``bad_mark``) and ``late_stake`` for an act while a draw is being dealt.

Words (STYLE.md 12): an engine's message is a French template marked with ``gettext_noop`` and
its named parameters, kept apart until someone shows it. The engines import no Django, so they
translate nothing themselves: the floor renders a refusal in the client's language
(``casino.i18n.game_message``), and ``message`` (``str()``) renders it in English, the language
of the replay's contract and of the regulator's command line, from the project's catalog
(``locale/en/LC_MESSAGES/django.mo``, read with the standard library).

>>> error = IllegalDeal(gettext_noop("%(card)s ne peut pas être posée"), card="KS")
>>> error.render(lambda template: template)
'KS ne peut pas être posée'
"""

from __future__ import annotations

import gettext
from collections.abc import Callable
from functools import cache
from pathlib import Path

# The project's catalog (README, "Words"): French is the source language, English is translated.
LOCALE_DIR = Path(__file__).resolve().parents[2] / "locale"


def gettext_noop(message: str) -> str:
    """Mark ``message`` for the catalog without translating it: ``makemessages`` extracts the
    calls of ``gettext_noop`` (Django's own marker has the same name and does the same)."""
    return message


@cache
def _english() -> gettext.NullTranslations:
    return gettext.translation("django", localedir=LOCALE_DIR, languages=["en"], fallback=True)


def english(template: str) -> str:
    """``template`` in English, from the compiled catalog (itself when it has none)."""
    return _english().gettext(template)


class GameError(Exception):
    """Root of the engines' errors. ``where`` points at the offending input when known.

    ``template`` is the message (French, marked with ``gettext_noop``) with ``%(name)s``
    placeholders filled from ``params``; ``render(translate)`` shows it in a language.
    """

    code = "game_error"

    def __init__(self, template: str, *, where: str | None = None, **params: object) -> None:
        super().__init__(template)
        self.template = template
        self.params = params
        self.where = where

    def render(self, translate: Callable[[str], str]) -> str:
        """The message, its template translated by ``translate`` then filled in."""
        text = translate(self.template)
        return text % self.params if self.params else text

    @property
    def message(self) -> str:
        """In English (the replay's language)."""
        return self.render(english)

    def __str__(self) -> str:
        return self.message


class IllegalCard(GameError):
    """A card code that is not rank + suit (``KS``, ``TH``, ``10D``)."""

    code = "bad_card"


class IllegalRank(GameError):
    """A rank code that is not one of ``A 2 3 4 5 6 7 8 9 T J Q K`` (``10`` accepted for ``T``)."""

    code = "bad_rank"


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


class StakeIdTaken(GameError):
    """A stake placed under an id that a stake of the same taille already has."""

    code = "stake_id_taken"


class PharaoRefusal(GameError):
    """An act at a Pharao table that the rules refuse (RULES.md §2). ``code`` is the reason the
    replay lists (REPLAY.md, Pharao); the floor records the refusal where it is evidence."""

    code = "pharao_refusal"


class UnknownStake(PharaoRefusal):
    """No standing stake has that id: never placed, refused, ended, or placed for the draw to come."""

    code = "unknown_stake"


class FalseParoli(PharaoRefusal):
    """A mark on a stake that did not win the draw just made, or a second mark after one win."""

    code = "false_paroli"


class BadMark(PharaoRefusal):
    """The act does not fit the stake: no such transition in the marks table, a marked stake raised
    or reduced, a reduction that would leave less than 1."""

    code = "bad_mark"


class NotApproved(PharaoRefusal):
    """A withdrawal or reduction without the banker's approval, or a collect that is not right
    after a win (which would be a withdrawal)."""

    code = "not_approved"


class RankExhausted(PharaoRefusal):
    """A new stake or a raise on a rank none of whose cards is left to draw."""

    code = "rank_exhausted"


class OverLimit(PharaoRefusal):
    """A new stake, or a stake raised, above the table's maximum."""

    code = "over_limit"


class UnderLimit(PharaoRefusal):
    """A new stake below the table's minimum."""

    code = "under_limit"


class DrawInProgress(PharaoRefusal):
    """A change of stake between the draw's first card and its settlement (the floor's late stake)."""

    code = "late_stake"


class AllianceFault(GameError):
    """A deal of Alliance that breaks RULES.md §3: a call, a contract or a card the rules refuse.
    ``code`` is the replay's (REPLAY.md, Alliance); a whole deal with one is refused as a whole."""

    code = "alliance_fault"


class BadCall(AllianceFault):
    """A call out of turn, too low, a ``hold`` by anyone but the Vorhand when she may, a call after
    the auction's end, or an auction that stops before its end (RULES.md 3.2)."""

    code = "bad_call"


class BadContract(AllianceFault):
    """A contract that breaks RULES.md 3.3: a called card the declarer holds or of the wrong rank, a
    lever's turn that is no face-down card, a discard not in the declarer's hand, a résistance by
    the soloist himself."""

    code = "bad_contract"


class NotInHand(AllianceFault):
    """A card played that is not in the hand of the player whose turn it is (RULES.md 3.4)."""

    code = "not_in_hand"


class MustFollowSuit(AllianceFault):
    """A card of another suit played by a player who holds the suit led (RULES.md 3.4)."""

    code = "must_follow_suit"


class BadTricks(AllianceFault):
    """Tricks that are not the deal's: a wrong number of them, or a trick of the wrong length."""

    code = "bad_tricks"
