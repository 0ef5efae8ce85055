"""Reads of Pharao that need more than one query: a taille's replay document, the stakes as they
stand on the layout, a taille's movements."""

from __future__ import annotations

import json
from typing import Any

from casino.floor.models import Movement
from casino.floor.play.pharao.models import PharaoStake, PharaoStakeAct, Taille
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
