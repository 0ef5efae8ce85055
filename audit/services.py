"""Every write of the audit domain: raising anomalies, reviewing them, recording verifications."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import IntegrityError, models, transaction
from django.utils.translation import gettext as _

from audit.chain import Verification, audit_record, verify_chain
from audit.errors import (
    IllegalReviewStep,
    ReviewBatchTooLarge,
    ReviewerInvolved,
    ReviewReasonRequired,
)
from audit.models import (
    ANOMALY_TRANSITIONS,
    Anomaly,
    AnomalyReview,
    AnomalyState,
    ChainVerification,
    Severity,
)
from casino import clock
from casino.errors import DomainError, NotFound
from casino.people.roles import Role
from casino.people.services import require_role

# Who may take each review step. Internal audit and the director review; what is escalated goes to
# the police commissioner, whose ruling closes it.
REVIEWERS: dict[tuple[str, str], tuple[Role, ...]] = {
    (AnomalyState.OPEN, AnomalyState.ACKNOWLEDGED): (Role.AUDITEUR, Role.DIRECTEUR),
    (AnomalyState.ACKNOWLEDGED, AnomalyState.DISMISSED): (Role.AUDITEUR, Role.DIRECTEUR),
    (AnomalyState.ACKNOWLEDGED, AnomalyState.ESCALATED): (Role.AUDITEUR, Role.DIRECTEUR),
    (AnomalyState.ACKNOWLEDGED, AnomalyState.CONFIRMED): (Role.AUDITEUR, Role.DIRECTEUR),
    (AnomalyState.ESCALATED, AnomalyState.DISMISSED): (Role.COMMISSAIRE,),
    (AnomalyState.ESCALATED, AnomalyState.CONFIRMED): (Role.COMMISSAIRE,),
}
assert set(REVIEWERS) == set(ANOMALY_TRANSITIONS)


def anomaly_raise(
    *,
    detector: str,
    severity: Severity,
    summary: str,
    evidence: dict[str, Any],
    subject: models.Model | tuple[str, object] | None = None,
    involved: Iterable[int] = (),
    dedup_key: str | None = None,
    actor: Any = None,
) -> Anomaly:
    """Record an anomaly (in the caller's transaction, if any) and audit it.

    With a ``dedup_key``, raising the same anomaly again returns the first one: detectors may run
    as often as they like.
    """
    if dedup_key is not None:
        existing = Anomaly.objects.filter(dedup_key=dedup_key).first()
        if existing is not None:
            return existing
    if isinstance(subject, models.Model):
        subject_type, subject_id = subject._meta.label_lower, str(subject.pk)
    elif subject is not None:
        subject_type, subject_id = subject[0], str(subject[1])
    else:
        subject_type, subject_id = "", ""
    with transaction.atomic():
        try:
            with transaction.atomic():
                anomaly = Anomaly.objects.create(
                    detector=detector,
                    severity=severity,
                    subject_type=subject_type,
                    subject_id=subject_id,
                    summary=summary[:300],
                    evidence=evidence,
                    detected_at=clock.now(),
                    involved=sorted(set(involved)),
                    dedup_key=dedup_key,
                )
        except IntegrityError:
            # Another detector run raised it in the meantime.
            return Anomaly.objects.get(dedup_key=dedup_key)
        audit_record(
            actor=actor,
            action="anomaly.raised",
            subject=anomaly,
            payload={
                "detector": detector,
                "severity": str(severity),
                "summary": summary,
                "subject": f"{subject_type}:{subject_id}",
                "evidence": evidence,
            },
        )
    return anomaly


@transaction.atomic
def anomaly_review(
    *, actor: Any, anomaly_id: int, to_state: AnomalyState | str, reason: str
) -> Anomaly:
    """Move an anomaly one step forward in its review, with the reviewer's reason."""
    try:
        anomaly = Anomaly.objects.select_for_update().get(pk=anomaly_id)
    except Anomaly.DoesNotExist:
        raise NotFound(
            _("l'anomalie %(anomaly)s n'existe pas") % {"anomaly": anomaly_id}, where="anomaly"
        ) from None
    to_state = AnomalyState(to_state)
    _check_review(actor, anomaly, to_state)
    reason = _reason(reason)
    return _write_review(actor, anomaly, to_state, reason)


# A batch holds the audit chain's lock (every act of the house waits) from its first event to its
# commit. Two hundred steps took 0.39 s, the chain held for the last 0.16 s of it, on the loaded
# two-core test machine; a month's queue at once would hold the house for a minute or more, and
# one reason for thousands of anomalies is not a review anyway.
BATCH_LIMIT = 200


@transaction.atomic
def anomalies_review(
    *, actor: Any, anomaly_ids: Iterable[int], to_state: AnomalyState | str, reason: str
) -> list[Anomaly]:
    """The same review step, with one reason, for each anomaly: all of them or none.

    Each step is checked and audited exactly as ``anomaly_review`` does (the step legal from the
    anomaly's state, the actor's role, the actor not among the people in question); when any one
    is refused, the batch is refused as a whole, naming that anomaly, and nothing is recorded.
    Every anomaly is checked before the first is written, so a refused batch never takes the audit
    chain's lock.
    """
    ids = sorted({int(pk) for pk in anomaly_ids})
    to_state = AnomalyState(to_state)
    reason = _reason(reason)
    if not ids:
        raise NotFound(_("aucune anomalie choisie"), where="anomaly_ids")
    if len(ids) > BATCH_LIMIT:
        raise ReviewBatchTooLarge(
            _("un lot compte au plus %(limit)s anomalies ; %(count)s choisies")
            % {"limit": BATCH_LIMIT, "count": len(ids)},
            where="anomaly_ids",
        )
    # Locked in one order (their numbers): two batches that share anomalies wait, never deadlock.
    anomalies = list(Anomaly.objects.select_for_update().filter(pk__in=ids).order_by("pk"))
    missing = sorted(set(ids) - {a.pk for a in anomalies})
    if missing:
        raise NotFound(
            _("l'anomalie %(anomaly)s n'existe pas") % {"anomaly": missing[0]}, where="anomaly_ids"
        )
    for anomaly in anomalies:
        try:
            _check_review(actor, anomaly, to_state)
        except DomainError as refused:
            raise type(refused)(
                _(
                    "rien n'est enregistré : l'anomalie %(anomaly)s (%(summary)s) est refusée : %(why)s"
                )
                % {"anomaly": anomaly.pk, "summary": anomaly.summary[:80], "why": refused.message},
                where=f"anomaly:{anomaly.pk}",
            ) from refused
    # Every row first, then the audit events: the chain's lock is taken at the first event.
    payloads = [_apply_review(actor, anomaly, to_state, reason) for anomaly in anomalies]
    for anomaly, payload in zip(anomalies, payloads, strict=True):
        _audit_review(actor, anomaly, payload)
    return anomalies


def _reason(reason: str | None) -> str:
    reason = (reason or "").strip()
    if not reason:
        raise ReviewReasonRequired(_("une étape d'examen demande une raison"), where="reason")
    return reason


def _check_review(actor: Any, anomaly: Anomaly, to_state: AnomalyState) -> None:
    """Refuse the step unless it is legal from the anomaly's state, the actor holds a role that
    takes it, and the actor is not among the people in question."""
    step = (AnomalyState(anomaly.state), to_state)
    if step not in REVIEWERS:
        raise IllegalReviewStep(
            _("l'anomalie %(anomaly)s est %(state)s ; elle ne peut pas passer à %(to)s")
            % {"anomaly": anomaly.pk, "state": anomaly.state, "to": to_state},
            where="state",
        )
    require_role(
        actor,
        *REVIEWERS[step],
        act=_("faire passer une anomalie à %(to)s") % {"to": to_state},
    )
    if actor.pk in anomaly.involved:
        raise ReviewerInvolved(
            _("%(user)s est impliqué dans l'anomalie %(anomaly)s et ne peut pas l'examiner")
            % {"user": actor.username, "anomaly": anomaly.pk},
            where="actor",
        )


def _write_review(actor: Any, anomaly: Anomaly, to_state: AnomalyState, reason: str) -> Anomaly:
    """The step itself, once checked: its review row, the new state, and its audit event."""
    _audit_review(actor, anomaly, _apply_review(actor, anomaly, to_state, reason))
    return anomaly


def _apply_review(
    actor: Any, anomaly: Anomaly, to_state: AnomalyState, reason: str
) -> dict[str, Any]:
    """The review row and the new state; returns what the audit event says."""
    review = AnomalyReview.objects.create(
        anomaly=anomaly,
        at=clock.now(),
        actor=actor,
        from_state=anomaly.state,
        to_state=to_state,
        reason=reason,
    )
    from_state = anomaly.state
    anomaly.state = to_state
    anomaly.save(update_fields=["state"])
    return {"review": review.pk, "from": from_state, "to": to_state.value, "reason": reason}


def _audit_review(actor: Any, anomaly: Anomaly, payload: dict[str, Any]) -> None:
    audit_record(actor=actor, action="anomaly.reviewed", subject=anomaly, payload=payload)


def chain_verify_and_record() -> Verification:
    """Verify the whole chain, keep the result, and raise a critical anomaly if it is broken."""
    result = verify_chain()
    with transaction.atomic():
        ChainVerification.objects.create(
            at=clock.now(),
            ok=result.ok,
            events=result.events,
            head_seq=result.head_seq,
            head_hash=result.head_hash,
            first_broken_seq=result.first_broken_seq,
            reason=result.reason,
            seconds=result.seconds,
        )
        if not result.ok:
            anomaly_raise(
                detector="audit_chain_broken",
                severity=Severity.CRITICAL,
                summary=result.describe(),
                subject=("audit.auditevent", result.first_broken_seq),
                evidence={"first_broken_seq": result.first_broken_seq, "reason": result.reason},
                dedup_key=f"audit_chain_broken:{result.first_broken_seq}",
            )
    return result
