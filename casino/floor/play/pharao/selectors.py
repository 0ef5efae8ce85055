"""Reads of Pharao that need more than one query: a taille's replay document, the stakes as they
stand on the layout, a taille's movements."""

from __future__ import annotations

import json
from typing import Any

from audit.canonical import format_time
from casino.floor.models import Movement
from casino.floor.play.pharao.models import (
    PharaoApproval,
    PharaoDraw,
    PharaoSettlement,
    PharaoStake,
    PharaoStakeAct,
    Taille,
)
from casino.floor.play.pharao.tailles import deal_of, laid_cards, rules_of


def taille_document(taille: Taille) -> dict[str, Any]:
    """The taille in the replay format of REPLAY.md (Pharao), so that ``python -m casino.games
    replay`` reproduces its recorded draws: its cards in the order laid, the bottom card last
    (for a taille still being dealt, what is laid so far, then the bottom card: not a whole pack,
    the replay refuses it), every stake with the draw it stands from, every act with the draw it
    came before and who approved it. Stake ids are the stakes' references; the règlement is the
    taille's posted version with its limits, every parameter spelled out."""
    rules = json.loads(rules_of(taille).to_json())
    rules.pop("name")
    cards = laid_cards(taille)
    if taille.bottom_card not in cards:
        cards.append(taille.bottom_card)
    stakes = [
        {"id": str(pk), "draw": draw, "rank": on, "amount": amount}
        for pk, draw, on, amount in PharaoStake.objects.filter(taille=taille)
        .order_by("id")
        .values_list("id", "draw", "rank", "amount")
    ]
    actions = []
    for act in (
        PharaoStakeAct.objects.filter(stake__taille=taille)
        .select_related("approval__approved_by")
        .order_by("id")
    ):
        item: dict[str, Any] = {"draw": act.draw, "stake": str(act.stake_id), "do": act.act}
        if act.amount is not None:
            item["amount"] = act.amount
        if act.approval is not None:
            item["approved_by"] = act.approval.approved_by.username
        actions.append(item)
    return {
        "game": "pharao",
        "reglement": {"preset": "baden-1854", "overrides": rules},
        "cards": cards,
        "stakes": stakes,
        "actions": actions,
    }


def standing(taille: Taille) -> dict[int, dict[str, Any]]:
    """What stands on the layout now, stake by stake (by reference): the original stake as it
    stands, its mark, what rides and what is protected, the draw it last won and whether a mark
    has used that win; the stakes placed for the draw to come included."""
    return {int(s.id): {**s.to_dict(), "id": int(s.id)} for s in deal_of(taille).standing.values()}


def taille_movements(taille: Taille) -> list[Movement]:
    return list(
        Movement.objects.filter(reference__startswith=f"taille:{taille.pk}:")
        .select_related("debit", "credit")
        .order_by("id")
    )


def pharao_records(shifts: Any) -> dict[str, list[dict[str, Any]]]:
    """The séances' Pharao records as rows (the regulator's export writes each as a CSV file):
    amounts in minor units, times in UTC as the audit chain writes them, people by username."""
    tailles = Taille.objects.filter(shift__in=shifts)
    return {
        "pharao_tailles": [
            {
                "id": t.pk,
                "table": t.shift.table.number,
                "shift": t.shift_id,
                "number": t.number,
                "pack": t.pack.seal_number,
                "pack_taille": t.pack_taille,
                "reglement": f"{t.reglement.name} v{t.reglement.version}",
                "min_stake": t.min_stake,
                "max_stake": t.max_stake,
                "bottom_card": t.bottom_card,
                "opened_at": format_time(t.opened_at),
                "opened_by": t.opened_by.username,
                "phase": t.phase,
            }
            for t in tailles.select_related(
                "shift__table", "pack", "reglement", "opened_by"
            ).order_by("id")
        ],
        "pharao_draws": [
            {
                "taille": d.taille_id,
                "number": d.number,
                "bank_card": d.bank_card,
                "players_card": d.players_card,
                "plie": d.plie,
                "settled_at": format_time(d.settled_at),
                "settled_by": d.settled_by.username,
            }
            for d in PharaoDraw.objects.filter(taille__in=tailles)
            .select_related("settled_by")
            .order_by("taille_id", "number")
        ],
        "pharao_stakes": [
            {
                "id": s.pk,
                "taille": s.taille_id,
                "ref": s.ref,
                "holder": s.holder.code,
                "rank": s.rank,
                "amount": s.amount,
                "draw": s.draw,
                "placed_by": s.placed_by.username,
                "placed_at": format_time(s.placed_at),
            }
            for s in PharaoStake.objects.filter(taille__in=tailles)
            .select_related("holder", "placed_by")
            .order_by("id")
        ],
        "pharao_acts": [
            {
                "id": a.pk,
                "stake": a.stake_id,
                "act": a.act,
                "amount": "" if a.amount is None else a.amount,
                "draw": a.draw,
                "approval": a.approval_id or "",
                "by": a.by.username,
                "at": format_time(a.at),
                "mark": a.mark,
                "put": a.put,
                "returned": a.returned,
            }
            for a in PharaoStakeAct.objects.filter(stake__taille__in=tailles)
            .select_related("by")
            .order_by("id")
        ],
        "pharao_approvals": [
            {
                "id": a.pk,
                "stake": a.stake_id,
                "act": a.act,
                "amount": "" if a.amount is None else a.amount,
                "draw": a.draw,
                "stake_placed_by": a.stake.placed_by.username,
                "approved_by": a.approved_by.username,
                "at": format_time(a.at),
            }
            for a in PharaoApproval.objects.filter(stake__taille__in=tailles)
            .select_related("stake__placed_by", "approved_by")
            .order_by("id")
        ],
        "pharao_settlements": [
            {
                "taille": s.taille_id,
                "draw": s.draw.number if s.draw is not None else "",
                "stake": s.stake_id,
                "outcome": s.outcome,
                "paid": s.paid,
                "returned": s.returned,
                "to_bank": s.to_bank,
                "mark": s.mark,
            }
            for s in PharaoSettlement.objects.filter(taille__in=tailles)
            .select_related("draw")
            .order_by("id")
        ],
    }
