"""Pharao's records at the table (RULES.md §2): tailles, stakes on ranks, the acts on them between
draws and the banker's approvals, each draw with what it settled.

They keep their tables in the floor app (its migrations, ``app_label``) and are loaded with it
(``casino/floor/models.py``); the acts that write them are in ``tailles.py``. Everything is history
and append-only, the taille's phase apart (it moves forward only). What stands on the layout is not
stored: the engine reads it from these records (``tailles.deal_of``).
"""

from __future__ import annotations

import pgtrigger
from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from audit.append_only import append_only
from casino.games.cards import Rank
from casino.games.pharao import DRAWS

RANKS = [(r.value, r.value) for r in Rank]


class TaillePhase(models.TextChoices):
    DEALING = "dealing", _("Tirages en cours")
    ENDED = "ended", _("Finie")


class Taille(models.Model):
    """One taille at a Pharao table: a single pack shuffled and cut, its bottom card shown and
    recorded, then 26 draws; under the règlement version and limits of its séance."""

    # Found through `one_taille_number`, which begins with it: no index of its own.
    shift = models.ForeignKey(
        "floor.Shift",
        on_delete=models.PROTECT,
        db_index=False,
        related_name="tailles",
        verbose_name=_("séance"),
    )
    # Found through `one_taille_per_cut`, which begins with it: no index of its own.
    pack = models.ForeignKey(
        "shoes.Pack",
        on_delete=models.PROTECT,
        db_index=False,
        related_name="tailles",
        verbose_name=_("jeu de cartes"),
    )
    pack_taille = models.PositiveSmallIntegerField(
        help_text=_("quelle taille du jeu : une par coupe"), verbose_name=_("taille du jeu")
    )
    number = models.PositiveIntegerField(help_text=_("dans la séance"), verbose_name=_("numéro"))
    reglement = models.ForeignKey(
        "floor.PostedReglement",
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("règlement"),
    )
    min_stake = models.PositiveIntegerField(
        help_text=_("en centimes"), verbose_name=_("mise minimum")
    )
    max_stake = models.PositiveIntegerField(
        help_text=_("en centimes"), verbose_name=_("mise maximum")
    )
    bottom_card = models.CharField(
        max_length=2,
        help_text=_("montrée avant le premier tirage"),
        verbose_name=_("carte du dessous"),
    )
    opened_at = models.DateTimeField(verbose_name=_("ouverte le"))
    opened_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("ouverte par"),
    )
    phase = models.CharField(
        max_length=10,
        choices=TaillePhase.choices,
        default=TaillePhase.DEALING,
        verbose_name=_("phase"),
    )

    class Meta:
        app_label = "floor"
        ordering = ["opened_at", "id"]
        verbose_name = _("taille")
        verbose_name_plural = _("tailles")
        constraints = [
            # A séance closes only when no taille is in progress and a table has one séance open,
            # so this is "one taille at a time at a table".
            models.UniqueConstraint(
                fields=["shift"],
                condition=models.Q(phase="dealing"),
                name="one_taille_in_progress_per_seance",
            ),
            models.UniqueConstraint(fields=["shift", "number"], name="one_taille_number"),
            # One cut, one taille: the pack is shuffled and cut again before the next.
            models.UniqueConstraint(fields=["pack", "pack_taille"], name="one_taille_per_cut"),
        ]
        triggers = [
            pgtrigger.Protect(name="not_deleted", operation=pgtrigger.Delete),
            pgtrigger.ReadOnly(name="only_phase_changes", exclude=["phase"]),
            pgtrigger.FSM(
                name="phase_forward_only",
                field="phase",
                transitions=[(TaillePhase.DEALING.value, TaillePhase.ENDED.value)],
            ),
        ]

    def __str__(self) -> str:
        return f"{self.shift.table} taille {self.number} ({self.pack.seal_number})"


class PharaoStake(models.Model):
    """A stake on a rank, placed by a croupier for a patron or a seat before draw ``draw``."""

    # Found through `one_pharao_stake_per_ref`, which begins with it: no index of its own.
    taille = models.ForeignKey(
        Taille,
        on_delete=models.PROTECT,
        db_index=False,
        related_name="stakes",
        verbose_name=_("taille"),
    )
    ref = models.CharField(
        max_length=60,
        help_text=_("la référence de la mise au terminal"),
        verbose_name=_("référence"),
    )
    holder = models.ForeignKey(
        "floor.Account",
        on_delete=models.PROTECT,
        related_name="pharao_stakes",
        verbose_name=_("joueur ou place"),
    )
    rank = models.CharField(max_length=1, choices=RANKS, verbose_name=_("rang"))
    amount = models.BigIntegerField(
        help_text=_("la mise d'origine, en centimes"), verbose_name=_("montant")
    )
    draw = models.PositiveSmallIntegerField(
        help_text=_("elle tient à partir de ce tirage"), verbose_name=_("tirage")
    )
    placed_at = models.DateTimeField(verbose_name=_("posée le"))
    placed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("posée par"),
    )

    class Meta:
        app_label = "floor"
        ordering = ["id"]
        verbose_name = _("mise au pharaon")
        verbose_name_plural = _("mises au pharaon")
        constraints = [
            models.CheckConstraint(condition=models.Q(amount__gt=0), name="pharao_stake_positive"),
            models.CheckConstraint(
                condition=models.Q(draw__gte=1, draw__lte=DRAWS), name="pharao_stake_draw_1_26"
            ),
            models.UniqueConstraint(fields=["taille", "ref"], name="one_pharao_stake_per_ref"),
        ]
        triggers = append_only()

    def __str__(self) -> str:
        return f"{self.ref}: {self.amount} on {self.rank}"


