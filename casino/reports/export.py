"""The regulator's export of a séance or a gaming day: one zip with everything needed to check it
without our database.

- ``report.pdf``: the signed report (``python manage.py verify_report`` or any PAdES validator);
- ``coups.csv|json``, ``stakes.csv``, ``settlements.csv``, ``movements.csv``: the records;
- ``replay/<seal>-<taille>.json``: each talon (a pack from a cut to the cards passing) in the
  replay format (REPLAY.md): every card of the sixain, the prisoners carried in, the stakes, so
  that ``python -m casino.games replay < replay/<seal>-<taille>.json`` reproduces every coup
  (a coup cancelled by the chef de partie has no place in that format: a talon with one is
  exported all the same, and its replay differs from that coup on);
- ``talons.csv``: one row per talon, saying where its undealt cards come from (``undealt``):
  ``recorded`` (the tailleur's count when the cards passed, in the order recorded: ``method``
  scanned is the talon's order, counted the listing's), ``none_left`` (nothing was undealt),
  ``recorded_not_reconciled`` (the count differs from the pack: the cards short and over are
  named, each a critical anomaly, and the replay lists the cards the pack says remain, so that it
  still reproduces the coups as they were settled), or ``not_recorded`` (a talon passed before
  the count was recorded, or still in play: the replay lists the cards the pack says remain, in
  the pack's order; their order is never dealt, so it changes no coup);
- ``audit/events.jsonl`` with ``audit/canonical.py`` and ``audit/verify_events.py``: the audit
  events of the report's range, and a standard-library script that recomputes their hashes and
  checks they link up to the head hash signed in the report;
- ``replay/<seal>-<taille>.json`` for the rounds of the other games, as their package writes them
  (``GameModule.replay_documents``): a Pharao taille is the document the floor rebuilds it from,
  its cards with the bottom card last, its stakes and acts, the approvals named, so that
  ``python -m casino.games replay`` gives back its recorded draws and settlements; and their
  records (``GameModule.export_records``): ``pharao_tailles|draws|stakes|acts|approvals|
  settlements.csv``, the stakes' ids those of the replay documents.
"""

from __future__ import annotations

import csv
import io
import json
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from django.db.models import Q, QuerySet

from audit import canonical
from audit.canonical import format_time
from audit.models import AuditEvent
from casino.disputes.models import about_seances
from casino.floor.coups import rules_of
from casino.floor.models import Coup, CoupResult, Movement, Settlement, Shift, Stake
from casino.floor.registry import game_module
from casino.games.cards import card
from casino.reports.models import Report
from shoes.models import CardLaid, Pack, TalonCount
from shoes.services import composition


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
        "taille": coup.taille,
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


def _prisoners_before(coup: Coup) -> list[dict[str, Any]]:
    """The table's prison as the talon's first coup found it (REPLAY.md ``prison``): what the
    last coup settled at this table before it left there, carried from sixain to sixain."""
    last = (
        CoupResult.objects.filter(coup__shift__table_id=coup.shift.table_id, coup_id__lt=coup.pk)
        .order_by("-id")
        .first()
    )
    return list(last.prison_after) if last else []


UndealtSource = Literal["recorded", "recorded_not_reconciled", "none_left", "not_recorded"]


@dataclass(frozen=True)
class Talon:
    """One talon as the export tells it: the cards dealt from it, the undealt cards its replay
    lists, and where those come from (``talons.csv``'s ``undealt``)."""

    dealt: list[str]
    undealt: list[str]
    source: UndealtSource
    count: TalonCount | None


def talon_of(pack: Pack, taille: int) -> Talon:
    """The talon of one taille: the undealt cards the tailleur recorded when the cards passed,
    when they reconcile with the pack; otherwise those the pack says remain (composition less
    the cards laid and burned), in the pack's order."""
    out = CardLaid.objects.filter(pack=pack, taille=taille).order_by("seq")
    dealt = list(out.filter(burned=False).values_list("card", flat=True))
    holds = composition(pack)
    left = holds.remaining(card(c) for c in out.values_list("card", flat=True))
    remaining = [str(c) for c in dict.fromkeys(holds.cards) for _ in range(max(left[c], 0))]
    count = pack.talon_counts.filter(taille=taille).select_related("counted_by").first()
    if count is not None and count.balanced:
        return Talon(dealt, list(count.cards), "recorded", count)
    if count is not None:
        return Talon(dealt, remaining, "recorded_not_reconciled", count)
    return Talon(dealt, remaining, "not_recorded" if remaining else "none_left", None)


def replay_document(pack: Pack, taille: int = 1, *, talon: Talon | None = None) -> dict[str, Any]:
    """One talon of the pack (a taille: from a cut to the cards passing) in the replay format of
    REPLAY.md, so that ``python -m casino.games replay`` reproduces its recorded coups: every
    card of the sixain after the burn, the undealt ones included (as the tailleur recorded them
    when the cards passed, or else as the pack says they remain: see ``talon_of``), the
    prisoners carried in, and every stake. Stake ids are the stakes' ids in ``stakes.csv``. The
    règlement is the coup's posted version with the limits it was played under, every parameter
    spelled out."""
    coups = list(
        pack.coups.filter(taille=taille)
        .select_related("shift__table", "reglement")
        .order_by("number")
    )
    rules = json.loads(rules_of(coups[0]).to_json())
    rules.pop("name")
    stakes = []
    for stake in (
        Stake.objects.filter(coup__pack=pack, coup__taille=taille, withdrawal__isnull=True)
        .select_related("coup")
        .order_by("coup__number", "id")
    ):
        item: dict[str, Any] = {
            "id": str(stake.pk),
            "coup": stake.coup.number,
            "chance": stake.chance,
            "amount": stake.amount,
        }
        if stake.insured:
            item["insured"] = True
        if stake.on_refait:
            item["on_refait"] = stake.on_refait
        stakes.append(item)
    talon = talon or talon_of(pack, taille)
    return {
        "game": "trente-et-quarante",
        "reglement": {"preset": "baden-1854", "overrides": rules},
        "cards": talon.dealt + talon.undealt,
        "prison": _prisoners_before(coups[0]),
        "stakes": stakes,
    }


