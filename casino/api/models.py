from __future__ import annotations

from django.conf import settings
from django.db import models

from casino import clock


class IdempotentRequest(models.Model):
    """The first answer given to a write, kept under its key for retries."""

    # Found through `one_answer_per_key`, which begins with it: no index of its own.
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, db_index=False, related_name="+"
    )
    key = models.CharField(max_length=200)
    fingerprint = models.CharField(max_length=64)
    status = models.PositiveSmallIntegerField()
    body = models.JSONField()
    created_at = models.DateTimeField(default=clock.now)  # a simulation's time too

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "key"], name="one_answer_per_key")]

    def __str__(self) -> str:
        return f"{self.user_id}:{self.key}"