class StakeAct(models.TextChoices):
    PAROLI = "paroli", _("Paroli")
    APPE = "appe", _("Appe")
    COLLECT = "collect", _("Gain retiré")
    WITHDRAW = "withdraw", _("Mise retirée")
    REDUCE = "reduce", _("Mise réduite")
    RAISE = "raise", _("Mise augmentée")


APPROVED = ("withdraw", "reduce")  # what needs the banker's approval (RULES.md §2)
WITH_AMOUNT = ("reduce", "raise")


class PharaoApproval(models.Model):
    """The chef de partie's approval, in his own act, of a reduction or a withdrawal of a stake he
    did not record: it holds for that stake until draw ``draw`` begins, for one act."""

    stake = models.ForeignKey(
        PharaoStake, on_delete=models.PROTECT, related_name="approvals", verbose_name=_("mise")
    )
    act = models.CharField(
        max_length=10,
        choices=[(a, StakeAct(a).label) for a in APPROVED],
        verbose_name=_("acte"),
    )
    amount = models.BigIntegerField(
        null=True,
        blank=True,
        help_text=_("ce qu'une réduction retire"),
        verbose_name=_("montant"),
    )
    draw = models.PositiveSmallIntegerField(
        help_text=_("le tirage qu'elle précède"), verbose_name=_("tirage")
    )
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("approuvée par"),
    )
    at = models.DateTimeField(verbose_name=_("date"))

    class Meta:
        app_label = "floor"
        ordering = ["id"]
        verbose_name = _("approbation du banquier")
        verbose_name_plural = _("approbations du banquier")
        constraints = [
            models.CheckConstraint(
                condition=models.Q(act__exact="reduce", amount__gt=0)
                | models.Q(act__exact="withdraw", amount__isnull=True),
                name="pharao_approval_amount_for_a_reduction",
            ),
        ]
        triggers = [
            *append_only(),
            # Four eyes, in the database too: whoever recorded the stake never approves its
            # reduction or withdrawal.
            pgtrigger.Trigger(
                name="approver_did_not_record_the_stake",
                when=pgtrigger.Before,
                operation=pgtrigger.Insert,
                func="""
                IF EXISTS (SELECT 1 FROM floor_pharaostake s
                           WHERE s.id = NEW.stake_id AND s.placed_by_id = NEW.approved_by_id) THEN
                    RAISE EXCEPTION 'stake %: whoever recorded it does not approve it',
                        NEW.stake_id USING ERRCODE = 'check_violation';
                END IF;
                RETURN NEW;
                """,
            ),
        ]

    def __str__(self) -> str:
        return f"{self.act} of {self.stake} approved by {self.approved_by}"


