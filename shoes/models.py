"""Sealed card packs and their custody, from receipt to destruction (RULES.md 1.1, §2).

A pack's state moves forward only, and PostgreSQL enforces it (django-pgtrigger FSM); everything
that happened to a pack is an append-only row: the seal verifications, the timeline of acts, each
card laid, the reconciliation at retirement.
"""

from __future__ import annotations

import pgtrigger
from django.conf import settings
from django.db import models

from audit.append_only import append_only


class PackKind(models.TextChoices):
    SIXAIN = "sixain", "Sixain (6 × 52)"
    SINGLE = "single", "Jeu simple / single pack (52)"


class PackState(models.TextChoices):
    RECEIVED = "received", "Reçu / received"
    IN_STORE = "in_store", "En magasin / in store"
    VERIFIED = "verified", "Scellé vérifié / seal verified"
    OPENED = "opened", "Ouvert / opened"
    IN_PLAY = "in_play", "En jeu / in play"
    PASSED = "passed", "Les cartes passent / passed"
    RETIRED = "retired", "Retiré / retired"
    DESTROYED = "destroyed", "Détruit / destroyed"
    REJECTED = "rejected", "Rejeté (scellé) / rejected (seal)"
    WITHDRAWN = "withdrawn", "Remplacé / withdrawn"


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

    kind = models.CharField(max_length=10, choices=PackKind.choices)
    maker = models.CharField("fabricant / maker", max_length=120)
    maker_pack_numbers = models.CharField("numéros du fabricant / maker's numbers", max_length=200)
    seal_number = models.CharField("n° de scellé / seal number", max_length=60, unique=True)
    sealing_authority = models.CharField(
        "autorité de scellement / sealing authority", max_length=120
    )
    received_at = models.DateTimeField()
    received_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    store_location = models.CharField("emplacement / store location", max_length=120)
    state = models.CharField(
        max_length=12, choices=PackState.choices, default=S.RECEIVED, db_index=True
    )

    class Meta:
        ordering = ["-received_at"]
        verbose_name = "jeu scellé / sealed pack"
        verbose_name_plural = "registre des jeux / pack register"
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
        return f"{self.get_kind_display()} scellé {self.seal_number}"


class SealVerification(models.Model):
    """The commissioner's act: the seal number read and what he found."""

    class Verdict(models.TextChoices):
        INTACT = "intact", "Intact"
        BROKEN = "broken", "Brisé / broken"
        MISMATCH = "mismatch", "Numéro différent / number mismatch"

    pack = models.ForeignKey(Pack, on_delete=models.PROTECT, related_name="verifications")
    commissaire = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    at = models.DateTimeField()
    seal_number_read = models.CharField(max_length=60)
    verdict = models.CharField(max_length=10, choices=Verdict.choices)
    remarks = models.TextField(blank=True)

    class Meta:
        ordering = ["at"]
        verbose_name = "vérification du scellé / seal verification"
        triggers = append_only()

    def __str__(self) -> str:
        return f"{self.pack.seal_number}: {self.verdict}"


class RegisterVisa(models.Model):
    """The commissioner's visa on the receipt register's page of the day."""

    day = models.DateField(unique=True)
    commissaire = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    at = models.DateTimeField()
    packs_seen = models.PositiveIntegerField()
    remarks = models.TextField(blank=True)

    class Meta:
        ordering = ["-day"]
        verbose_name = "visa du registre / register visa"
        triggers = append_only()

    def __str__(self) -> str:
        return f"visa {self.day}"


