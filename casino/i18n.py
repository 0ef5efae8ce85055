"""Words through the translation machinery (STYLE.md 12, README "Words").

Messages are French in the code, marked with ``gettext`` (``_``) where they are raised, English in
``locale/en/LC_MESSAGES/django.po``; a request's language comes from its ``Accept-Language``
(LocaleMiddleware), French when it asks for neither.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.utils.translation import gettext as _

from casino.games.errors import GameError


def game_message(exc: GameError) -> str:
    """An engine's refusal in the active language. The engine imports no Django: it keeps its
    French template (marked with ``gettext_noop``) and its parameters, translated here."""
    return exc.render(_)


def either(words: Iterable[str]) -> str:
    """``a``, ``a ou b``, ``a, b ou c`` (in English ``a or b``, ``a, b or c``)."""
    words = list(words)
    if len(words) < 2:
        return "".join(words)
    return _("%(first)s ou %(last)s") % {"first": ", ".join(words[:-1]), "last": words[-1]}
