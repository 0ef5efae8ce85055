"""An addendum to a séance's report: corrections a dispute's decision posted after the séance was
closed and reported. It names the report it completes, the dispute, the decision, its second
approval and the movements posted, and pins the audit chain as it stood once they were."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings

from casino.disputes.models import Decision
from casino.floor.models import Shift
from casino.reports.models import Report
from casino.reports.pdf import SMALL, WIDTH, Document, grid, heading, para, text
from casino.reports.shift_report import checkpoint, key_values, local, money, person


def addendum_document(report: Report) -> Document:
    shift = Shift.objects.select_related("table", "opened_by").get(pk=report.shift_id)
    decision = Decision.objects.select_related("dispute__raised_by", "decided_by").get(
        pk=report.decision_id
    )
    doc = Document(
        "Addendum au rapport de séance",
        "Addendum to the shift report",
        f"Table {shift.table.number} - {local(shift.opened_at)} / {local(shift.closed_at, '%H:%M')}",
        f"version {report.version} - chaîne d'audit / audit chain #{report.chain_to} "
        f"{report.head_hash[:16]}...",
    )
    earlier = Report.objects.filter(
        shift=shift, version__lt=report.version, rendered_at__isnull=False
    ).order_by("version")
    doc.add(
        key_values(
            [
                ("Casino", settings.CASINO_NAME),
                ("Licence / licence", settings.CASINO_LICENCE),
                ("Table / table", f"{shift.table.number} - {shift.table.get_game_display()}"),
                (
                    "Séance / shift",
                    f"{local(shift.opened_at)} - {local(shift.closed_at)}, "
                    f"chef de partie {person(shift.opened_by)}",
                ),
                (
                    "Complète / completes",
                    "; ".join(
                        f"{r.get_kind_display()} v{r.version} (SHA-256 {r.sha256[:16]}...)"
                        for r in earlier
                    )
                    or "-",
                ),
                (
                    "Addendum / addendum",
                    f"version {report.version}, demandé le / requested "
                    f"{local(report.requested_at)} ({report.reason})",
                ),
            ]
        )
    )
    _dispute(doc, decision)
    _decision(doc, decision)
    _approval(doc, decision)
    _movements(doc, decision)
    _history(doc, decision, report)
    checkpoint(doc, report, "Tête à la demande / head when requested")
    return doc


def _dispute(doc: Document, decision: Decision) -> None:
    dispute = decision.dispute
    doc.add(heading(f"Contestation {dispute.pk}", f"Dispute {dispute.pk}"))
    doc.add(
        key_values(
            [
                ("Objet / subject", dispute.subject_label()),
                (
                    "Soulevée / raised",
                    f"{local(dispute.raised_at)} par / by {person(dispute.raised_by)}"
                    + (f", pour / for {dispute.on_behalf_of}" if dispute.on_behalf_of else ""),
                ),
                ("Réclamation / claim", dispute.claim),
                ("Déclaration / statement", dispute.statement or "-"),
                ("Règlement / règlement", f"{dispute.reglement.name} v{dispute.reglement.version}"),
            ]
        )
    )


def _decision(doc: Document, decision: Decision) -> None:
    texts = {a["number"]: a for a in decision.dispute.reglement.articles}
    articles = "<br/>".join(
        f"<b>art. {text(n)}</b> {text(texts[n]['fr'])} <i>/ {text(texts[n]['en'])}</i>"
        for n in decision.articles
        if n in texts
    )
    doc.add(heading("Décision", "Decision"))
    doc.add(
        key_values(
            [
                ("Instance / instance", decision.get_instance_display()),
                (
                    "Décidée / decided",
                    f"{local(decision.decided_at)} par / by {person(decision.decided_by)}",
                ),
                ("Motifs / reasoning", decision.reasoning),
                (
                    "Faits constatés / findings",
                    json.dumps(decision.findings, ensure_ascii=False) if decision.findings else "-",
                ),
                ("Corrections ordonnées / ordered", _moves(decision.corrections)),
                ("Écart du calcul / override", decision.override_reason or "-"),
            ]
        )
    )
    doc.add(para(articles or "-", SMALL))


def _approval(doc: Document, decision: Decision) -> None:
    doc.add(heading("Second approbateur", "Second approval"))
    approval = getattr(decision, "approval", None)
    if not decision.approval_grounds:
        threshold = decision.dispute.reglement.correction_approval_threshold
        doc.add(
            para(
                text(
                    "non requise / not required: the engine's computation, moving no more than "
                    f"the threshold of {money(threshold)}"
                )
            )
        )
        return
    rows: list[tuple[str, str]] = [("Motif / grounds", decision.approval_grounds)]
    if approval is not None:
        verdict = "approuvée / approved" if approval.approved else "refusée / refused"
        rows.append(
            (
                "Approbation / approval",
                f"{verdict} le / on {local(approval.at)} par / by {person(approval.by)}",
            )
        )
        rows.append(("Note / note", approval.note))
    doc.add(key_values(rows))


def _movements(doc: Document, decision: Decision) -> None:
    doc.add(heading("Mouvements passés", "Movements posted"))
    rows: list[list[Any]] = [["le / at", "de / from", "à / to", "montant / amount", "par / by"]]
    for m in decision.movements():
        rows.append([local(m.at), m.credit.code, m.debit.code, money(m.amount), person(m.actor)])
    if len(rows) == 1:
        rows.append(["", "aucun / none", "", "", ""])
    doc.add(grid(rows, [80, 100, 100, 70, WIDTH - 350]))


def _history(doc: Document, decision: Decision, report: Report) -> None:
    doc.add(heading("Étapes de la contestation", "Steps of the dispute"))
    rows: list[list[Any]] = [["le / at", "par / by", "de -> à / from -> to", "note"]]
    # As they stood when the addendum was asked for: a later appeal has its own addendum.
    steps = decision.dispute.steps.filter(at__lte=report.requested_at).select_related("actor")
    for step in steps:
        rows.append(
            [
                local(step.at),
                person(step.actor),
                f"{step.from_state} -> {step.to_state}",
                para(text(step.note), SMALL),
            ]
        )
    doc.add(grid(rows, [70, 110, 150, WIDTH - 330]))


def _moves(corrections: list[Any]) -> str:
    return "; ".join(f"{a} -> {b}: {money(n)}" for a, b, n in corrections) or "aucune / none"
