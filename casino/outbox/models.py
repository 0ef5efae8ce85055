"""A request for background work, written in the transaction of the act that needs it."""

from __future__ import annotations

from django.db import models


class OutboxMessage(models.Model):
    """At-least-once delivery to the broker, exactly-once effect in the task.

    ``sent_at`` says the broker accepted it; ``done_at`` is set by the task in the same transaction
    as its work. The relay sends what was never sent, and sends again what was sent long ago but
    never done (the broker lost it), so a crash or an outage anywhere loses nothing.
    """

    task = models.CharField(max_length=120)
    kwargs = models.JSONField(default=dict)
    created_at = models.DateTimeField(db_index=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    send_count = models.PositiveIntegerField(default=0)
    done_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)

    class Meta:
        ordering = ["id"]
        verbose_name = "tâche demandée / outbox message"
        indexes = [
            models.Index(
                fields=["id"], condition=models.Q(done_at__isnull=True), name="outbox_pending"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.task} #{self.pk}"