class PharaoStakeAct(models.Model):
    """An act on a standing stake between draws, before draw ``draw``: a mark, a collect, a raise,
    or an approved reduction or withdrawal. ``put`` is what it put on the card (a raise, the
    winnings a mark lets ride), ``returned`` what it gave back; ``mark`` the stake's mark after it
    (the one it had, when the act ended it)."""

    stake = models.ForeignKey(
        PharaoStake, on_delete=models.PROTECT, related_name="acts", verbose_name=_("mise")
    )
    act = models.CharField(max_length=10, choices=StakeAct.choices, verbose_name=_("acte"))
    amount = models.BigIntegerField(
        null=True,
        blank=True,
        help_text=_("d'une réduction ou d'une augmentation"),
        verbose_name=_("montant"),
    )
    draw = models.PositiveSmallIntegerField(
        help_text=_("le tirage qu'il précède"), verbose_name=_("tirage")
    )
    approval = models.OneToOneField(
        PharaoApproval,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="used_by",
        verbose_name=_("approbation"),
    )
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("par")
    )
    at = models.DateTimeField(verbose_name=_("date"))
    mark = models.CharField(max_length=12, blank=True, verbose_name=_("marque"))
    put = models.BigIntegerField(default=0, verbose_name=_("mis sur la carte"))
    returned = models.BigIntegerField(default=0, verbose_name=_("rendu"))

    class Meta:
        app_label = "floor"
        ordering = ["id"]
        verbose_name = _("acte sur une mise au pharaon")
        verbose_name_plural = _("actes sur les mises au pharaon")
        constraints = [
            models.CheckConstraint(
                condition=models.Q(act__in=APPROVED, approval__isnull=False)
                | (~models.Q(act__in=APPROVED) & models.Q(approval__isnull=True)),
                name="pharao_approval_where_needed",
            ),
            models.CheckConstraint(
                condition=models.Q(act__in=WITH_AMOUNT, amount__gt=0)
                | (~models.Q(act__in=WITH_AMOUNT) & models.Q(amount__isnull=True)),
                name="pharao_amount_with_reduce_and_raise",
            ),
            models.CheckConstraint(
                condition=models.Q(put__gte=0, returned__gte=0), name="pharao_act_money_positive"
            ),
        ]
        triggers = [
            *append_only(),
            # The approval is the chef de partie's act, never the one who carries it out.
            pgtrigger.Trigger(
                name="approval_by_another",
                when=pgtrigger.Before,
                operation=pgtrigger.Insert,
                condition=pgtrigger.Q(new__approval__isnull=False),
                func="""
                IF EXISTS (SELECT 1 FROM floor_pharaoapproval a
                           WHERE a.id = NEW.approval_id
                             AND (a.approved_by_id = NEW.by_id OR a.stake_id <> NEW.stake_id
                                  OR a.act <> NEW.act)) THEN
                    RAISE EXCEPTION 'approval %: for another act, or approved by who acts',
                        NEW.approval_id USING ERRCODE = 'check_violation';
                END IF;
                RETURN NEW;
                """,
            ),
        ]

    def __str__(self) -> str:
        return f"{self.act} on {self.stake} before draw {self.draw}"


class PharaoDraw(models.Model):
    """One draw (Abzug) as dealt: the bank's card left, the players' card right, and whether it
    was a plié; settled by the engine when its second card was laid."""

    # Found through `one_draw_per_number`, which begins with it: no index of its own.
    taille = models.ForeignKey(
        Taille,
        on_delete=models.PROTECT,
        db_index=False,
        related_name="draws",
        verbose_name=_("taille"),
    )
    number = models.PositiveSmallIntegerField(verbose_name=_("numéro"))
    bank_card = models.CharField(max_length=2, verbose_name=_("carte de la banque (gauche)"))
    players_card = models.CharField(max_length=2, verbose_name=_("carte des joueurs (droite)"))
    plie = models.BooleanField(verbose_name=_("plié"))
    settled_at = models.DateTimeField(verbose_name=_("réglé le"))
    settled_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("réglé par"),
    )

    class Meta:
        app_label = "floor"
        ordering = ["taille", "number"]
        verbose_name = _("tirage")
        verbose_name_plural = _("tirages")
        constraints = [
            models.UniqueConstraint(fields=["taille", "number"], name="one_draw_per_number"),
            models.CheckConstraint(
                condition=models.Q(number__gte=1, number__lte=DRAWS), name="draw_number_1_26"
            ),
        ]
        triggers = append_only()

    def __str__(self) -> str:
        return f"draw {self.number}: {self.bank_card} | {self.players_card}"


class PharaoSettlement(models.Model):
    """What a draw did to one stake (won, lost, plié, dead), or, with no draw, its return when the
    taille ended; ``mark`` is the stake's mark when settled."""

    taille = models.ForeignKey(
        Taille, on_delete=models.PROTECT, related_name="settlements", verbose_name=_("taille")
    )
    # Found through `one_pharao_settlement_per_draw`, which begins with it: no index of its own.
    draw = models.ForeignKey(
        PharaoDraw,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        db_index=False,
        related_name="settlements",
        verbose_name=_("tirage"),
    )
    stake = models.ForeignKey(
        PharaoStake, on_delete=models.PROTECT, related_name="settlements", verbose_name=_("mise")
    )
    outcome = models.CharField(max_length=10, verbose_name=_("issue"))
    paid = models.BigIntegerField(default=0, verbose_name=_("payé"))
    returned = models.BigIntegerField(default=0, verbose_name=_("rendu"))
    to_bank = models.BigIntegerField(default=0, verbose_name=_("à la banque"))
    mark = models.CharField(max_length=12, verbose_name=_("marque"))

    class Meta:
        app_label = "floor"
        ordering = ["id"]
        verbose_name = _("règlement d'une mise au pharaon")
        verbose_name_plural = _("règlements des mises au pharaon")
        constraints = [
            models.UniqueConstraint(
                fields=["draw", "stake"], name="one_pharao_settlement_per_draw"
            ),
            models.UniqueConstraint(
                fields=["stake"],
                condition=models.Q(draw__isnull=True),
                name="one_return_per_pharao_stake",
            ),
            models.CheckConstraint(
                condition=models.Q(paid__gte=0, returned__gte=0, to_bank__gte=0),
                name="pharao_settlement_money_positive",
            ),
        ]
        triggers = append_only()

    def __str__(self) -> str:
        return f"{self.stake}: {self.outcome}"
