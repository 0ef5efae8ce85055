"""Trente-et-Quarante's records at the table: coups, their stakes, results and settlements.

They keep their tables in the floor app (``floor_coup``...: its migrations, ``app_label``) and are
loaded with it (``casino/floor/models.py``); the acts that write them are in ``coups.py``.
"""

from __future__ import annotations

import pgtrigger
from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from audit.append_only import append_only
from casino import shown

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
    BETTING = "betting", _("Faites vos jeux")
    CLOSED = "closed", _("Le jeu est fait")
    DEALING = "dealing", _("Tirage")
    COMPLETE = "complete", _("Rangées complètes")
    SETTLED = "settled", _("Réglé")
    CANCELLED = "cancelled", _("Annulé")


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

    shift = models.ForeignKey(
        "floor.Shift", on_delete=models.PROTECT, related_name="coups", verbose_name=_("séance")
    )
    # Found through `one_coup_number_per_taille`, which begins with it: no index of its own.
    pack = models.ForeignKey(
        "shoes.Pack",
        on_delete=models.PROTECT,
        db_index=False,
        related_name="coups",
        verbose_name=_("jeu de cartes"),
    )
    taille = models.PositiveSmallIntegerField(
        default=1,
        help_text=_("quelle taille du jeu : 1, puis une de plus à chaque nouvelle coupe"),
        verbose_name=_("taille"),
    )
    number = models.PositiveIntegerField(
        help_text=_("dans la taille (le jeu depuis sa coupe)"), verbose_name=_("numéro")
    )
    reglement = models.ForeignKey(
        "floor.PostedReglement",
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("règlement"),
    )
    # The limits it was played under (a dispute recomputes it under these, not today's).
    min_stake = models.PositiveIntegerField(
        default=0, help_text=_("en centimes"), verbose_name=_("mise minimum")
    )
    max_stake = models.PositiveIntegerField(
        default=0, help_text=_("en centimes"), verbose_name=_("mise maximum")
    )
    opened_at = models.DateTimeField(verbose_name=_("ouvert le"))
    opened_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("ouvert par"),
    )
    phase = models.CharField(
        max_length=10, choices=CoupPhase.choices, default=CoupPhase.BETTING, verbose_name=_("phase")
    )

    class Meta:
        app_label = "floor"
        verbose_name_plural = _("coups")
        ordering = ["opened_at", "id"]
        verbose_name = _("coup")
        # The order coups are listed in (the admin's changelist, by date): its first page, a
        # day's range and the date hierarchy's bounds read the index, not a month's coups sorted.
        indexes = [models.Index(fields=["opened_at", "id"], name="coup_opened_at")]
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

    coup = models.OneToOneField(
        Coup, on_delete=models.PROTECT, related_name="cancellation", verbose_name=_("coup")
    )
    at = models.DateTimeField(verbose_name=_("date"))
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("par")
    )
    reason = models.CharField(max_length=300, verbose_name=_("motif"))

    class Meta:
        app_label = "floor"
        verbose_name = _("annulation de coup")
        verbose_name_plural = _("annulations de coups")
        triggers = append_only()

    def __str__(self) -> str:
        return f"cancellation of {self.coup}"


class Stake(models.Model):
    """A stake placed on a coup, by a patron or an anonymous seat marker."""

    # Found through `one_stake_per_ref`, which begins with it: no index of its own.
    coup = models.ForeignKey(
        Coup,
        on_delete=models.PROTECT,
        db_index=False,
        related_name="stakes",
        verbose_name=_("coup"),
    )
    ref = models.CharField(
        max_length=60,
        help_text=_("la référence de la mise au terminal"),
        verbose_name=_("référence"),
    )
    holder = models.ForeignKey(
        "floor.Account",
        on_delete=models.PROTECT,
        related_name="stakes",
        verbose_name=_("joueur ou place"),
    )
    chance = models.CharField(
        max_length=8,
        choices=[(c, c) for c in ("rouge", "noir", "couleur", "inverse")],
        verbose_name=_("chance"),
    )
    amount = models.BigIntegerField(verbose_name=_("montant"))
    insured = models.BooleanField(default=False, verbose_name=_("assurée"))
    on_refait = models.CharField(max_length=20, blank=True, verbose_name=_("au refait"))
    placed_at = models.DateTimeField(verbose_name=_("posée le"))
    placed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("posée par"),
    )

    class Meta:
        app_label = "floor"
        verbose_name = _("mise")
        verbose_name_plural = _("mises")
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(condition=models.Q(amount__gt=0), name="stake_positive"),
            models.UniqueConstraint(fields=["coup", "ref"], name="one_stake_per_ref"),
        ]
        triggers = append_only()

    def __str__(self) -> str:
        return _("%(ref)s : %(amount)s sur %(chance)s") % {
            "ref": self.ref,
            "amount": shown.money(self.amount),
            "chance": self.chance,
        }


