"""Reads of the floor that need more than one query: a coup as shown, a séance's figures."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.db.models import Q, Sum
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from casino.floor.models import Account, Coup, CoupResult, Movement, Shift, Table
from casino.floor.services import rundown

if TYPE_CHECKING:
    from casino.floor.coups import SettlementPlan

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


def prisoners(prison_after: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The prison as the API and the reports name it: each stake by its reference."""
    return [
        {"stake": int(p["stake"]), "chance": p["chance"], "held": p["held"], "level": p["level"]}
        for p in prison_after
    ]


def movement_refers_to(reference: str) -> dict[str, int]:
    """A movement's reference (``coup:12:stake:34``, ``transfer:5``, ``shift:3:float``,
    ``dispute:7``) as the records it names, each by its reference."""
    parts = reference.split(":")
    return {
        name: int(value)
        for name, value in zip(parts[::2], parts[1::2], strict=False)
        if name in REFERRED and value.isdigit()
    }


REFERRED = ("coup", "stake", "shift", "transfer", "dispute")


def table_state(table: Table) -> Table:
    """The table as a terminal finds it when it starts: the séance open there, the coup in
    progress, the pack in play, the prison, and the séance's balances of the table's accounts
    (a few indexed queries, whatever the history behind them)."""
    from casino.floor.coups import FINISHED  # the coups module reads the floor, not the reverse
    from shoes.models import PackState
    from shoes.services import packs_at

    shift = Shift.objects.filter(table=table, closed_at__isnull=True).first()
    last = (
        CoupResult.objects.filter(coup__shift__table=table)
        .order_by("-id")
        .values_list("prison_after", flat=True)
        .first()
    )
    table.prison = prisoners(last or [])  # type: ignore[attr-defined]
    table.pack = (  # type: ignore[attr-defined]
        packs_at(table.pk, PackState.IN_PLAY).values_list("pk", flat=True).first()
    )
    table.seance = shift.pk if shift else None  # type: ignore[attr-defined]
    table.open_coup = None  # type: ignore[attr-defined]
    table.balances = None  # type: ignore[attr-defined]
    if shift is not None:
        table.open_coup = (  # type: ignore[attr-defined]
            Coup.objects.filter(shift=shift)
            .exclude(phase__in=FINISHED)
            .values_list("pk", flat=True)
            .first()
        )
        accounts = {a.kind: a.pk for a in table.accounts.filter(kind__in=TABLE_KINDS)}
        sums = Movement.objects.filter(shift=shift).aggregate(
            **{
                f"{kind}_{side}": Sum("amount", filter=Q(**{side: accounts[kind]}))
                for kind in TABLE_KINDS
                for side in ("debit", "credit")
            }
        )
        table.balances = {  # type: ignore[attr-defined]
            kind: (sums[f"{kind}_debit"] or 0) - (sums[f"{kind}_credit"] or 0)
            for kind in TABLE_KINDS
        }
    return table


TABLE_KINDS = (Account.Kind.BANK, Account.Kind.LAYOUT, Account.Kind.PRISON)


@dataclass(frozen=True)
class SettlementPreview:
    """What settling the coup now would record, stake by stake (``plan``), and whether it is the
    cut card's void coup (then the act is ``coup_settle(cut_card=True)``)."""

    plan: SettlementPlan
    cut_card: bool


def settlement_preview(coup: Coup) -> SettlementPreview | None:
    """Ask the engine what ``coup_settle`` would do to this coup now, writing nothing: the same
    plan the act writes (``casino.floor.coups.settlement_plan``), so what the page shows before
    the confirmation is what is recorded. None while the coup cannot be settled (betting, or a row
    still open with cards left to lay)."""
    from casino.floor.coups import cut_card_is_next, deal_of, rules_of, settlement_plan
    from casino.floor.models import CoupPhase
    from shoes.services import cards_left

    rules = rules_of(coup)
    if coup.phase in (CoupPhase.CLOSED, CoupPhase.DEALING) and cut_card_is_next(coup, rules):
        cut_card = True
    elif coup.phase == CoupPhase.COMPLETE or (
        coup.phase == CoupPhase.DEALING and cards_left(coup.pack)[0] == 0
    ):
        cut_card = False  # the rows are complete, or the cards ran out (then a void coup)
    else:
        return None
    return SettlementPreview(
        settlement_plan(coup, rules, deal_of(coup, rules), cut_card=cut_card), cut_card
    )
