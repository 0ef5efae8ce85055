"""Trente-et-Quarante's records at the table: coups, their stakes, results and settlements.

They keep their tables in the floor app (``floor_coup``...: its migrations, ``app_label``) and are
loaded with it (``casino/floor/models.py``); the acts that write them are in ``coups.py``.
"""

from __future__ import annotations

import pgtrigger
from django.conf import settings
from django.db import models

from audit.append_only import append_only

__all__ = [
    "COUP_TRANSITIONS",
    "Coup",
    "CoupCancellation",
    "CoupPhase",
    "CoupResult",
    "Settlement",
    "Stake",
    "StakeWithdrawal",
]


class CoupPhase(models.TextChoices):
    BETTING = "betting", "Faites vos jeux"
    CLOSED = "closed", "Le jeu est fait"
    DEALING = "dealing", "Tirage / dealing"
    COMPLETE = "complete", "Rangées complètes / rows complete"
    SETTLED = "settled", "Réglé / settled"
    CANCELLED = "cancelled", "Annulé / cancelled"


COUP_TRANSITIONS = (
    (CoupPhase.BETTING, CoupPhase.CLOSED),
    (CoupPhase.CLOSED, CoupPhase.DEALING),
    (CoupPhase.DEALING, CoupPhase.COMPLETE),
    (CoupPhase.COMPLETE, CoupPhase.SETTLED),
    (CoupPhase.DEALING, CoupPhase.SETTLED),  # void: the cut card or the end of the cards
    (CoupPhase.CLOSED, CoupPhase.SETTLED),
    # The chef de partie cancels a coup that cannot go on (stakes returned, an anomaly raised).
    (CoupPhase.BETTING, CoupPhase.CANCELLED),
    (CoupPhase.CLOSED, CoupPhase.CANCELLED),
    (CoupPhase.DEALING, CoupPhase.CANCELLED),
    (CoupPhase.COMPLETE, CoupPhase.CANCELLED),
)


class Coup(models.Model):
    """One coup of Trente-et-Quarante at a table, under the règlement version in force."""

    shift = models.ForeignKey("floor.Shift", on_delete=models.PROTECT, related_name="coups")
    pack = models.ForeignKey("shoes.Pack", on_delete=models.PROTECT, related_name="coups")
    taille = models.PositiveSmallIntegerField(
        default=1, help_text="which taille of the pack: 1, then again after each new cut"
    )
    number = models.PositiveIntegerField(help_text="within the taille (the pack since its cut)")
    reglement = models.ForeignKey(
        "floor.PostedReglement", on_delete=models.PROTECT, related_name="+"
    )
    # The limits it was played under (a dispute recomputes it under these, not today's).
    min_stake = models.PositiveIntegerField(default=0, help_text="minor units")
    max_stake = models.PositiveIntegerField(default=0, help_text="minor units")
    opened_at = models.DateTimeField()
    opened_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    phase = models.CharField(max_length=10, choices=CoupPhase.choices, default=CoupPhase.BETTING)

    class Meta:
        app_label = "floor"
        ordering = ["opened_at", "id"]
        verbose_name = "coup"
        constraints = [
            # A séance closes only when no coup is in progress and a table has one séance open,
            # so this is "one coup at a time at a table".
            models.UniqueConstraint(
                fields=["shift"],
                condition=~models.Q(phase__in=["settled", "cancelled"]),
                name="one_coup_in_progress_per_seance",
            ),
            # The replay format names a coup by its pack, taille and number.
            models.UniqueConstraint(
                fields=["pack", "taille", "number"], name="one_coup_number_per_taille"
            ),
        ]
        triggers = [
            pgtrigger.Protect(name="not_deleted", operation=pgtrigger.Delete),
            pgtrigger.ReadOnly(name="only_phase_changes", exclude=["phase"]),
            pgtrigger.FSM(
                name="phase_forward_only",
                field="phase",
                transitions=[(a.value, b.value) for a, b in COUP_TRANSITIONS],
            ),
        ]

    def __str__(self) -> str:
        return f"{self.shift.table} coup {self.number} ({self.pack.seal_number})"


