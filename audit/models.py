"""The audit records: the hash-chained event log, its verifications, and anomalies under review."""

from __future__ import annotations

import pgtrigger
from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models

from audit.append_only import append_only
from audit.canonical import GENESIS_HASH


class ChainHead(models.Model):
    """The seq and hash of the last committed event, kept by the database itself.

    A deferred trigger moves it once per transaction, at commit, to the transaction's last event;
    it may only move forward, onto an existing event. The verifier checks it against the events,
    which reveals events cut off the end of the chain.
    """

    id = models.PositiveSmallIntegerField(primary_key=True, default=1)
    seq = models.BigIntegerField(default=0)
    hash = models.CharField(max_length=64, default=GENESIS_HASH)

    class Meta:
        triggers = [
            pgtrigger.Protect(name="head_not_deleted", operation=pgtrigger.Delete),
            pgtrigger.Trigger(
                name="head_moves_forward",
                when=pgtrigger.Before,
                operation=pgtrigger.Update,
                func="""
                IF NEW.id <> OLD.id OR NEW.seq <= OLD.seq OR NOT EXISTS (
                    SELECT 1 FROM audit_auditevent e WHERE e.seq = NEW.seq AND e.hash = NEW.hash
                ) THEN
                    RAISE EXCEPTION 'audit chain head may only move forward, onto an event';
                END IF;
                RETURN NEW;
                """,
            ),
        ]

    def __str__(self) -> str:
        return f"head #{self.seq} {self.hash[:16]}"


class AuditEvent(models.Model):
    """One act, in the order acts happened. Written only by ``audit.chain.audit_record``."""

    seq = models.BigIntegerField(primary_key=True)
    at = models.DateTimeField(db_index=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    actor_name = models.CharField(max_length=150)
    action = models.CharField(max_length=80, db_index=True)
    subject_type = models.CharField(max_length=80, blank=True)
    subject_id = models.CharField(max_length=64, blank=True)
    payload = models.TextField(help_text="canonical JSON, stored exactly as hashed")
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64, unique=True)

    class Meta:
        ordering = ["seq"]
        verbose_name = "événement d'audit / audit event"
        verbose_name_plural = "journal d'audit / audit events"
        indexes = [models.Index(fields=["subject_type", "subject_id"])]
        triggers = [
            *append_only(),
            # Linkage is checked on insert too: the next seq after the last event, chained to
            # its hash (the primary key index makes "the last event" one lookup).
            pgtrigger.Trigger(
                name="appends_to_last_event",
                when=pgtrigger.Before,
                operation=pgtrigger.Insert,
                declare=[("last_seq", "BIGINT"), ("last_hash", "VARCHAR(64)")],
                func="""
                SELECT e.seq, e.hash INTO last_seq, last_hash
                  FROM audit_auditevent e ORDER BY e.seq DESC LIMIT 1;
                IF NEW.seq <> COALESCE(last_seq, 0) + 1
                   OR NEW.prev_hash <> COALESCE(last_hash, repeat('0', 64)) THEN
                    RAISE EXCEPTION 'audit event % does not follow the last event', NEW.seq;
                END IF;
                RETURN NEW;
                """,
            ),
            # The head follows at commit, once per transaction: only for its last event.
            pgtrigger.Trigger(
                name="head_follows_at_commit",
                when=pgtrigger.After,
                operation=pgtrigger.Insert,
                timing=pgtrigger.Deferred,
                func="""
                IF NEW.seq = (SELECT max(e.seq) FROM audit_auditevent e) THEN
                    UPDATE audit_chainhead SET seq = NEW.seq, hash = NEW.hash WHERE id = 1;
                END IF;
                RETURN NULL;
                """,
            ),
        ]

    def __str__(self) -> str:
        return f"#{self.seq} {self.action}"


