"""Reads of the floor that need more than one query: cards as shown, a séance's figures, a table as
a terminal finds it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.db.models import Q, Sum
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from casino.floor.models import Account, Movement, Shift, Table
from casino.floor.registry import game_module, moved_to
from casino.floor.services import rundowns

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


@dataclass(frozen=True)
class ShiftFigures:
    coups: int
    drop: int  # money staked
    win: int  # what play left to the bank (negative when the bank lost)
    variance: int | None  # the rundown's: the count against the ledger (None: not counted yet)

    @property
    def hold(self) -> float | None:
        return None if not self.drop else 100 * self.win / self.drop


def shift_figures(shift: Shift) -> ShiftFigures:
    return figures_of([shift])[shift.pk]


def figures_of(shifts: Sequence[Shift]) -> dict[int, ShiftFigures]:
    """Each séance's figures by its id, in a few queries however many séances (a list's page, the
    day's register): the drop, the rundown's, and each game's count of its rounds."""
    drop = dict(
        Movement.objects.filter(shift__in=shifts, kind=Movement.Kind.STAKE_PLACED)
        .order_by()
        .values("shift_id")
        .annotate(s=Sum("amount"))
        .values_list("shift_id", "s")
    )
    rounds: dict[int, int] = {}
    for game in {s.table.game for s in shifts}:
        rounds |= game_module(game).rounds_played([s for s in shifts if s.table.game == game])
    counted = rundowns(shifts)
    return {
        s.pk: ShiftFigures(
            rounds.get(s.pk, 0),
            int(drop.get(s.pk) or 0),
            counted[s.pk].result,
            counted[s.pk].variance,
        )
        for s in shifts
    }


def movement_refers_to(reference: str) -> dict[str, int]:
    """A movement's reference (``coup:12:stake:34``, ``taille:4:pharao_stake:56``,
    ``transfer:5``, ``shift:3:float``, ``dispute:7``, ``deal:8``) as the records it names, each by its
    reference."""
    parts = reference.split(":")
    return {
        name: int(value)
        for name, value in zip(parts[::2], parts[1::2], strict=False)
        if name in REFERRED and value.isdigit()
    }


REFERRED = ("coup", "stake", "taille", "pharao_stake", "shift", "transfer", "dispute", "deal")


def table_state(table: Table) -> Table:
    """The table as a terminal finds it when it starts: the séance open there, the pack in play,
    the séance's balances of the table's accounts, and what its game says of the round in progress
    (a few indexed queries, whatever the history behind them)."""
    from shoes.models import PackState
    from shoes.services import packs_at

    shift = Shift.objects.filter(table=table, closed_at__isnull=True).first()
    table.pack = (  # type: ignore[attr-defined]
        packs_at(table.pk, PackState.IN_PLAY).values_list("pk", flat=True).first()
    )
    table.seance = shift.pk if shift else None  # type: ignore[attr-defined]
    table.open_coup = None  # type: ignore[attr-defined]
    table.open_deal = None  # type: ignore[attr-defined]
    table.prison = []  # type: ignore[attr-defined]
    table.balances = None  # type: ignore[attr-defined]
    for name, value in game_module(table.game).terminal_state(table, shift).items():
        setattr(table, name, value)
    if shift is not None:
        accounts = {a.kind: a.pk for a in table.accounts.filter(kind__in=TABLE_KINDS)}
        sums = Movement.objects.filter(shift=shift).aggregate(
            **{
                f"{kind}_{side}": Sum("amount", filter=Q(**{side: accounts[kind]}))
                for kind in accounts
                for side in ("debit", "credit")
            }
        )
        # A game whose tables have no prison (Pharao) shows it empty.
        table.balances = {  # type: ignore[attr-defined]
            kind: (sums.get(f"{kind}_debit") or 0) - (sums.get(f"{kind}_credit") or 0)
            for kind in TABLE_KINDS
        }
    return table


TABLE_KINDS = (Account.Kind.BANK, Account.Kind.LAYOUT, Account.Kind.PRISON)


# Trente-et-Quarante's reads, at their path before the floor served several games.
__getattr__ = moved_to(
    "casino.floor.play.trente_et_quarante.selectors",
    "SettlementPreview",
    "coup_movements",
    "prisoners",
    "settlement_preview",
)
