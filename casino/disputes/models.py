"""Disputes (contestations) about recorded play, settled under the posted règlement (RULES.md §4).

The subject is a real record. The dispute's state moves forward only; every step, every piece of
evidence and every decision is a new row, and a decision's corrections are new ledger movements.
"""

from __future__ import annotations

import functools
import operator
from typing import Any

import pgtrigger
from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from audit.append_only import append_only
from casino.floor.models import Coup, Movement, PostedReglement, Shift, Stake
from casino.floor.play.alliance.models import Deal
from casino.floor.play.pharao.models import PharaoDraw, PharaoStake
from shoes.models import CardLaid, Pack


class DisputeState(models.TextChoices):
    OPEN = "open", _("ouverte")
    UNDER_REVIEW = "under_review", _("en examen")
    AWAITING_APPROVAL = "awaiting_approval", _("décision à approuver")
    DECIDED = "decided", _("décidée (chef de partie)")
    APPEALED = "appealed", _("en appel")
    AWAITING_APPROVAL_APPEAL = (
        "awaiting_approval_appeal",
        _("décision d'appel à approuver"),
    )
    DECIDED_BY_COMMISSIONER = "decided_by_commissioner", _("décidée par le commissaire")
    WITHDRAWN = "withdrawn", _("retirée")


# Every allowed move, each a recorded step. A decision whose corrections need a second approver
# waits for them; a refusal of approval sends the dispute back to be decided again.
TRANSITIONS = [
    (DisputeState.OPEN, DisputeState.UNDER_REVIEW),
    (DisputeState.UNDER_REVIEW, DisputeState.DECIDED),
    (DisputeState.UNDER_REVIEW, DisputeState.AWAITING_APPROVAL),
    (DisputeState.AWAITING_APPROVAL, DisputeState.DECIDED),
    (DisputeState.AWAITING_APPROVAL, DisputeState.UNDER_REVIEW),
    (DisputeState.DECIDED, DisputeState.APPEALED),
    (DisputeState.APPEALED, DisputeState.DECIDED_BY_COMMISSIONER),
    (DisputeState.APPEALED, DisputeState.AWAITING_APPROVAL_APPEAL),
    (DisputeState.AWAITING_APPROVAL_APPEAL, DisputeState.DECIDED_BY_COMMISSIONER),
    (DisputeState.AWAITING_APPROVAL_APPEAL, DisputeState.APPEALED),
    (DisputeState.OPEN, DisputeState.WITHDRAWN),
    (DisputeState.UNDER_REVIEW, DisputeState.WITHDRAWN),
]

# One field per subject (the database checks that a dispute has exactly one). A game's subjects
# are answered for by its game (``games.py``), the others by the disputes themselves.
SUBJECTS = ("coup", "stake", "movement", "pack", "card", "pharao_stake", "pharao_draw", "deal")
SUBJECT_WORDS = {
    "coup": _("coup"),
    "stake": _("mise"),
    "movement": _("mouvement"),
    "pack": _("jeu de cartes"),
    "card": _("carte"),
    "pharao_stake": _("mise au pharaon"),
    "pharao_draw": _("tirage au pharaon"),
    "deal": _("donne d'Alliance"),
}


def _exactly_one_subject() -> models.Q:
    """The dispute is about one real record."""
    return functools.reduce(
        operator.or_,
        (models.Q(**{f"{o}__isnull": o != name for o in SUBJECTS}) for name in SUBJECTS),
    )