class ChainVerification(models.Model):
    """A recomputation of the whole chain (by the hourly task or ``verify_audit``)."""

    at = models.DateTimeField()
    ok = models.BooleanField()
    events = models.BigIntegerField()
    head_seq = models.BigIntegerField()
    head_hash = models.CharField(max_length=64)
    first_broken_seq = models.BigIntegerField(null=True, blank=True)
    reason = models.TextField(blank=True)
    seconds = models.FloatField()

    class Meta:
        ordering = ["-at"]
        verbose_name = "vérification de la chaîne / chain verification"
        triggers = append_only()

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {'ok' if self.ok else 'BROKEN'} #{self.head_seq}"


class Severity(models.TextChoices):
    INFO = "info", "Info"
    WARNING = "warning", "Avertissement / Warning"
    CRITICAL = "critical", "Critique / Critical"


class AnomalyState(models.TextChoices):
    OPEN = "open", "Ouverte / Open"
    ACKNOWLEDGED = "acknowledged", "Prise en compte / Acknowledged"
    DISMISSED = "dismissed", "Classée / Dismissed"
    ESCALATED = "escalated", "Transmise au commissaire / Escalated"
    CONFIRMED = "confirmed", "Confirmée / Confirmed"


# The review moves forward only. An escalated anomaly is ruled on by the commissioner.
ANOMALY_TRANSITIONS = (
    (AnomalyState.OPEN, AnomalyState.ACKNOWLEDGED),
    (AnomalyState.ACKNOWLEDGED, AnomalyState.DISMISSED),
    (AnomalyState.ACKNOWLEDGED, AnomalyState.ESCALATED),
    (AnomalyState.ACKNOWLEDGED, AnomalyState.CONFIRMED),
    (AnomalyState.ESCALATED, AnomalyState.DISMISSED),
    (AnomalyState.ESCALATED, AnomalyState.CONFIRMED),
)


class Anomaly(models.Model):
    """Something a detector (or a refused act) flagged for human review."""

    detector = models.CharField(max_length=60, db_index=True)
    severity = models.CharField(max_length=10, choices=Severity.choices, db_index=True)
    subject_type = models.CharField(max_length=80, blank=True)
    subject_id = models.CharField(max_length=64, blank=True)
    summary = models.CharField(max_length=300)
    evidence = models.JSONField(default=dict)
    detected_at = models.DateTimeField(db_index=True)
    involved = ArrayField(
        models.BigIntegerField(),
        default=list,
        blank=True,
        help_text="users whose acts are in question; they may not review it",
    )
    dedup_key = models.CharField(
        max_length=200,
        unique=True,
        null=True,
        blank=True,
        help_text="a detector raises one anomaly per key, however often it runs",
    )
    state = models.CharField(
        max_length=20, choices=AnomalyState.choices, default=AnomalyState.OPEN, db_index=True
    )

    class Meta:
        ordering = ["-detected_at"]
        verbose_name = "anomalie / anomaly"
        verbose_name_plural = "anomalies"
        permissions = [("review_anomaly", "Can review anomalies")]
        triggers = [
            pgtrigger.Protect(name="not_deleted", operation=pgtrigger.Delete),
            pgtrigger.ReadOnly(name="only_state_changes", exclude=["state"]),
            pgtrigger.FSM(
                name="state_forward_only",
                field="state",
                transitions=[(a.value, b.value) for a, b in ANOMALY_TRANSITIONS],
            ),
        ]

    def __str__(self) -> str:
        return f"{self.detector}: {self.summary}"


class AnomalyReview(models.Model):
    """One step of an anomaly's review, with who took it and why."""

    anomaly = models.ForeignKey(Anomaly, on_delete=models.PROTECT, related_name="reviews")
    at = models.DateTimeField()
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    from_state = models.CharField(max_length=20, choices=AnomalyState.choices)
    to_state = models.CharField(max_length=20, choices=AnomalyState.choices)
    reason = models.TextField()

    class Meta:
        ordering = ["at"]
        triggers = append_only()
        constraints = [
            models.CheckConstraint(condition=~models.Q(reason=""), name="review_reason_required")
        ]

    def __str__(self) -> str:
        return f"{self.from_state} → {self.to_state}"
