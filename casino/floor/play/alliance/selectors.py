"""Alliance's reads: a deal as the replay document it is rebuilt from, the deal as the engine sees
it now (for the terminal, the table page and the admin), and the séances' records as rows for the
regulator's export."""

from __future__ import annotations

import json
from typing import Any

from audit.canonical import format_time
from casino.floor.play.alliance.models import (
    CercleSeat,
    Deal,
    DealCall,
    DealContract,
    DealPhase,
    DealPlay,
    DealSettlement,
)


def deal_document(deal: Deal) -> dict[str, Any]:
    """The deal in the replay format of REPLAY.md (Alliance), so that ``python -m casino.games
    replay`` reproduces what it settled: the players in dealing order, the séance's mark value,
    the cards as dealt, the calls, the contract and the tricks as played; the règlement is the
    deal's posted version, every parameter spelled out."""
    from casino.floor.play.alliance.deals import dealt_cards

    rules = json.loads(deal.reglement.engine().to_json())
    rules.pop("name")
    players = len(deal.players)
    played = list(
        DealPlay.objects.filter(deal=deal).order_by("index").values_list("card", flat=True)
    )
    contract = DealContract.objects.filter(deal=deal).values_list("contract", flat=True).first()
    return {
        "game": "alliance",
        "reglement": {"preset": "baden-1854", "overrides": rules},
        "players": list(deal.players),
        "mark_value": deal.mark_value,
        "cards": dealt_cards(deal),
        "auction": list(
            DealCall.objects.filter(deal=deal).order_by("index").values_list("call", flat=True)
        ),
        "contract": contract,
        "tricks": [played[i : i + players] for i in range(0, len(played), players)],
    }


def open_deal(shift: Any) -> int | None:
    """The deal in progress at the séance, if any."""
    if shift is None:
        return None
    return (
        Deal.objects.filter(shift=shift)
        .exclude(phase=DealPhase.OVER)
        .values_list("pk", flat=True)
        .first()
    )


def alliance_records(shifts: Any) -> dict[str, list[dict[str, Any]]]:
    """The séances' Alliance records as rows (the regulator's export writes each as a CSV file):
    amounts in minor units, times in UTC as the audit chain writes them, people by username."""
    deals = Deal.objects.filter(shift__in=shifts)
    return {
        "cercle_seats": [
            {
                "id": s.pk,
                "table": s.shift.table.number,
                "shift": s.shift_id,
                "seat": s.seat,
                "patron": s.patron.code,
                "at": format_time(s.at),
                "by": s.by.username,
                "left_at": format_time(s.end.at) if hasattr(s, "end") else "",
                "reason": s.end.reason if hasattr(s, "end") else "",
            }
            for s in CercleSeat.objects.filter(shift__in=shifts)
            .select_related("shift__table", "patron", "by", "end")
            .order_by("id")
        ],
        "alliance_deals": [
            {
                "id": d.pk,
                "table": d.shift.table.number,
                "shift": d.shift_id,
                "number": d.number,
                "pack": d.pack.seal_number,
                "pack_taille": d.pack_taille,
                "reglement": f"{d.reglement.name} v{d.reglement.version}",
                "mark_value": d.mark_value,
                "players": " ".join(d.players),
                "dealer": d.dealer,
                "cut_by": d.cut_by,
                "opened_at": format_time(d.opened_at),
                "opened_by": d.opened_by.username,
                "phase": d.phase,
            }
            for d in deals.select_related(
                "shift__table", "pack", "reglement", "opened_by"
            ).order_by("id")
        ],
        "alliance_calls": [
            {
                "deal": c.deal_id,
                "index": c.index,
                "player": c.player,
                "call": c.call,
                "at": format_time(c.at),
                "by": c.by.username,
            }
            for c in DealCall.objects.filter(deal__in=deals)
            .select_related("by")
            .order_by("deal_id", "index")
        ],
        "alliance_contracts": [
            {
                "deal": c.deal_id,
                "declarer": c.declarer,
                "contract": json.dumps(c.contract, sort_keys=True),
                "at": format_time(c.at),
                "by": c.by.username,
            }
            for c in DealContract.objects.filter(deal__in=deals)
            .select_related("by")
            .order_by("deal_id")
        ],
        "alliance_cards_played": [
            {
                "deal": p.deal_id,
                "index": p.index,
                "player": p.player,
                "card": p.card,
                "at": format_time(p.at),
                "by": p.by.username,
            }
            for p in DealPlay.objects.filter(deal__in=deals)
            .select_related("by")
            .order_by("deal_id", "index")
        ],
        "alliance_settlements": [
            {
                "deal": s.deal_id,
                "winners": " ".join(s.outcome["winners"]),
                "marks": json.dumps(s.outcome["marks"], sort_keys=True),
                "fee": s.outcome["fee"],
                "money": json.dumps(s.outcome["money"], sort_keys=True),
                "at": format_time(s.at),
            }
            for s in DealSettlement.objects.filter(deal__in=deals).order_by("deal_id")
        ],
    }
