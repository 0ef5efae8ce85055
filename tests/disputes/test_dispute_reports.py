"""Corrections posted after a séance's close are reported: an addendum to the séance's report
(signed, requested through the outbox when they are posted) and the day's register."""

from __future__ import annotations

from pathlib import Path

from django.db import transaction
from django.utils import timezone

from casino.disputes.services import (
    decision_approve,
    dispute_decide,
    dispute_raise,
    dispute_review,
)
from casino.floor.models import Settlement
from casino.reports.models import Report
from casino.reports.services import register_request, report_render
from casino.reports.signing import verify_pdf
from tests.reports.test_shift_report import closed_seance, pdf_text, rendered


def test_corrections_after_the_close_get_a_signed_addendum_and_enter_the_register(
    cast, posted, chef2
):
    shift = closed_seance(hours=0.05)
    first = rendered(shift)  # the séance's report, signed at close
    lost = Settlement.objects.filter(coup__shift=shift, outcome="lost").select_related(
        "stake__holder"
    )[0]
    holder = lost.stake.holder.code
    bank = f"T{shift.table.number}:bank"
    dispute = dispute_raise(
        actor=cast.caissier,
        subject="stake",
        subject_id=lost.stake_id,
        claim="the patron was paid short",
        on_behalf_of=lost.stake.holder.name,
    )
    dispute_review(actor=chef2, dispute_id=dispute.pk, note="taken up")
    decision = dispute_decide(
        actor=chef2,
        dispute_id=dispute.pk,
        articles=[dispute.reglement.articles[0]["number"]],
        reasoning="the croupier miscounted the payment",
        corrections=[[bank, holder, 4321]],
        override_reason="a payment error the engine does not see",
    )
    # Awaiting approval nothing moved, and there is nothing to report yet.
    assert list(Report.objects.filter(shift=shift)) == [first]

    decision_approve(actor=cast.directeur, dispute_id=dispute.pk, note="checked the video")
    addendum = Report.objects.get(shift=shift, kind=Report.Kind.ADDENDUM)
    assert (addendum.version, addendum.decision, addendum.status) == (2, decision, "pending")
    assert addendum.outbox.task == "reports.render"
    assert dispute.reference in addendum.reason

    with transaction.atomic():  # as the worker's task does
        addendum = report_render(version=addendum.version, shift=shift.pk)
    verdict = verify_pdf(Path(addendum.pdf.path).read_bytes())
    assert verdict.ok, verdict.findings
    text = pdf_text(addendum)
    assert "Addendum au rapport de séance" in text
    assert f"v1 (SHA-256 {first.sha256[:16]}" in text  # the report it completes
    assert f"Contestation {dispute.pk}" in text
    assert "the croupier miscounted the payment" in text
    assert "par / by chef2" in text  # decided by
    assert "approuvée / approved le / on" in text
    assert "par / by directeur\nNote / note\nchecked the video" in text  # approved by
    assert f"{bank} -> {holder}: 43.21" in text  # ordered
    assert f"{bank}\n{holder}\n43.21\ndirecteur" in text  # posted, by the approver
    assert addendum.head_hash in text

    day = timezone.localdate()
    with transaction.atomic():
        register = register_request(day=day, actor=None, reason="test")
        register = report_render(version=register.version, day=day.isoformat())
    text = pdf_text(register)
    assert "Corrections sur contestation" in text
    section = text.split("Corrections sur contestation", 1)[1].split("Certifié exact")[0]
    row = section.split("mouvements / movements", 1)[1]
    assert row.startswith(f"\n{dispute.pk} (première")
    # the séance, decided by, approved by, the movement
    assert f"\nchef2\ndirecteur\n{bank} -> {holder}: 43.21" in row


def test_corrections_decided_without_approval_get_their_addendum_at_once(cast, posted, chef2):
    shift = closed_seance(hours=0.05)
    opposite = {"rouge": "noir", "noir": "rouge", "couleur": "inverse", "inverse": "couleur"}
    lost = Settlement.objects.filter(
        coup__shift=shift, outcome="lost", stake__amount__lte=10_000
    ).select_related("stake")[0]
    dispute = dispute_raise(
        actor=cast.caissier, subject="stake", subject_id=lost.stake_id, claim="other chance"
    )
    dispute_review(actor=chef2, dispute_id=dispute.pk, note="taken up")
    decision = dispute_decide(
        actor=chef2,
        dispute_id=dispute.pk,
        articles=[dispute.reglement.articles[0]["number"]],
        reasoning="the plaque was on the other chance",
        findings=[{"stake": lost.stake_id, "chance": opposite[lost.stake.chance]}],
    )
    assert decision.approval_grounds == ""
    assert decision.movements().count() == 1
    addendum = Report.objects.get(shift=shift, kind=Report.Kind.ADDENDUM)
    assert (addendum.version, addendum.decision) == (2, decision)
    with transaction.atomic():
        addendum = report_render(version=2, shift=shift.pk)
    assert "non requise / not required" in pdf_text(addendum)