class StakeWithdrawal(models.Model):
    """A stake taken back before the first card (never after: that is a late stake)."""

    stake = models.OneToOneField(
        Stake, on_delete=models.PROTECT, related_name="withdrawal", verbose_name=_("mise")
    )
    at = models.DateTimeField(verbose_name=_("date"))
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("par")
    )

    class Meta:
        app_label = "floor"
        verbose_name = _("retrait de mise")
        verbose_name_plural = _("retraits de mises")
        triggers = append_only()

    def __str__(self) -> str:
        return f"withdrawal of {self.stake}"


class CoupResult(models.Model):
    """What the engine decided for a coup, written once at settlement."""

    coup = models.OneToOneField(
        Coup, on_delete=models.PROTECT, related_name="outcome", verbose_name=_("coup")
    )
    noir_cards = models.JSONField(verbose_name=_("cartes de la première rangée"))
    rouge_cards = models.JSONField(verbose_name=_("cartes de la seconde rangée"))
    noir_total = models.PositiveSmallIntegerField(verbose_name=_("point de noir"))
    rouge_total = models.PositiveSmallIntegerField(verbose_name=_("point de rouge"))
    result = models.CharField(max_length=12, verbose_name=_("résultat"))
    couleur = models.CharField(max_length=8, blank=True, verbose_name=_("couleur"))
    void = models.BooleanField(verbose_name=_("nul"))
    last = models.BooleanField(verbose_name=_("dernier de la taille"))
    announcement = models.JSONField(verbose_name=_("annonce"))
    spoken = models.CharField(
        max_length=120,
        blank=True,
        help_text=_("l'annonce du tailleur, quand elle est enregistrée"),
        verbose_name=_("annonce faite"),
    )
    prison_after = models.JSONField(
        help_text=_("la prison de la table après ce coup"), verbose_name=_("prison après le coup")
    )
    settled_at = models.DateTimeField(verbose_name=_("réglé le"))
    settled_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("réglé par"),
    )

    class Meta:
        app_label = "floor"
        verbose_name = _("résultat du coup")
        verbose_name_plural = _("résultats des coups")
        triggers = append_only()

    def __str__(self) -> str:
        return f"{self.coup}: {self.result}"


class Settlement(models.Model):
    """What one coup did to one stake (placed on it, or imprisoned before it)."""

    # Found through `one_settlement_per_stake`, which begins with it: no index of its own.
    coup = models.ForeignKey(
        Coup,
        on_delete=models.PROTECT,
        db_index=False,
        related_name="settlements",
        verbose_name=_("coup"),
    )
    stake = models.ForeignKey(
        Stake, on_delete=models.PROTECT, related_name="settlements", verbose_name=_("mise")
    )
    outcome = models.CharField(max_length=20, verbose_name=_("issue"))
    paid = models.BigIntegerField(default=0, verbose_name=_("payé"))
    returned = models.BigIntegerField(default=0, verbose_name=_("rendu"))
    to_bank = models.BigIntegerField(default=0, verbose_name=_("à la banque"))
    premium = models.BigIntegerField(default=0, verbose_name=_("prime"))
    held = models.BigIntegerField(default=0, verbose_name=_("en prison"))
    level = models.PositiveSmallIntegerField(default=0, verbose_name=_("niveau"))

    class Meta:
        app_label = "floor"
        verbose_name = _("règlement d'une mise")
        verbose_name_plural = _("règlements des mises")
        ordering = ["coup", "id"]
        constraints = [
            models.UniqueConstraint(fields=["coup", "stake"], name="one_settlement_per_stake"),
        ]
        triggers = append_only()

    def __str__(self) -> str:
        return f"{self.stake}: {self.outcome}"
