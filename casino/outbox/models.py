"""A request for background work, written in the transaction of the act that needs it."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _


class OutboxMessage(models.Model):
    """At-least-once delivery to the broker, exactly-once effect in the task.

    ``sent_at`` says the broker accepted it; ``done_at`` is set by the task in the same transaction
    as its work. The relay sends what was never sent, and sends again what was sent long ago but
    never done (the broker lost it, or the worker gave up), so a crash or an outage anywhere loses
    nothing.

    A run that fails is recorded (``attempts``, ``last_error``) with when the worker tries again
    (``retry_at``) or that it gave up (``failed_at``: the relay sends it again later). A run that
    fails because the database cannot be reached cannot record anything: the worker retries it and
    the first run that reaches the database again writes what happened (casino/outbox/outbox.py).
    """

    task = models.CharField(max_length=120)
    kwargs = models.JSONField(default=dict)
    created_at = models.DateTimeField(db_index=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    send_count = models.PositiveIntegerField(default=0)
    done_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(
        default=0, help_text=_("les exécutions enregistrées, échouées ou faites")
    )
    last_error = models.TextField(blank=True)
    retry_at = models.DateTimeField(
        null=True, blank=True, help_text=_("quand le worker essaie de nouveau après un échec")
    )
    failed_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text=_("le worker a abandonné : le relais l'envoie de nouveau plus tard"),
    )

    class Meta:
        verbose_name_plural = _("tâches demandées")
        ordering = ["id"]
        verbose_name = _("tâche demandée")
        indexes = [
            models.Index(
                fields=["id"], condition=models.Q(done_at__isnull=True), name="outbox_pending"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.task} #{self.pk}"

    @property
    def state(self) -> str:
        """``done``, ``failed`` (retries spent; sent again later), ``retrying`` (a run failed, the
        worker tries again at ``retry_at``) or ``pending`` (not run yet, or running)."""
        if self.done_at is not None:
            return "done"
        if self.failed_at is not None:
            return "failed"
        if self.last_error:
            return "retrying"
        return "pending"
