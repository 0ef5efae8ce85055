"""The regulator's export of a séance or a gaming day: one zip with everything needed to check it
without our database.

- ``report.pdf``: the signed report (``python manage.py verify_report`` or any PAdES validator);
- ``coups.csv|json``, ``stakes.csv``, ``settlements.csv``, ``movements.csv``: the records;
- ``replay/<seal>.json``: each pack's cards and stakes in the replay format (REPLAY.md), so that
  ``python -m casino.games replay < replay/<seal>.json`` reproduces every coup;
- ``audit/events.jsonl`` with ``audit/canonical.py`` and ``audit/verify_events.py``: the audit
  events of the report's range, and a standard-library script that recomputes their hashes and
  checks they link up to the head hash signed in the report.
"""

from __future__ import annotations

import csv
import io
import json
import zipfile
from pathlib import Path
from typing import Any

from django.db.models import Q, QuerySet

from audit import canonical
from audit.canonical import format_time
from audit.models import AuditEvent
from casino.disputes.models import about_seances
from casino.floor.coups import rules_of
from casino.floor.models import Coup, Movement, Settlement, Shift, Stake
from casino.reports.models import Report
from shoes.models import CardLaid, Pack


def _shifts(report: Report) -> QuerySet[Shift]:
    if report.shift_id is not None:  # a séance's report or an addendum to it
        return Shift.objects.filter(pk=report.shift_id)
    from casino.reports.daily_register import shifts_of_day

    assert report.day is not None
    return shifts_of_day(report.day)


