"""Reads of the floor that need more than one query: a coup as shown, a séance's figures."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Sum
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from casino.floor.models import Coup, Movement, Shift
from casino.floor.services import rundown

SUIT_GLYPHS = {
    "S": ("♠", "black"),
    "H": ("♥", "#c0392b"),
    "D": ("♦", "#c0392b"),
    "C": ("♣", "black"),
}


def card_html(code: str) -> SafeString:
    """A card as the pit reads it: rank and suit glyph, red or black."""
    glyph, colour = SUIT_GLYPHS[code[1]]
    rank = "10" if code[0] == "T" else code[0]
    return format_html(
        '<span style="display:inline-block;min-width:2.2em;padding:2px 4px;margin:1px;'
        "border:1px solid #999;border-radius:4px;background:#fff;color:{};"
        'font-weight:bold;text-align:center">{}{}</span>',
        colour,
        rank,
        glyph,
    )


def row_html(cards: list[str], total: int, word: str | None) -> SafeString:
    return format_html(
        "{} <strong>{}</strong> {}",
        format_html_join("", "{}", ((card_html(c),) for c in cards)),
        total,
        f"({word})" if word else "",
    )


def coup_movements(coup: Coup) -> list[Movement]:
    return list(
        Movement.objects.filter(reference__startswith=f"coup:{coup.pk}:")
        .select_related("debit", "credit")
        .order_by("id")
    )


@dataclass(frozen=True)
class ShiftFigures:
    coups: int
    drop: int  # money staked
    win: int  # what play left to the bank (negative when the bank lost)

    @property
    def hold(self) -> float | None:
        return None if not self.drop else 100 * self.win / self.drop


def shift_figures(shift: Shift) -> ShiftFigures:
    drop = (
        Movement.objects.filter(shift=shift, kind=Movement.Kind.STAKE_PLACED).aggregate(
            s=Sum("amount")
        )["s"]
        or 0
    )
    return ShiftFigures(
        shift.coups.filter(phase="settled").count(), int(drop), rundown(shift).result
    )
