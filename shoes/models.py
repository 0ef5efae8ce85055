"""Sealed card packs and their custody, from receipt to destruction (RULES.md 1.1, §2).

A pack's state moves forward only, and PostgreSQL enforces it (django-pgtrigger FSM); everything
that happened to a pack is an append-only row: the seal verifications, the timeline of acts, each
card laid, the reconciliation at retirement.
"""

from __future__ import annotations

import pgtrigger
from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from audit.append_only import append_only
from casino import shown


class PackKind(models.TextChoices):
    SIXAIN = "sixain", _("sixain (6 × 52)")
    SINGLE = "single", _("jeu simple (52)")


class PackState(models.TextChoices):
    RECEIVED = "received", _("reçu")
    IN_STORE = "in_store", _("en magasin")
    VERIFIED = "verified", _("scellé vérifié")
    OPENED = "opened", _("ouvert")
    IN_PLAY = "in_play", _("en jeu")
    PASSED = "passed", _("les cartes passent")
    RETIRED = "retired", _("retiré")
    DESTROYED = "destroyed", _("détruit")
    REJECTED = "rejected", _("rejeté (scellé)")
    WITHDRAWN = "withdrawn", _("remplacé")


S = PackState
TRANSITIONS = (
    (S.RECEIVED, S.IN_STORE),
    (S.RECEIVED, S.REJECTED),
    (S.IN_STORE, S.VERIFIED),
    (S.IN_STORE, S.REJECTED),
    (S.VERIFIED, S.OPENED),
    (S.OPENED, S.IN_PLAY),
    (S.IN_PLAY, S.PASSED),
    (S.PASSED, S.IN_PLAY),  # shuffled and cut again
    (S.PASSED, S.WITHDRAWN),  # a new sealed pack was demanded
    (S.IN_PLAY, S.RETIRED),
    (S.PASSED, S.RETIRED),
    (S.WITHDRAWN, S.RETIRED),
    (S.RETIRED, S.DESTROYED),
    (S.REJECTED, S.DESTROYED),
)


class Pack(models.Model):
    """A sealed pack as the maker delivered it. Only its state changes, and only forward."""

    kind = models.CharField(max_length=10, choices=PackKind.choices, verbose_name=_("sorte"))
    maker = models.CharField(_("fabricant"), max_length=120)
    maker_pack_numbers = models.CharField(_("numéros du fabricant"), max_length=200)
    seal_number = models.CharField(_("n° de scellé"), max_length=60, unique=True)
    sealing_authority = models.CharField(_("autorité de scellement"), max_length=120)
    received_at = models.DateTimeField(verbose_name=_("reçu le"))
    received_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("reçu par"),
    )
    store_location = models.CharField(_("emplacement"), max_length=120)
    state = models.CharField(
        max_length=12,
        choices=PackState.choices,
        default=S.RECEIVED,
        db_index=True,
        verbose_name=_("état"),
    )

    class Meta:
        ordering = ["-received_at"]
        verbose_name = _("jeu scellé")
        verbose_name_plural = _("registre des jeux")
        triggers = [
            pgtrigger.Protect(name="not_deleted", operation=pgtrigger.Delete),
            pgtrigger.ReadOnly(name="only_state_changes", exclude=["state"]),
            pgtrigger.FSM(
                name="state_forward_only",
                field="state",
                transitions=[(a.value, b.value) for a, b in TRANSITIONS],
            ),
            # Nobody verifies or opens a pack whose seal a commissioner has not found intact: not
            # a service with a bug, not a superuser with psql (short of disabling triggers).
            pgtrigger.Trigger(
                name="verified_only_after_intact_seal",
                when=pgtrigger.Before,
                operation=pgtrigger.Update,
                condition=pgtrigger.Condition("NEW.state IN ('verified', 'opened')"),
                func="""
                IF NOT EXISTS (SELECT 1 FROM shoes_sealverification v
                               WHERE v.pack_id = NEW.id AND v.verdict = 'intact') THEN
                    RAISE EXCEPTION 'pack % cannot be verified or opened: no intact seal verification',
                        NEW.id;
                END IF;
                RETURN NEW;
                """,
            ),
        ]

    def __str__(self) -> str:
        return _("%(kind)s scellé %(seal)s") % {
            "kind": self.get_kind_display(),
            "seal": self.seal_number,
        }


class SealVerification(models.Model):
    """The commissioner's act: the seal number read and what he found."""

    class Verdict(models.TextChoices):
        INTACT = "intact", _("intact")
        BROKEN = "broken", _("brisé")
        MISMATCH = "mismatch", _("numéro différent")

    pack = models.ForeignKey(
        Pack,
        on_delete=models.PROTECT,
        related_name="verifications",
        verbose_name=_("jeu de cartes"),
    )
    commissaire = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("commissaire"),
    )
    at = models.DateTimeField(verbose_name=_("date"))
    seal_number_read = models.CharField(max_length=60, verbose_name=_("n° de scellé lu"))
    verdict = models.CharField(max_length=10, choices=Verdict.choices, verbose_name=_("constat"))
    remarks = models.TextField(blank=True, verbose_name=_("observations"))

    class Meta:
        verbose_name_plural = _("vérifications du scellé")
        ordering = ["at"]
        verbose_name = _("vérification du scellé")
        triggers = append_only()

    def __str__(self) -> str:
        return f"{self.pack.seal_number} : {self.get_verdict_display()}"