class CoupCancellation(models.Model):
    """The chef de partie's act cancelling a coup that cannot go on: its stakes are returned,
    prisoners stay as they were, and an anomaly is raised for review."""

    coup = models.OneToOneField(Coup, on_delete=models.PROTECT, related_name="cancellation")
    at = models.DateTimeField()
    by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    reason = models.CharField(max_length=300)

    class Meta:
        app_label = "floor"
        triggers = append_only()

    def __str__(self) -> str:
        return f"cancellation of {self.coup}"


class Stake(models.Model):
    """A stake placed on a coup, by a patron or an anonymous seat marker."""

    coup = models.ForeignKey(Coup, on_delete=models.PROTECT, related_name="stakes")
    ref = models.CharField(max_length=60, help_text="the terminal's reference of the stake")
    holder = models.ForeignKey("floor.Account", on_delete=models.PROTECT, related_name="stakes")
    chance = models.CharField(
        max_length=8, choices=[(c, c) for c in ("rouge", "noir", "couleur", "inverse")]
    )
    amount = models.BigIntegerField()
    insured = models.BooleanField(default=False)
    on_refait = models.CharField(max_length=20, blank=True)
    placed_at = models.DateTimeField()
    placed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )

    class Meta:
        app_label = "floor"
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(condition=models.Q(amount__gt=0), name="stake_positive"),
            models.UniqueConstraint(fields=["coup", "ref"], name="one_stake_per_ref"),
        ]
        triggers = append_only()

    def __str__(self) -> str:
        return f"{self.ref}: {self.amount} on {self.chance}"


class StakeWithdrawal(models.Model):
    """A stake taken back before the first card (never after: that is a late stake)."""

    stake = models.OneToOneField(Stake, on_delete=models.PROTECT, related_name="withdrawal")
    at = models.DateTimeField()
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")

    class Meta:
        app_label = "floor"
        triggers = append_only()

    def __str__(self) -> str:
        return f"withdrawal of {self.stake}"


class CoupResult(models.Model):
    """What the engine decided for a coup, written once at settlement."""

    coup = models.OneToOneField(Coup, on_delete=models.PROTECT, related_name="outcome")
    noir_cards = models.JSONField()
    rouge_cards = models.JSONField()
    noir_total = models.PositiveSmallIntegerField()
    rouge_total = models.PositiveSmallIntegerField()
    result = models.CharField(max_length=12)
    couleur = models.CharField(max_length=8, blank=True)
    void = models.BooleanField()
    last = models.BooleanField()
    announcement = models.JSONField()
    spoken = models.CharField(
        max_length=120, blank=True, help_text="the tailleur's announcement, when recorded"
    )
    prison_after = models.JSONField(help_text="the table's prison after this coup")
    settled_at = models.DateTimeField()
    settled_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )

    class Meta:
        app_label = "floor"
        triggers = append_only()

    def __str__(self) -> str:
        return f"{self.coup}: {self.result}"


class Settlement(models.Model):
    """What one coup did to one stake (placed on it, or imprisoned before it)."""

    coup = models.ForeignKey(Coup, on_delete=models.PROTECT, related_name="settlements")
    stake = models.ForeignKey(Stake, on_delete=models.PROTECT, related_name="settlements")
    outcome = models.CharField(max_length=20)
    paid = models.BigIntegerField(default=0)
    returned = models.BigIntegerField(default=0)
    to_bank = models.BigIntegerField(default=0)
    premium = models.BigIntegerField(default=0)
    held = models.BigIntegerField(default=0)
    level = models.PositiveSmallIntegerField(default=0)

    class Meta:
        app_label = "floor"
        ordering = ["coup", "id"]
        constraints = [
            models.UniqueConstraint(fields=["coup", "stake"], name="one_settlement_per_stake"),
        ]
        triggers = append_only()

    def __str__(self) -> str:
        return f"{self.stake}: {self.outcome}"
