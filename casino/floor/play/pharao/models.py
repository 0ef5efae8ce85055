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

    shift = models.ForeignKey("floor.Shift", on_delete=models.PROTECT, related_name="tailles")
    pack = models.ForeignKey("shoes.Pack", on_delete=models.PROTECT, related_name="tailles")
    pack_taille = models.PositiveSmallIntegerField(
        help_text="which taille of the pack: one per cut (shoes' CardLaid.taille)"
    )
    number = models.PositiveIntegerField(help_text="within the séance")
    reglement = models.ForeignKey(
        "floor.PostedReglement", on_delete=models.PROTECT, related_name="+"
    )
    min_stake = models.PositiveIntegerField(help_text="minor units")
    max_stake = models.PositiveIntegerField(help_text="minor units")
    bottom_card = models.CharField(max_length=2, help_text="shown before the first draw")
    opened_at = models.DateTimeField()
    opened_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    phase = models.CharField(
        max_length=10, choices=TaillePhase.choices, default=TaillePhase.DEALING
    )

    class Meta:
        app_label = "floor"
        ordering = ["opened_at", "id"]
        verbose_name = _("taille")
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

    taille = models.ForeignKey(Taille, on_delete=models.PROTECT, related_name="stakes")
    ref = models.CharField(max_length=60, help_text="the terminal's reference of the stake")
    holder = models.ForeignKey(
        "floor.Account", on_delete=models.PROTECT, related_name="pharao_stakes"
    )
    rank = models.CharField(max_length=1, choices=RANKS)
    amount = models.BigIntegerField(help_text="the original stake, minor units")
    draw = models.PositiveSmallIntegerField(help_text="it stands from this draw on")
    placed_at = models.DateTimeField()
    placed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
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

    stake = models.ForeignKey(PharaoStake, on_delete=models.PROTECT, related_name="approvals")
    act = models.CharField(max_length=10, choices=[(a, StakeAct(a).label) for a in APPROVED])
    amount = models.BigIntegerField(null=True, blank=True, help_text="what a reduction takes off")
    draw = models.PositiveSmallIntegerField(help_text="the draw it comes before")
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    at = models.DateTimeField()

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

    stake = models.ForeignKey(PharaoStake, on_delete=models.PROTECT, related_name="acts")
    act = models.CharField(max_length=10, choices=StakeAct.choices)
    amount = models.BigIntegerField(null=True, blank=True, help_text="a reduction's or a raise's")
    draw = models.PositiveSmallIntegerField(help_text="the draw it comes before")
    approval = models.OneToOneField(
        PharaoApproval, null=True, blank=True, on_delete=models.PROTECT, related_name="used_by"
    )
    by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    at = models.DateTimeField()
    mark = models.CharField(max_length=12, blank=True)
    put = models.BigIntegerField(default=0)
    returned = models.BigIntegerField(default=0)

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

    taille = models.ForeignKey(Taille, on_delete=models.PROTECT, related_name="draws")
    number = models.PositiveSmallIntegerField()
    bank_card = models.CharField(max_length=2)
    players_card = models.CharField(max_length=2)
    plie = models.BooleanField()
    settled_at = models.DateTimeField()
    settled_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )

    class Meta:
        app_label = "floor"
        ordering = ["taille", "number"]
        verbose_name = _("tirage")
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

    taille = models.ForeignKey(Taille, on_delete=models.PROTECT, related_name="settlements")
    draw = models.ForeignKey(
        PharaoDraw, null=True, blank=True, on_delete=models.PROTECT, related_name="settlements"
    )
    stake = models.ForeignKey(PharaoStake, on_delete=models.PROTECT, related_name="settlements")
    outcome = models.CharField(max_length=10)
    paid = models.BigIntegerField(default=0)
    returned = models.BigIntegerField(default=0)
    to_bank = models.BigIntegerField(default=0)
    mark = models.CharField(max_length=12)

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
