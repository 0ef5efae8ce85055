"""Signed PDF reports: a séance's report, its addenda (corrections decided on a dispute about its
play, after its close) and the day's register (registre de contrôle), each in numbered versions.
A version is requested in the transaction of what causes it (a séance closed, a correction posted,
a regeneration, the register's sign-offs) and rendered once by a worker; the signed file's SHA-256
enters the audit chain."""

from __future__ import annotations

import pgtrigger
from django.conf import settings
from django.db import models

from audit.append_only import append_only
from casino.floor.models import Shift
from casino.outbox.models import OutboxMessage


class Report(models.Model):
    class Kind(models.TextChoices):
        SHIFT = "shift", "rapport de séance / shift report"
        REGISTER = "register", "registre de contrôle / daily register"
        ADDENDUM = "addendum", "addendum au rapport de séance / addendum to the shift report"

    kind = models.CharField(max_length=10, choices=Kind.choices)
    shift = models.ForeignKey(
        Shift, null=True, blank=True, on_delete=models.PROTECT, related_name="reports"
    )
    day = models.DateField(null=True, blank=True, help_text="the gaming day of a register")
    decision = models.ForeignKey(
        "disputes.Decision",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="the decision whose corrections an addendum reports",
    )
    version = models.PositiveIntegerField()
    requested_at = models.DateTimeField()
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    reason = models.CharField(max_length=200)
    # The audit chain at the moment the report speaks for: the séance's close, the register's
    # request. Signed inside the PDF as a checkpoint.
    chain_from = models.BigIntegerField(help_text="first audit event of the range")
    chain_to = models.BigIntegerField(help_text="the chain's head at the checkpoint")
    head_hash = models.CharField(max_length=64)
    outbox = models.ForeignKey(
        OutboxMessage, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    # Written once, by the render.
    rendered_at = models.DateTimeField(null=True, blank=True)
    pdf = models.FileField(upload_to="reports/", blank=True)
    sha256 = models.CharField(max_length=64, blank=True)
    pages = models.PositiveIntegerField(null=True, blank=True)
    signer = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["-requested_at", "-id"]
        verbose_name = "rapport / report"
        constraints = [
            models.UniqueConstraint(fields=["shift", "version"], name="one_shift_report_version"),
            models.UniqueConstraint(fields=["day", "version"], name="one_register_version"),
            models.CheckConstraint(
                condition=models.Q(
                    kind="shift", shift__isnull=False, day__isnull=True, decision__isnull=True
                )
                | models.Q(
                    kind="register", shift__isnull=True, day__isnull=False, decision__isnull=True
                )
                | models.Q(
                    kind="addendum", shift__isnull=False, day__isnull=True, decision__isnull=False
                ),
                name="report_subject",
            ),
        ]
        triggers = [
            pgtrigger.Protect(name="not_deleted", operation=pgtrigger.Delete),
            # Only the render fills the result in, once.
            pgtrigger.ReadOnly(
                name="only_the_render_writes",
                exclude=["rendered_at", "pdf", "sha256", "pages", "signer"],
            ),
            pgtrigger.Protect(
                name="rendered_once",
                operation=pgtrigger.Update,
                condition=pgtrigger.Q(old__rendered_at__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        subject = f"séance {self.shift_id}" if self.shift_id else f"{self.day}"
        return f"{self.get_kind_display()} {subject} v{self.version}"

    @property
    def status(self) -> str:
        """``signed``; else its request's state: ``pending`` (not run yet, or running),
        ``retrying`` (a run failed, the worker tries again) or ``failed`` (the worker gave up;
        the relay sends it again later)."""
        if self.rendered_at is not None:
            return "signed"
        if self.outbox is None or self.outbox.state == "done":
            return "pending"
        return self.outbox.state


class RegisterSignOff(models.Model):
    """ "Certifié exact": the director and a second comité member sign the day's register."""

    class Capacity(models.TextChoices):
        DIRECTEUR = "directeur", "directeur"
        COMITE = "comite", "membre du comité / committee member"

    day = models.DateField(db_index=True)
    person = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    capacity = models.CharField(max_length=10, choices=Capacity.choices)
    at = models.DateTimeField()
    report = models.ForeignKey(
        Report, on_delete=models.PROTECT, related_name="+", help_text="the version signed off"
    )

    class Meta:
        ordering = ["day", "at"]
        verbose_name = "visa du registre / register sign-off"
        triggers = append_only()
        constraints = [
            models.UniqueConstraint(fields=["day", "capacity"], name="one_signoff_per_capacity"),
            models.UniqueConstraint(fields=["day", "person"], name="two_different_people"),
        ]

    def __str__(self) -> str:
        return f"{self.day}: {self.person} ({self.capacity})"