class RegisterVisa(models.Model):
    """The commissioner's visa on the receipt register's page of the day."""

    day = models.DateField(unique=True, verbose_name=_("journée"))
    commissaire = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("commissaire"),
    )
    at = models.DateTimeField(verbose_name=_("visé le"))
    packs_seen = models.PositiveIntegerField(verbose_name=_("jeux vus"))
    remarks = models.TextField(blank=True, verbose_name=_("observations"))

    class Meta:
        verbose_name_plural = _("visas du registre des jeux")
        ordering = ["-day"]
        verbose_name = _("visa du registre des jeux")
        triggers = append_only()

    def __str__(self) -> str:
        return _("visa du %(day)s") % {"day": shown.day(self.day)}


class PackEvent(models.Model):
    """One act in a pack's life: the timeline shown in the admin and printed in reports."""

    class Kind(models.TextChoices):
        RECEIVED = "received", _("reçu")
        STORED = "stored", _("mis en magasin")
        VERIFIED = "verified", _("scellé vérifié")
        REJECTED = "rejected", _("rejeté")
        OPENED = "opened", _("ouvert")
        SHUFFLED = "shuffled", _("mêlé")
        CUT = "cut", _("coupé")
        BURNED = "burned", _("cartes brûlées")
        PASSED = "passed", _("les cartes passent")
        TALON_COUNTED = "talon_counted", _("talon compté")
        REPLACEMENT_DEMANDED = "replacement_demanded", _("nouveau jeu demandé")
        WITHDRAWN = "withdrawn", _("remplacé")
        FOREIGN_CARD = "foreign_card", _("carte étrangère refusée")
        RETIRED = "retired", _("retiré et recompté")
        DESTROYED = "destroyed", _("détruit")

    pack = models.ForeignKey(
        Pack, on_delete=models.PROTECT, related_name="events", verbose_name=_("jeu de cartes")
    )
    at = models.DateTimeField(verbose_name=_("date"))
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("par")
    )
    kind = models.CharField(max_length=24, choices=Kind.choices, verbose_name=_("acte"))
    table = models.ForeignKey(
        "floor.Table",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("table"),
    )
    shift = models.ForeignKey(
        "floor.Shift",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("séance"),
    )
    person = models.CharField(
        max_length=120,
        blank=True,
        help_text=_("une personne du public : qui a coupé, ou qui a mêlé ouvertement"),
        verbose_name=_("personne"),
    )
    details = models.JSONField(default=dict, blank=True, verbose_name=_("détails"))

    class Meta:
        verbose_name_plural = _("historique")
        ordering = ["at", "id"]
        verbose_name = _("acte sur un jeu")
        constraints = [
            # A pack's custody at a table begins when it is opened there, once (its state moves
            # forward only, so it is never opened again, and never at a second table).
            models.UniqueConstraint(
                fields=["pack"], condition=models.Q(kind="opened"), name="one_opening_per_pack"
            ),
        ]
        triggers = [
            *append_only(),
            # One pack in use at a table (opened, in play or passed). Which table a pack is at
            # is a fact of its opening event, its use a fact of its state: no index spans both.
            # The trigger locks the table, so of two packs opened at one table at the same
            # moment the second waits for the first to commit, then sees it (docs/uniqueness.md).
            pgtrigger.Trigger(
                name="one_pack_in_use_per_table",
                when=pgtrigger.Before,
                operation=pgtrigger.Insert,
                condition=pgtrigger.Q(new__kind="opened"),
                declare=[("busy", "varchar")],
                func="""
                PERFORM 1 FROM floor_table WHERE id = NEW.table_id FOR NO KEY UPDATE;
                SELECT p.seal_number INTO busy FROM shoes_pack p
                  JOIN shoes_packevent e ON e.pack_id = p.id AND e.kind = 'opened'
                 WHERE e.table_id = NEW.table_id AND p.id <> NEW.pack_id
                   AND p.state IN ('opened', 'in_play', 'passed')
                 LIMIT 1;
                IF FOUND THEN
                    RAISE EXCEPTION 'the table already has pack % in use', busy
                        USING ERRCODE = 'unique_violation', CONSTRAINT = 'one_pack_in_use_per_table',
                        DETAIL = json_build_object('seal', busy)::text;
                END IF;
                RETURN NEW;
                """,
            ),
        ]

    def __str__(self) -> str:
        return f"{shown.moment(self.at, seconds=True)} {self.get_kind_display()}"