def _csv(rows: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    if rows:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return out.getvalue()


def _coup_row(coup: Coup) -> dict[str, Any]:
    o = getattr(coup, "outcome", None)
    return {
        "id": coup.pk,
        "table": coup.shift.table.number,
        "shift": coup.shift_id,
        "pack": coup.pack.seal_number,
        "number": coup.number,
        "reglement": f"{coup.reglement.name} v{coup.reglement.version}",
        "opened_at": format_time(coup.opened_at),
        "phase": coup.phase,
        "noir_cards": " ".join(o.noir_cards) if o else "",
        "noir_total": o.noir_total if o else "",
        "rouge_cards": " ".join(o.rouge_cards) if o else "",
        "rouge_total": o.rouge_total if o else "",
        "result": o.result if o else "",
        "couleur": o.couleur if o else "",
        "void": o.void if o else "",
        "last": o.last if o else "",
        "announcement": o.announcement.get("result") if o else "",
    }


def replay_document(pack: Pack) -> dict[str, Any]:
    """The pack's talon and stakes in the replay format (REPLAY.md). Stake ids are
    ``<coup number>-<ref>``. The règlement is the posted version with the table's limits, every
    parameter spelled out."""
    coups = list(pack.coups.select_related("shift__table", "reglement").order_by("number"))
    rules = json.loads(rules_of(coups[0]).to_json())
    rules.pop("name")
    stakes = []
    for stake in (
        Stake.objects.filter(coup__pack=pack, withdrawal__isnull=True)
        .select_related("coup")
        .order_by("coup__number", "id")
    ):
        item: dict[str, Any] = {
            "id": f"{stake.coup.number}-{stake.ref}",
            "coup": stake.coup.number,
            "chance": stake.chance,
            "amount": stake.amount,
        }
        if stake.insured:
            item["insured"] = True
        if stake.on_refait:
            item["on_refait"] = stake.on_refait
        stakes.append(item)
    cards = list(
        CardLaid.objects.filter(pack=pack, burned=False)
        .order_by("seq")
        .values_list("card", flat=True)
    )
    return {
        "game": "trente-et-quarante",
        "reglement": {"preset": "baden-1854", "overrides": rules},
        "cards": cards,
        "stakes": stakes,
    }


def export_zip(report: Report) -> bytes:
    shifts = list(_shifts(report))
    coups = (
        Coup.objects.filter(shift__in=shifts)
        .select_related("shift__table", "pack", "reglement", "outcome")
        .order_by("id")
    )
    disputes_refs = [d.reference for d in about_seances([s.pk for s in shifts])]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        if report.rendered_at is not None:
            with report.pdf.open("rb") as pdf:
                archive.writestr("report.pdf", pdf.read())
        coup_rows = [_coup_row(c) for c in coups.iterator(chunk_size=1000)]
        archive.writestr("coups.csv", _csv(coup_rows))
        archive.writestr("coups.json", json.dumps(coup_rows, ensure_ascii=False, indent=1))
        archive.writestr(
            "stakes.csv",
            _csv(
                [
                    {
                        "id": s.pk,
                        "coup": s.coup_id,
                        "ref": s.ref,
                        "holder": s.holder.code,
                        "chance": s.chance,
                        "amount": s.amount,
                        "insured": s.insured,
                        "on_refait": s.on_refait,
                        "withdrawn": hasattr(s, "withdrawal"),
                        "placed_by": s.placed_by.username,
                        "placed_at": format_time(s.placed_at),
                    }
                    for s in Stake.objects.filter(coup__shift__in=shifts)
                    .select_related("holder", "placed_by", "withdrawal")
                    .order_by("id")
                ]
            ),
        )
        archive.writestr(
            "settlements.csv",
            _csv(
                [
                    {
                        "coup": s.coup_id,
                        "stake": s.stake_id,
                        "outcome": s.outcome,
                        "paid": s.paid,
                        "returned": s.returned,
                        "to_bank": s.to_bank,
                        "premium": s.premium,
                        "held": s.held,
                        "level": s.level,
                    }
                    for s in Settlement.objects.filter(coup__shift__in=shifts).order_by("id")
                ]
            ),
        )
        archive.writestr(
            "movements.csv",
            _csv(
                [
                    {
                        "id": m.pk,
                        "at": format_time(m.at),
                        "kind": m.kind,
                        "from": m.credit.code,
                        "to": m.debit.code,
                        "amount": m.amount,
                        "shift": m.shift_id or "",
                        "reference": m.reference,
                        "idempotency_key": m.idempotency_key,
                        "actor": m.actor.username,
                    }
                    for m in Movement.objects.filter(
                        Q(shift__in=shifts) | Q(reference__in=disputes_refs)
                    )
                    .select_related("credit", "debit", "actor")
                    .order_by("id")
                ]
            ),
        )
        for pack in Pack.objects.filter(coups__shift__in=shifts).distinct().order_by("id"):
            archive.writestr(
                f"replay/{pack.seal_number}.json",
                json.dumps(replay_document(pack), ensure_ascii=False, indent=1),
            )
        events = AuditEvent.objects.filter(
            seq__gte=report.chain_from, seq__lte=report.chain_to
        ).order_by("seq")
        archive.writestr(
            "audit/events.jsonl",
            "".join(
                json.dumps(
                    {
                        "seq": e.seq,
                        "at": format_time(e.at),
                        "actor_id": e.actor_id,
                        "actor_name": e.actor_name,
                        "action": e.action,
                        "subject_type": e.subject_type,
                        "subject_id": e.subject_id,
                        "prev_hash": e.prev_hash,
                        "payload": e.payload,
                        "hash": e.hash,
                    },
                    ensure_ascii=False,
                )
                + "\n"
                for e in events.iterator(chunk_size=2000)
            ),
        )
        archive.writestr("audit/canonical.py", Path(canonical.__file__).read_text())
        archive.writestr(
            "audit/verify_events.py", (Path(__file__).parent / "verify_events.py").read_text()
        )
        archive.writestr(
            "README.txt",
            f"{report}\n\n{__doc__}\nHead hash signed in the report: {report.head_hash} "
            f"(event #{report.chain_to}).\n"
            f"cd audit && python verify_events.py {report.head_hash}\n",
        )
    return buffer.getvalue()
