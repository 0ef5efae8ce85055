"""Signed PDF reports: a séance's report, its addenda (corrections decided on a dispute about its
play, after its close) and the day's register (registre de contrôle), each in numbered versions.
A version is requested in the transaction of what causes it (a séance closed, a correction posted,
a regeneration, the register's sign-offs) and rendered once by a worker; the signed file's SHA-256
enters the audit chain."""

from __future__ import annotations

import pgtrigger
from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from audit.append_only import append_only
from casino import shown
from casino.floor.models import Shift
from casino.outbox.models import OutboxMessage


class Report(models.Model):
    class Kind(models.TextChoices):
        SHIFT = "shift", _("rapport de séance")
        REGISTER = "register", _("registre de contrôle")
        ADDENDUM = "addendum", _("addendum au rapport de séance")

    kind = models.CharField(max_length=10, choices=Kind.choices, verbose_name=_("sorte"))
    # Found through `one_shift_report_version`, which begins with it: no index of its own.
    shift = models.ForeignKey(
        Shift,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        db_index=False,
        related_name="reports",
        verbose_name=_("séance"),
    )
    day = models.DateField(
        null=True,
        blank=True,
        help_text=_("la journée de jeu d'un registre"),
        verbose_name=_("journée"),
    )
    decision = models.ForeignKey(
        "disputes.Decision",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text=_("la décision dont un addendum rapporte les corrections"),
        verbose_name=_("décision"),
    )
    version = models.PositiveIntegerField(verbose_name=_("version"))
    requested_at = models.DateTimeField(verbose_name=_("demandé le"))
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("demandé par"),
    )
    reason = models.CharField(max_length=200, verbose_name=_("motif"))
    # The audit chain at the moment the report speaks for: the séance's close, the register's
    # request. Signed inside the PDF as a checkpoint.
    chain_from = models.BigIntegerField(
        help_text=_("le premier événement d'audit couvert"), verbose_name=_("chaîne depuis")
    )
    chain_to = models.BigIntegerField(
        help_text=_("la tête de la chaîne au point de contrôle"), verbose_name=_("chaîne jusqu'à")
    )
    head_hash = models.CharField(max_length=64, verbose_name=_("empreinte de la tête"))
    outbox = models.ForeignKey(
        OutboxMessage,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("tâche"),
    )
    # Written once, by the render.
    rendered_at = models.DateTimeField(null=True, blank=True, verbose_name=_("rendu le"))
    pdf = models.FileField(upload_to="reports/", blank=True, verbose_name=_("PDF"))
    sha256 = models.CharField(max_length=64, blank=True, verbose_name=_("SHA-256"))
    pages = models.PositiveIntegerField(null=True, blank=True, verbose_name=_("pages"))
    signer = models.CharField(max_length=300, blank=True, verbose_name=_("signataire"))

    class Meta:
        verbose_name_plural = _("rapports")
        ordering = ["-requested_at", "-id"]
        verbose_name = _("rapport")
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
        day = shown.day(self.day)
        subject = _("séance %(shift)s") % {"shift": self.shift_id} if self.shift_id else day
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
        DIRECTEUR = "directeur", _("directeur")
        COMITE = "comite", _("membre du comité")

    # Found through `one_signoff_per_capacity`, which begins with it: no index of its own.
    day = models.DateField(verbose_name=_("journée"))
    person = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("personne"),
    )
    capacity = models.CharField(max_length=10, choices=Capacity.choices, verbose_name=_("qualité"))
    at = models.DateTimeField(verbose_name=_("date"))
    report = models.ForeignKey(
        Report,
        on_delete=models.PROTECT,
        related_name="+",
        help_text=_("la version visée"),
        verbose_name=_("rapport"),
    )

    class Meta:
        verbose_name_plural = _("visas du registre de contrôle")
        ordering = ["day", "at"]
        verbose_name = _("visa du registre de contrôle")
        triggers = append_only()
        constraints = [
            models.UniqueConstraint(fields=["day", "capacity"], name="one_signoff_per_capacity"),
            models.UniqueConstraint(fields=["day", "person"], name="two_different_people"),
        ]

    def __str__(self) -> str:
        return f"{shown.day(self.day)} : {self.person} ({self.get_capacity_display()})"