class CardLaid(models.Model):
    """A card taken from the pack and laid, in order. The pack's order of play."""

    # Found through `one_card_per_place`, which begins with it: no index of its own.
    pack = models.ForeignKey(
        Pack,
        on_delete=models.PROTECT,
        db_index=False,
        related_name="cards_laid",
        verbose_name=_("jeu de cartes"),
    )
    seq = models.PositiveIntegerField(verbose_name=_("rang"))
    taille = models.PositiveSmallIntegerField(
        default=1,
        help_text=_("la taille où elle a été tirée : un jeu mêlé de nouveau rejoue ses cartes"),
        verbose_name=_("taille"),
    )
    card = models.CharField(max_length=2, verbose_name=_("carte"))
    burned = models.BooleanField(
        default=False, help_text=_("brûlée après la coupe, pas jouée"), verbose_name=_("brûlée")
    )
    at = models.DateTimeField(verbose_name=_("date"))
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("par")
    )
    shift = models.ForeignKey(
        "floor.Shift", on_delete=models.PROTECT, related_name="+", verbose_name=_("séance")
    )
    coup = models.ForeignKey(
        "floor.Coup",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="cards",
        verbose_name=_("coup"),
    )

    class Meta:
        verbose_name_plural = _("cartes tirées")
        ordering = ["pack", "seq"]
        verbose_name = _("carte tirée")
        constraints = [models.UniqueConstraint(fields=["pack", "seq"], name="one_card_per_place")]
        triggers = append_only()

    def __str__(self) -> str:
        return f"{self.card} (#{self.seq})"


class Reconciliation(models.Model):
    """The count at retirement: per card, laid + burned + counted back must equal the pack."""

    pack = models.OneToOneField(
        Pack,
        on_delete=models.PROTECT,
        related_name="reconciliation",
        verbose_name=_("jeu de cartes"),
    )
    at = models.DateTimeField(verbose_name=_("date"))
    counted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("compté par"),
    )
    counted = models.JSONField(
        help_text=_("les cartes recomptées, par code"), verbose_name=_("cartes recomptées")
    )
    missing = models.JSONField(
        default=dict,
        help_text=_("les cartes qui manquent, par code"),
        verbose_name=_("cartes manquantes"),
    )
    extra = models.JSONField(
        default=dict, help_text=_("les cartes en trop, par code"), verbose_name=_("cartes en trop")
    )

    class Meta:
        verbose_name_plural = _("recomptages")
        verbose_name = _("recomptage")
        triggers = append_only()

    def __str__(self) -> str:
        return _("recomptage de %(pack)s") % {"pack": self.pack}

    @property
    def balanced(self) -> bool:
        return not self.missing and not self.extra


class TalonCount(models.Model):
    """The undealt cards of a talon, recorded when the cards pass (RULES.md 1.3; REPLAY.md: a
    recorded talon lists every card of the sixain, the undealt ones included).

    What was counted is kept as counted, in the order given (the next card to deal first). A
    count that does not reconcile with the pack (the composition less the cards laid and burned
    in the taille) names the cards short and over, and raises critical anomalies: a count is
    evidence, it is never refused for what it found. One count per taille.
    """

    class Method(models.TextChoices):
        SCANNED = "scanned", _("lues dans l'ordre")
        COUNTED = "counted", _("comptées à la main")

    # Found through `one_talon_count_per_taille`, which begins with it: no index of its own.
    pack = models.ForeignKey(
        Pack,
        on_delete=models.PROTECT,
        db_index=False,
        related_name="talon_counts",
        verbose_name=_("jeu de cartes"),
    )
    taille = models.PositiveSmallIntegerField(verbose_name=_("taille"))
    at = models.DateTimeField(verbose_name=_("date"))
    counted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("compté par"),
    )
    shift = models.ForeignKey(
        "floor.Shift", on_delete=models.PROTECT, related_name="+", verbose_name=_("séance")
    )
    method = models.CharField(
        max_length=8,
        choices=Method.choices,
        help_text=_("lues : l'ordre est celui du talon ; comptées : l'ordre est celui de la liste"),
        verbose_name=_("méthode"),
    )
    cards = models.JSONField(
        help_text=_("les cartes restantes telles qu'enregistrées, la prochaine à donner d'abord"),
        verbose_name=_("cartes"),
    )
    expected = models.PositiveSmallIntegerField(
        help_text=_("combien de cartes le talon tient selon le compte du jeu"),
        verbose_name=_("attendues"),
    )
    missing = models.JSONField(
        default=dict,
        help_text=_("les cartes qui manquent, par code"),
        verbose_name=_("cartes manquantes"),
    )
    extra = models.JSONField(
        default=dict, help_text=_("les cartes en trop, par code"), verbose_name=_("cartes en trop")
    )

    class Meta:
        ordering = ["pack", "taille"]
        verbose_name = _("talon compté")
        verbose_name_plural = _("talons comptés quand les cartes passent")
        constraints = [
            models.UniqueConstraint(fields=["pack", "taille"], name="one_talon_count_per_taille"),
            models.CheckConstraint(condition=models.Q(taille__gte=1), name="talon_taille_from_1"),
        ]
        triggers = append_only()

    def __str__(self) -> str:
        return _("talon du jeu %(seal)s, taille %(taille)s") % {
            "seal": self.pack.seal_number,
            "taille": self.taille,
        }

    @property
    def balanced(self) -> bool:
        return not self.missing and not self.extra