class PackEvent(models.Model):
    """One act in a pack's life: the timeline shown in the admin and printed in reports."""

    class Kind(models.TextChoices):
        RECEIVED = "received", "Reçu / received"
        STORED = "stored", "Mis en magasin / stored"
        VERIFIED = "verified", "Scellé vérifié / seal verified"
        REJECTED = "rejected", "Rejeté / rejected"
        OPENED = "opened", "Ouvert / opened"
        SHUFFLED = "shuffled", "Mêlé / shuffled"
        CUT = "cut", "Coupé / cut"
        BURNED = "burned", "Cartes brûlées / burned"
        PASSED = "passed", "Les cartes passent"
        TALON_COUNTED = "talon_counted", "Talon compté / undealt cards counted"
        REPLACEMENT_DEMANDED = "replacement_demanded", "Nouveau jeu demandé / replacement demanded"
        WITHDRAWN = "withdrawn", "Remplacé / withdrawn"
        FOREIGN_CARD = "foreign_card", "Carte étrangère refusée / foreign card refused"
        RETIRED = "retired", "Retiré et recompté / retired and counted"
        DESTROYED = "destroyed", "Détruit / destroyed"

    pack = models.ForeignKey(Pack, on_delete=models.PROTECT, related_name="events")
    at = models.DateTimeField()
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    kind = models.CharField(max_length=24, choices=Kind.choices)
    table = models.ForeignKey(
        "floor.Table", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    shift = models.ForeignKey(
        "floor.Shift", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    person = models.CharField(
        max_length=120,
        blank=True,
        help_text="a member of the public: who cut, or who shuffled openly",
    )
    details = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["at", "id"]
        verbose_name = "acte / pack event"
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
        return f"{self.at:%Y-%m-%d %H:%M} {self.get_kind_display()}"


class CardLaid(models.Model):
    """A card taken from the pack and laid, in order. The pack's order of play."""

    pack = models.ForeignKey(Pack, on_delete=models.PROTECT, related_name="cards_laid")
    seq = models.PositiveIntegerField()
    taille = models.PositiveSmallIntegerField(
        default=1, help_text="the taille it was laid in: a re-shuffled pack plays its cards again"
    )
    card = models.CharField(max_length=2)
    burned = models.BooleanField(default=False, help_text="burned after the cut, not played")
    at = models.DateTimeField()
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    shift = models.ForeignKey("floor.Shift", on_delete=models.PROTECT, related_name="+")
    coup = models.ForeignKey(
        "floor.Coup", null=True, blank=True, on_delete=models.PROTECT, related_name="cards"
    )

    class Meta:
        ordering = ["pack", "seq"]
        verbose_name = "carte tirée / card laid"
        constraints = [models.UniqueConstraint(fields=["pack", "seq"], name="one_card_per_place")]
        triggers = append_only()

    def __str__(self) -> str:
        return f"{self.card} (#{self.seq})"


class Reconciliation(models.Model):
    """The count at retirement: per card, laid + burned + counted back must equal the pack."""

    pack = models.OneToOneField(Pack, on_delete=models.PROTECT, related_name="reconciliation")
    at = models.DateTimeField()
    counted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    counted = models.JSONField(help_text="cards counted back, by code")
    missing = models.JSONField(default=dict, help_text="cards short, by code")
    extra = models.JSONField(default=dict, help_text="cards over, by code")

    class Meta:
        verbose_name = "recomptage / reconciliation"
        triggers = append_only()

    def __str__(self) -> str:
        return f"reconciliation of {self.pack}"

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
        SCANNED = "scanned", "Lues dans l'ordre / scanned in order"
        COUNTED = "counted", "Comptées à la main / counted by hand"

    pack = models.ForeignKey(Pack, on_delete=models.PROTECT, related_name="talon_counts")
    taille = models.PositiveSmallIntegerField()
    at = models.DateTimeField()
    counted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    shift = models.ForeignKey("floor.Shift", on_delete=models.PROTECT, related_name="+")
    method = models.CharField(
        max_length=8,
        choices=Method.choices,
        help_text="scanned: the order is the talon's; counted: the order is the listing's",
    )
    cards = models.JSONField(help_text="the undealt cards as recorded, the next card to deal first")
    expected = models.PositiveSmallIntegerField(
        help_text="how many cards the talon holds by the pack's count"
    )
    missing = models.JSONField(default=dict, help_text="cards short, by code")
    extra = models.JSONField(default=dict, help_text="cards over, by code")

    class Meta:
        ordering = ["pack", "taille"]
        verbose_name = "talon compté / undealt cards"
        verbose_name_plural = "talons comptés / undealt cards"
        constraints = [
            models.UniqueConstraint(fields=["pack", "taille"], name="one_talon_count_per_taille"),
            models.CheckConstraint(condition=models.Q(taille__gte=1), name="talon_taille_from_1"),
        ]
        triggers = append_only()

    def __str__(self) -> str:
        return f"talon of {self.pack.seal_number}, taille {self.taille}"

    @property
    def balanced(self) -> bool:
        return not self.missing and not self.extra
