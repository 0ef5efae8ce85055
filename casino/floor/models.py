"""The gaming floor: tables and their séances (shifts).

Only what the sealed packs need so far: a pack is opened at a table during a séance. The floor issue
adds limits, the posted règlement, the float count, staffing, coups and the ledger.
"""

from __future__ import annotations

import pgtrigger
from django.conf import settings
from django.db import models


class Game(models.TextChoices):
    TRENTE_ET_QUARANTE = "trente-et-quarante", "Trente-et-Quarante"
    PHARAO = "pharao", "Pharao"
    ALLIANCE = "alliance", "Alliance"


class Table(models.Model):
    number = models.PositiveSmallIntegerField(unique=True)
    game = models.CharField(max_length=30, choices=Game.choices)
    reglement = models.CharField(
        max_length=40,
        default="baden-1854",
        help_text="preset in force until the floor's posted règlements replace it",
    )

    class Meta:
        ordering = ["number"]
        verbose_name = "table"

    def __str__(self) -> str:
        return f"Table {self.number} ({self.get_game_display()})"


class Shift(models.Model):
    """A séance at one table: opened and closed by the chef de partie."""

    table = models.ForeignKey(Table, on_delete=models.PROTECT, related_name="shifts")
    opened_at = models.DateTimeField()
    opened_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-opened_at"]
        verbose_name = "séance / shift"
        constraints = [
            models.UniqueConstraint(
                fields=["table"],
                condition=models.Q(closed_at__isnull=True),
                name="one_open_shift_per_table",
            ),
        ]
        triggers = [
            pgtrigger.Protect(name="not_deleted", operation=pgtrigger.Delete),
            pgtrigger.ReadOnly(name="only_closing_changes", exclude=["closed_at"]),
            # Closed once, never reopened or re-dated.
            pgtrigger.Protect(
                name="closed_once",
                operation=pgtrigger.Update,
                condition=pgtrigger.Q(old__closed_at__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.table} · {self.opened_at:%Y-%m-%d %H:%M}"
