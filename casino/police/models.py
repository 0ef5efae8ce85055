"""The police observations register: the commissioner's visits, checks and injunctions, and the
director's follow-up, due within eight days."""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.db import models

from audit.append_only import append_only
from casino.floor.models import Table

FOLLOW_UP_WITHIN = dt.timedelta(days=8)


class Observation(models.Model):
    """One entry of the commissioner in the register."""

    commissioner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    visited_at = models.DateTimeField()
    recorded_at = models.DateTimeField()
    table = models.ForeignKey(Table, null=True, blank=True, on_delete=models.PROTECT)
    checks = models.TextField(help_text="what was checked and found")
    injunctions = models.TextField(blank=True, help_text="what the house is ordered to do")
    follow_up_due = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["-visited_at", "-id"]
        verbose_name = "observation de police / police observation"
        triggers = append_only()
        constraints = [models.CheckConstraint(condition=~models.Q(checks=""), name="checks_made")]

    def __str__(self) -> str:
        return f"visite du {self.visited_at:%Y-%m-%d %H:%M} ({self.commissioner})"


class FollowUp(models.Model):
    """The director's answer to an observation: what was done."""

    observation = models.OneToOneField(
        Observation, on_delete=models.PROTECT, related_name="follow_up"
    )
    director = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    at = models.DateTimeField()
    action = models.TextField()

    class Meta:
        verbose_name = "suite donnée / follow-up"
        triggers = append_only()
        constraints = [models.CheckConstraint(condition=~models.Q(action=""), name="action_taken")]

    def __str__(self) -> str:
        return f"suite du {self.at:%Y-%m-%d} à {self.observation}"
