"""The audit records: the hash-chained event log, its verifications, and anomalies under review."""

from __future__ import annotations

import pgtrigger
from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.utils.translation import gettext_lazy as _

from audit.append_only import append_only
from audit.canonical import GENESIS_HASH
from casino import shown


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

    seq = models.BigIntegerField(primary_key=True, verbose_name=_("n°"))
    at = models.DateTimeField(db_index=True, verbose_name=_("date"))
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("personne"),
    )
    actor_name = models.CharField(max_length=150, verbose_name=_("personne"))
    action = models.CharField(max_length=80, db_index=True, verbose_name=_("acte"))
    subject_type = models.CharField(max_length=80, blank=True, verbose_name=_("sorte d'objet"))
    subject_id = models.CharField(max_length=64, blank=True, verbose_name=_("objet n°"))
    payload = models.TextField(
        help_text=_("JSON canonique, gardé tel qu'il a été haché"), verbose_name=_("contenu")
    )
    prev_hash = models.CharField(max_length=64, verbose_name=_("empreinte précédente"))
    hash = models.CharField(max_length=64, unique=True, verbose_name=_("empreinte"))

    class Meta:
        ordering = ["seq"]
        verbose_name = _("événement d'audit")
        verbose_name_plural = _("journal d'audit")
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

    at = models.DateTimeField(verbose_name=_("date"))
    ok = models.BooleanField(verbose_name=_("intacte"))
    events = models.BigIntegerField(verbose_name=_("événements"))
    head_seq = models.BigIntegerField(verbose_name=_("tête n°"))
    head_hash = models.CharField(max_length=64, verbose_name=_("empreinte de la tête"))
    first_broken_seq = models.BigIntegerField(
        null=True, blank=True, verbose_name=_("premier événement rompu")
    )
    reason = models.TextField(blank=True, verbose_name=_("raison"))
    seconds = models.FloatField(verbose_name=_("durée (s)"))

    class Meta:
        verbose_name_plural = _("vérifications de la chaîne")
        ordering = ["-at"]
        verbose_name = _("vérification de la chaîne")
        triggers = append_only()

    def __str__(self) -> str:
        verdict = _("intacte") if self.ok else _("ROMPUE")
        return f"{shown.moment(self.at)} {verdict} #{self.head_seq}"


class Severity(models.TextChoices):
    INFO = "info", _("information")
    WARNING = "warning", _("avertissement")
    CRITICAL = "critical", _("critique")


class AnomalyState(models.TextChoices):
    OPEN = "open", _("ouverte")
    ACKNOWLEDGED = "acknowledged", _("prise en compte")
    DISMISSED = "dismissed", _("classée")
    ESCALATED = "escalated", _("transmise au commissaire")
    CONFIRMED = "confirmed", _("confirmée")


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

    detector = models.CharField(max_length=60, db_index=True, verbose_name=_("détecteur"))
    severity = models.CharField(
        max_length=10, choices=Severity.choices, db_index=True, verbose_name=_("gravité")
    )
    subject_type = models.CharField(max_length=80, blank=True, verbose_name=_("sorte d'objet"))
    subject_id = models.CharField(max_length=64, blank=True, verbose_name=_("objet n°"))
    summary = models.CharField(max_length=300, verbose_name=_("résumé"))
    evidence = models.JSONField(default=dict, verbose_name=_("éléments"))
    detected_at = models.DateTimeField(db_index=True, verbose_name=_("détectée le"))
    involved = ArrayField(
        models.BigIntegerField(),
        default=list,
        blank=True,
        help_text=_(
            "les personnes dont les actes sont en question ; elles ne peuvent pas l'examiner"
        ),
        verbose_name=_("personnes en cause"),
    )
    dedup_key = models.CharField(
        max_length=200,
        unique=True,
        null=True,
        blank=True,
        help_text=_("un détecteur lève une seule anomalie par clé, aussi souvent qu'il passe"),
        verbose_name=_("clé de dédoublonnage"),
    )
    # Found through `anomaly_state_age`, which begins with it: no index of its own.
    state = models.CharField(
        max_length=20,
        choices=AnomalyState.choices,
        default=AnomalyState.OPEN,
        verbose_name=_("état"),
    )

    class Meta:
        ordering = ["-detected_at"]
        verbose_name = _("anomalie")
        verbose_name_plural = _("anomalies")
        permissions = [("review_anomaly", "Can review anomalies")]
        # The queue's first view: what waits, oldest first.
        indexes = [models.Index(fields=["state", "detected_at"], name="anomaly_state_age")]
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

    anomaly = models.ForeignKey(
        Anomaly, on_delete=models.PROTECT, related_name="reviews", verbose_name=_("anomalie")
    )
    at = models.DateTimeField(verbose_name=_("date"))
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("par")
    )
    from_state = models.CharField(
        max_length=20, choices=AnomalyState.choices, verbose_name=_("de l'état")
    )
    to_state = models.CharField(
        max_length=20, choices=AnomalyState.choices, verbose_name=_("à l'état")
    )
    reason = models.TextField(verbose_name=_("motif"))

    class Meta:
        verbose_name = _("examen d'anomalie")
        verbose_name_plural = _("examens d'anomalies")
        ordering = ["at"]
        triggers = append_only()
        constraints = [
            models.CheckConstraint(condition=~models.Q(reason=""), name="review_reason_required")
        ]

    def __str__(self) -> str:
        return f"{self.get_from_state_display()} → {self.get_to_state_display()}"