def _named(cards: dict[str, int]) -> str:
    return " ".join(f"{code}x{n}" for code, n in cards.items())


def _talon_row(pack: Pack, taille: int, file: str, talon: Talon) -> dict[str, Any]:
    count = talon.count
    return {
        "pack": pack.seal_number,
        "taille": taille,
        "replay": file,
        "dealt": len(talon.dealt),
        "undealt": talon.source,
        "undealt_in_replay": len(talon.undealt),
        "method": count.method if count else "",
        "counted_by": count.counted_by.username if count else "",
        "counted_at": format_time(count.at) if count else "",
        "expected": count.expected if count else "",
        "counted": len(count.cards) if count else "",
        "missing": _named(count.missing) if count else "",
        "extra": _named(count.extra) if count else "",
        "recorded_cards": " ".join(count.cards) if count else "",
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
        # The records of a day run to tens of thousands of rows: read as values, not as model
        # instances (with their related ones), which cost most of the export's time.
        archive.writestr(
            "stakes.csv",
            _csv(
                [
                    {
                        "id": s["id"],
                        "coup": s["coup_id"],
                        "ref": s["ref"],
                        "holder": s["holder__code"],
                        "chance": s["chance"],
                        "amount": s["amount"],
                        "insured": s["insured"],
                        "on_refait": s["on_refait"],
                        "withdrawn": s["withdrawal__id"] is not None,
                        "placed_by": s["placed_by__username"],
                        "placed_at": format_time(s["placed_at"]),
                    }
                    for s in Stake.objects.filter(coup__shift__in=shifts)
                    .order_by("id")
                    .values(
                        "id",
                        "coup_id",
                        "ref",
                        "holder__code",
                        "chance",
                        "amount",
                        "insured",
                        "on_refait",
                        "withdrawal__id",
                        "placed_by__username",
                        "placed_at",
                    )
                ]
            ),
        )
        archive.writestr(
            "settlements.csv",
            _csv(
                [
                    {
                        "coup": s["coup_id"],
                        "stake": s["stake_id"],
                        "outcome": s["outcome"],
                        "paid": s["paid"],
                        "returned": s["returned"],
                        "to_bank": s["to_bank"],
                        "premium": s["premium"],
                        "held": s["held"],
                        "level": s["level"],
                    }
                    for s in Settlement.objects.filter(coup__shift__in=shifts)
                    .order_by("id")
                    .values(
                        "coup_id",
                        "stake_id",
                        "outcome",
                        "paid",
                        "returned",
                        "to_bank",
                        "premium",
                        "held",
                        "level",
                    )
                ]
            ),
        )
        archive.writestr(
            "movements.csv",
            _csv(
                [
                    {
                        "id": m["id"],
                        "at": format_time(m["at"]),
                        "kind": m["kind"],
                        "from": m["credit__code"],
                        "to": m["debit__code"],
                        "amount": m["amount"],
                        "shift": m["shift_id"] or "",
                        "reference": m["reference"],
                        "idempotency_key": m["idempotency_key"],
                        "actor": m["actor__username"],
                    }
                    for m in Movement.objects.filter(
                        Q(shift__in=shifts) | Q(reference__in=disputes_refs)
                    )
                    .order_by("id")
                    .values(
                        "id",
                        "at",
                        "kind",
                        "credit__code",
                        "debit__code",
                        "amount",
                        "shift_id",
                        "reference",
                        "idempotency_key",
                        "actor__username",
                    )
                ]
            ),
        )
        talons = (
            Coup.objects.filter(shift__in=shifts)
            .values_list("pack_id", "taille")
            .distinct()
            .order_by("pack_id", "taille")
        )
        talon_rows = []
        for pack_id, taille in talons:
            pack = Pack.objects.get(pk=pack_id)
            file = f"replay/{pack.seal_number}-{taille}.json"
            talon = talon_of(pack, taille)
            document = replay_document(pack, taille, talon=talon)
            archive.writestr(file, json.dumps(document, ensure_ascii=False, indent=1))
            talon_rows.append(_talon_row(pack, taille, file, talon))
        archive.writestr("talons.csv", _csv(talon_rows))
        # The rounds each game keeps its own way (a Pharao taille...), as its package writes them.
        for game in sorted({s.table.game for s in shifts}):
            module = game_module(game)
            for name, document in module.replay_documents(shifts):
                archive.writestr(
                    f"replay/{name}", json.dumps(document, ensure_ascii=False, indent=1)
                )
            for stem, rows in module.export_records(shifts).items():
                archive.writestr(f"{stem}.csv", _csv(rows))
        events = (
            AuditEvent.objects.filter(seq__gte=report.chain_from, seq__lte=report.chain_to)
            .order_by("seq")
            .values(
                "seq",
                "at",
                "actor_id",
                "actor_name",
                "action",
                "subject_type",
                "subject_id",
                "prev_hash",
                "payload",
                "hash",
            )
        )
        archive.writestr(
            "audit/events.jsonl",
            "".join(
                json.dumps({**e, "at": format_time(e["at"])}, ensure_ascii=False) + "\n"
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
