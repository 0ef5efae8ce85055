"""Pharao's words as the table says them, for every page that shows a stake (the pit's table page,
the admin, the report)."""

from __future__ import annotations

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from casino.games.pharao import SIMPLE

# The marks with a name of their own; the others are the multiple the stake now wins (6, 7, 12 … 30,
# the règlement's marks table, RULES.md §2).
MARK_WORDS = {
    SIMPLE: gettext_lazy("simple"),
    "appe": gettext_lazy("appe"),
    "paroli": gettext_lazy("paroli"),
}


def mark_word(mark: str) -> str:
    """``simple``, ``appe``, ``paroli``, or « 7 fois »; a dash where there is no mark."""
    if not mark:
        return "–"
    word = MARK_WORDS.get(mark)
    return str(word) if word is not None else _("%(mark)s fois") % {"mark": mark}