class Dispute(models.Model):
    """A contestation: who raised it (for whom), about which record, the claim."""

    raised_at = models.DateTimeField(db_index=True, verbose_name=_("soulevée le"))
    raised_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("soulevée par"),
    )
    on_behalf_of = models.CharField(
        max_length=120,
        blank=True,
        help_text=_("le joueur ou la place ; vide quand le personnel la soulève"),
        verbose_name=_("pour"),
    )
    coup = models.ForeignKey(
        Coup, null=True, blank=True, on_delete=models.PROTECT, verbose_name=_("coup")
    )
    stake = models.ForeignKey(
        Stake, null=True, blank=True, on_delete=models.PROTECT, verbose_name=_("mise")
    )
    movement = models.ForeignKey(
        Movement, null=True, blank=True, on_delete=models.PROTECT, verbose_name=_("mouvement")
    )
    pack = models.ForeignKey(
        Pack, null=True, blank=True, on_delete=models.PROTECT, verbose_name=_("jeu de cartes")
    )
    card = models.ForeignKey(
        CardLaid, null=True, blank=True, on_delete=models.PROTECT, verbose_name=_("carte")
    )
    pharao_stake = models.ForeignKey(
        PharaoStake,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("mise au pharaon"),
    )
    pharao_draw = models.ForeignKey(
        PharaoDraw,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("tirage au pharaon"),
    )
    deal = models.ForeignKey(
        Deal,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("donne d'Alliance"),
    )
    reglement = models.ForeignKey(
        PostedReglement,
        on_delete=models.PROTECT,
        related_name="+",
        help_text=_("la version en vigueur quand le coup contesté a été joué"),
        verbose_name=_("règlement"),
    )
    claim = models.TextField(verbose_name=_("réclamation"))
    statement = models.TextField(
        blank=True, help_text=_("ce que le joueur déclare"), verbose_name=_("déclaration du joueur")
    )
    state = models.CharField(
        max_length=30,
        choices=DisputeState.choices,
        default=DisputeState.OPEN,
        db_index=True,
        verbose_name=_("état"),
    )

    class Meta:
        verbose_name_plural = _("contestations")
        ordering = ["raised_at", "id"]
        verbose_name = _("contestation")
        constraints = [
            models.CheckConstraint(condition=_exactly_one_subject(), name="dispute_one_subject"),
            models.CheckConstraint(condition=~models.Q(claim=""), name="dispute_claim_required"),
        ]
        triggers = [
            pgtrigger.Protect(name="not_deleted", operation=pgtrigger.Delete),
            pgtrigger.ReadOnly(name="only_state_changes", exclude=["state"]),
            pgtrigger.FSM(
                name="state_forward_only",
                field="state",
                transitions=[(a.value, b.value) for a, b in TRANSITIONS],
            ),
            # Out of approval only through the second approver's recorded act: approved to be
            # decided, refused to go back (not a service with a bug, not raw SQL).
            pgtrigger.Trigger(
                name="approval_recorded",
                when=pgtrigger.Before,
                operation=pgtrigger.Update,
                condition=pgtrigger.Condition(
                    "OLD.state IN ('awaiting_approval', 'awaiting_approval_appeal') "
                    "AND NEW.state IS DISTINCT FROM OLD.state"
                ),
                func="""
                IF NOT EXISTS (
                    SELECT 1 FROM disputes_decisionapproval a
                    JOIN disputes_decision d ON d.id = a.decision_id
                    WHERE d.id = (SELECT max(id) FROM disputes_decision WHERE dispute_id = NEW.id)
                      AND a.approved = (NEW.state IN ('decided', 'decided_by_commissioner'))
                ) THEN
                    RAISE EXCEPTION 'dispute %: no approval recorded for its last decision', NEW.id;
                END IF;
                RETURN NEW;
                """,
            ),
        ]

    def __str__(self) -> str:
        return _("contestation %(number)s (%(subject)s)") % {
            "number": self.pk,
            "subject": self.subject_label(),
        }

    @property
    def reference(self) -> str:
        """What the movements this dispute ordered carry as their reference."""
        return f"dispute:{self.pk}"

    def subject_name(self) -> str:
        return next(name for name in SUBJECTS if getattr(self, f"{name}_id") is not None)

    def subject(self) -> models.Model:
        record: models.Model = getattr(self, self.subject_name())
        return record

    def subject_label(self) -> str:
        return f"{SUBJECT_WORDS[self.subject_name()]} {self.subject()}"

    def seance(self) -> Shift | None:
        """The séance whose play is contested (for a pack, the last one that played it)."""
        from casino.disputes.games import game_disputes

        kind, record = self.subject_name(), self.subject()
        game = game_disputes(kind)
        if game is not None:
            return game.seance(kind, record)  # type: ignore[no-any-return]
        if kind == "coup":
            return record.shift  # type: ignore[attr-defined,no-any-return]
        if kind == "stake":
            return record.coup.shift  # type: ignore[attr-defined,no-any-return]
        if kind == "pack":
            last = record.coups.order_by("-id").select_related("shift").first()  # type: ignore[attr-defined]
            return last.shift if last else None
        if kind == "movement" and record.shift_id is None and record.reference.startswith("coup:"):  # type: ignore[attr-defined]
            coup = Coup.objects.get(pk=int(record.reference.split(":")[1]))  # type: ignore[attr-defined]
            return coup.shift
        return record.shift  # type: ignore[attr-defined,no-any-return]


