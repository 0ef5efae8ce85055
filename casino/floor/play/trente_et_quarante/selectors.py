"""Reads of Trente-et-Quarante that need more than one query: a coup's movements, the prison as
named, and the settlement a coup would have now."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from casino.floor.models import Movement
from casino.floor.play.trente_et_quarante.coups import (
    SettlementPlan,
    cut_card_is_next,
    deal_of,
    rules_of,
    settlement_plan,
)
from casino.floor.play.trente_et_quarante.models import Coup, CoupPhase
from shoes.services import cards_left


def coup_movements(coup: Coup) -> list[Movement]:
    return list(
        Movement.objects.filter(reference__startswith=f"coup:{coup.pk}:")
        .select_related("debit", "credit")
        .order_by("id")
    )


def prisoners(prison_after: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The prison as the API and the reports name it: each stake by its reference."""
    return [
        {"stake": int(p["stake"]), "chance": p["chance"], "held": p["held"], "level": p["level"]}
        for p in prison_after
    ]


@dataclass(frozen=True)
class SettlementPreview:
    """What settling the coup now would record, stake by stake (``plan``), and whether it is the
    cut card's void coup (then the act is ``coup_settle(cut_card=True)``)."""

    plan: SettlementPlan
    cut_card: bool


def settlement_preview(coup: Coup) -> SettlementPreview | None:
    """Ask the engine what ``coup_settle`` would do to this coup now, writing nothing: the same
    plan the act writes (``coups.settlement_plan``), so what the page shows before the
    confirmation is what is recorded. None while the coup cannot be settled (betting, or a row
    still open with cards left to lay)."""
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