class DisputeStep(models.Model):
    """One move of the dispute's state, with who made it and why."""

    dispute = models.ForeignKey(
        Dispute, on_delete=models.PROTECT, related_name="steps", verbose_name=_("contestation")
    )
    at = models.DateTimeField(verbose_name=_("date"))
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("par")
    )
    from_state = models.CharField(max_length=30, choices=DisputeState.choices, verbose_name=_("de"))
    to_state = models.CharField(max_length=30, choices=DisputeState.choices, verbose_name=_("à"))
    note = models.TextField(verbose_name=_("note"))

    class Meta:
        verbose_name = _("étape")
        verbose_name_plural = _("étapes")
        ordering = ["at", "id"]
        triggers = append_only()
        constraints = [models.CheckConstraint(condition=~models.Q(note=""), name="step_note")]

    def __str__(self) -> str:
        return f"{self.get_from_state_display()} → {self.get_to_state_display()}"


class Evidence(models.Model):
    """A photo or a scan attached to a dispute: stored, its SHA-256 in the audit chain."""

    dispute = models.ForeignKey(
        Dispute, on_delete=models.PROTECT, related_name="evidence", verbose_name=_("contestation")
    )
    file = models.FileField(upload_to="disputes/%Y/%m/", verbose_name=_("fichier"))
    name = models.CharField(max_length=200, verbose_name=_("nom"))
    content_type = models.CharField(max_length=100, verbose_name=_("type"))
    size = models.BigIntegerField(verbose_name=_("taille (octets)"))
    sha256 = models.CharField(max_length=64, verbose_name=_("SHA-256"))
    added_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("ajoutée par"),
    )
    added_at = models.DateTimeField(verbose_name=_("ajoutée le"))

    class Meta:
        verbose_name = _("pièce")
        ordering = ["added_at", "id"]
        verbose_name_plural = _("pièces")
        triggers = append_only()

    def __str__(self) -> str:
        return f"{self.name} ({self.sha256[:12]}…)"


class Decision(models.Model):
    """A ruling: the articles applied (of the dispute's règlement version), the reasoning, the
    engine's computation, and the corrective movements it ordered (referencing it)."""

    class Instance(models.TextChoices):
        FIRST = "first", _("première instance (chef de partie)")
        APPEAL = "appeal", _("appel (commissaire de police)")

    # Found through `one_decision_per_attempt`, which begins with it: no index of its own.
    dispute = models.ForeignKey(
        Dispute,
        on_delete=models.PROTECT,
        db_index=False,
        related_name="decisions",
        verbose_name=_("contestation"),
    )
    instance = models.CharField(max_length=10, choices=Instance.choices, verbose_name=_("instance"))
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("décidée par"),
    )
    decided_at = models.DateTimeField(verbose_name=_("décidée le"))
    articles = models.JSONField(
        help_text=_("les numéros des articles appliqués"), verbose_name=_("articles")
    )
    reasoning = models.TextField(verbose_name=_("motifs"))
    findings = models.JSONField(
        default=list,
        blank=True,
        help_text=_("les mises telles que constatées, chacune par sa référence"),
        verbose_name=_("faits constatés"),
    )
    computed = models.JSONField(
        help_text=_("le règlement selon le moteur, à côté de celui enregistré"),
        verbose_name=_("calcul"),
    )
    corrections = models.JSONField(
        help_text=_(
            "les corrections que cette décision ordonne en tout : compte de départ, compte d'arrivée, montant"
        ),
        verbose_name=_("corrections"),
    )
    override_reason = models.TextField(
        blank=True,
        help_text=_("pourquoi les corrections s'écartent du calcul du moteur"),
        verbose_name=_("motif de l'écart"),
    )
    attempt = models.PositiveSmallIntegerField(
        default=1,
        help_text=_(
            "une décision dont l'approbation est refusée est suivie d'une autre, à l'essai suivant"
        ),
        verbose_name=_("essai"),
    )
    approval_grounds = models.TextField(
        blank=True,
        help_text=_(
            "pourquoi ses corrections attendent un second approbateur (vide : passées dès la décision)"
        ),
        verbose_name=_("raisons de la seconde approbation"),
    )

    class Meta:
        verbose_name = _("décision")
        verbose_name_plural = _("décisions")
        ordering = ["decided_at", "id"]
        triggers = append_only()
        constraints = [
            models.UniqueConstraint(
                fields=["dispute", "instance", "attempt"], name="one_decision_per_attempt"
            ),
            models.CheckConstraint(condition=~models.Q(reasoning=""), name="decision_reasoning"),
        ]

    def __str__(self) -> str:
        return f"{self.get_instance_display()} — {self.dispute}"

    @property
    def key_prefix(self) -> str:
        """How the idempotency keys of the movements this decision posted begin."""
        return f"{self.dispute.reference}:decision:{self.pk}:"

    def movements(self) -> models.QuerySet[Movement]:
        """The corrections this decision posted (none while it awaits approval or if refused)."""
        return (
            Movement.objects.filter(
                reference=f"dispute:{self.dispute_id}", idempotency_key__startswith=self.key_prefix
            )
            .select_related("credit", "debit", "actor")
            .order_by("id")
        )


class DecisionApproval(models.Model):
    """The second approver's act on a decision whose corrections wait for one: the director or
    the commissioner, neither the decider, nor the raiser, nor anyone who recorded the contested
    acts. Until approved nothing moves; a refusal sends the dispute back to be decided again."""

    decision = models.OneToOneField(
        Decision, on_delete=models.PROTECT, related_name="approval", verbose_name=_("décision")
    )
    approved = models.BooleanField(verbose_name=_("approuvée"))
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("par")
    )
    at = models.DateTimeField(verbose_name=_("date"))
    note = models.TextField(verbose_name=_("note"))

    class Meta:
        verbose_name_plural = _("approbations")
        ordering = ["at", "id"]
        verbose_name = _("approbation")
        triggers = append_only()
        constraints = [models.CheckConstraint(condition=~models.Q(note=""), name="approval_note")]

    def __str__(self) -> str:
        if self.approved:
            return _("approuvée par %(person)s") % {"person": self.by}
        return _("refusée par %(person)s") % {"person": self.by}


def about_seances(shift_ids: list[int]) -> models.QuerySet[Dispute]:
    """Disputes about the play of these séances: their coups, stakes, cards or movements, and
    each game's rounds (``games.py``)."""
    from casino.disputes.games import every_game

    return Dispute.objects.filter(
        functools.reduce(
            operator.or_,
            (game.about_seances(shift_ids) for game in every_game()),
            models.Q(coup__shift__in=shift_ids)
            | models.Q(stake__coup__shift__in=shift_ids)
            | models.Q(card__shift__in=shift_ids)
            | models.Q(movement__shift__in=shift_ids),
        )
    )


def corrections_posted(start: Any, end: Any) -> list[tuple[Decision, list[Movement]]]:
    """The decisions whose corrections were posted in [start, end), with those movements."""
    moves = (
        Movement.objects.filter(kind=Movement.Kind.DISPUTE_CORRECTION, at__gte=start, at__lt=end)
        .select_related("credit", "debit")
        .order_by("id")
    )
    by_decision: dict[int, list[Movement]] = {}
    for m in moves:
        if ":decision:" in m.idempotency_key:
            pk = int(m.idempotency_key.split(":decision:")[1].split(":")[0])
            by_decision.setdefault(pk, []).append(m)
    decisions = Decision.objects.filter(pk__in=by_decision).select_related(
        "dispute", "decided_by", "approval__by"
    )
    return [(d, by_decision[d.pk]) for d in sorted(decisions, key=lambda d: d.pk)]


def about_coup(coup: Coup) -> models.QuerySet[Dispute]:
    """Disputes about this coup, its stakes, its cards or its movements."""
    return Dispute.objects.filter(
        models.Q(coup=coup)
        | models.Q(stake__coup=coup)
        | models.Q(card__coup=coup)
        | models.Q(movement__reference__startswith=f"coup:{coup.pk}:")
    )
