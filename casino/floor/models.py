"""The gaming floor's core: posted règlements, tables and their séances, who is on duty, the float
counts and the ledger.

What a game plays at the table (Trente-et-Quarante's coups, Pharao's tailles) is its own package's
(``casino/floor/play/``, ``casino/floor/registry.py``); its records keep their tables in this app
and are loaded with it, at the end of this module.
"""

from __future__ import annotations

import functools
from dataclasses import replace

import pgtrigger
from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from audit.append_only import append_only
from casino import shown
from casino.games.reglement import Reglement


class Game(models.TextChoices):
    TRENTE_ET_QUARANTE = "trente-et-quarante", "Trente-et-Quarante"
    PHARAO = "pharao", "Pharao"
    ALLIANCE = "alliance", "Alliance"


@functools.lru_cache(maxsize=64)
def _engine(parameters: str) -> Reglement:
    """Parsed and validated once per text: every act reads its coup's règlement, and a posted
    version's text never changes (the cache is keyed by the text itself, so it cannot go stale)."""
    return Reglement.from_json(parameters)


@functools.lru_cache(maxsize=256)
def _engine_with_limits(parameters: str, min_stake: int, max_stake: int) -> Reglement:
    """Every table act asks for its coup's règlement with its limits: validated once per text
    and limits (frozen, so one copy serves every act)."""
    return replace(_engine(parameters), min_stake=min_stake, max_stake=max_stake)


# A dispute's corrections moving more than this (minor units) wait for a second approver, unless
# the posted règlement says otherwise.
CORRECTION_APPROVAL_THRESHOLD = 100_000


class PostedReglement(models.Model):
    """A version of the règlement de police as posted in the room: numbered articles (French,
    English alongside) and the engine's parameters, approved for posting by a commissioner.
    Never edited: a change is a new version that supersedes the previous one."""

    name = models.CharField(max_length=60, verbose_name=_("nom"))
    version = models.PositiveIntegerField(verbose_name=_("version"))
    parameters = models.TextField(
        help_text=_("les paramètres du moteur, dans leur forme canonique"),
        verbose_name=_("paramètres"),
    )
    articles = models.JSONField(
        help_text=_("les articles numérotés, en français et en anglais"), verbose_name=_("articles")
    )
    effective_from = models.DateField(verbose_name=_("en vigueur à partir du"))
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("approuvé par"),
    )
    approved_at = models.DateTimeField(verbose_name=_("approuvé le"))
    supersedes = models.OneToOneField(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="superseded_by",
        verbose_name=_("remplace"),
    )
    correction_approval_threshold = models.PositiveBigIntegerField(
        default=CORRECTION_APPROVAL_THRESHOLD,
        help_text=_(
            "en centimes : les corrections d'une contestation qui déplacent davantage attendent "
            "un second approbateur"
        ),
        verbose_name=_("seuil de la seconde approbation"),
    )

    class Meta:
        ordering = ["name", "-version"]
        verbose_name = _("règlement affiché")
        verbose_name_plural = _("règlements affichés")
        constraints = [
            models.UniqueConstraint(
                fields=["name", "version"], name="one_version_number_per_reglement"
            ),
            models.CheckConstraint(
                condition=models.Q(correction_approval_threshold__gte=1),
                name="correction_threshold_positive",
            ),
        ]
        triggers = append_only()

    def __str__(self) -> str:
        return _("%(name)s v%(version)s (du %(day)s)") % {
            "name": self.name,
            "version": self.version,
            "day": shown.day(self.effective_from),
        }

    def engine(self) -> Reglement:
        return _engine(self.parameters)

    def with_limits(self, *, min_stake: int, max_stake: int) -> Reglement:
        """The engine's règlement with a table's limits (validated: ``max_stake_ratio``...)."""
        return _engine_with_limits(self.parameters, min_stake, max_stake)


class Table(models.Model):
    """A table: its game, number, limits and the règlement posted there."""

    number = models.PositiveSmallIntegerField(unique=True, verbose_name=_("numéro"))
    game = models.CharField(max_length=30, choices=Game.choices, verbose_name=_("jeu"))
    reglement = models.ForeignKey(
        PostedReglement,
        on_delete=models.PROTECT,
        related_name="tables",
        verbose_name=_("règlement affiché"),
    )
    min_stake = models.PositiveIntegerField(
        help_text=_("en centimes"), verbose_name=_("mise minimum")
    )
    max_stake = models.PositiveIntegerField(
        help_text=_("en centimes"), verbose_name=_("mise maximum")
    )

    class Meta:
        verbose_name_plural = _("tables")
        ordering = ["number"]
        verbose_name = _("table")
        constraints = [
            models.CheckConstraint(condition=models.Q(min_stake__gte=1), name="min_stake_positive"),
            models.CheckConstraint(
                condition=models.Q(max_stake__gte=models.F("min_stake")),
                name="max_stake_at_least_min",
            ),
        ]
        triggers = [
            pgtrigger.Protect(name="not_deleted", operation=pgtrigger.Delete),
            pgtrigger.ReadOnly(name="number_and_game_fixed", fields=["number", "game"]),
            # A raw edit of the settings is refused: they change only together with the
            # director's TableChange record of the same values (table_configure).
            pgtrigger.Trigger(
                name="settings_change_recorded",
                when=pgtrigger.Before,
                operation=pgtrigger.Update,
                func="""
                IF NOT EXISTS (
                    SELECT 1 FROM floor_tablechange c
                    WHERE c.id = (SELECT max(id) FROM floor_tablechange WHERE table_id = NEW.id)
                      AND c.reglement_id = NEW.reglement_id
                      AND c.min_stake = NEW.min_stake AND c.max_stake = NEW.max_stake
                ) THEN
                    RAISE EXCEPTION 'table %: its settings change only with a recorded change',
                        NEW.number;
                END IF;
                RETURN NEW;
                """,
            ),
        ]

    def __str__(self) -> str:
        return f"Table {self.number} ({self.get_game_display()})"

    def rules(self) -> Reglement:
        """The engine's règlement at this table: the posted version with the table's limits."""
        return self.reglement.with_limits(min_stake=self.min_stake, max_stake=self.max_stake)


class Shift(models.Model):
    """A séance at one table: opened and closed by the chef de partie. It keeps the règlement
    version and the limits in force when it opened: a change of the table's settings applies from
    the next séance on, never to play already under way."""

    table = models.ForeignKey(
        Table, on_delete=models.PROTECT, related_name="shifts", verbose_name=_("table")
    )
    reglement = models.ForeignKey(
        PostedReglement,
        null=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("règlement"),
    )
    min_stake = models.PositiveIntegerField(
        null=True, help_text=_("en centimes"), verbose_name=_("mise minimum")
    )
    max_stake = models.PositiveIntegerField(
        null=True, help_text=_("en centimes"), verbose_name=_("mise maximum")
    )
    opening_count = models.OneToOneField(
        "FloatCount",
        null=True,
        on_delete=models.PROTECT,
        related_name="opened",
        verbose_name=_("comptage d'ouverture"),
    )
    opened_at = models.DateTimeField(verbose_name=_("ouverte le"))
    opened_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("ouverte par"),
    )
    closed_at = models.DateTimeField(null=True, blank=True, verbose_name=_("fermée le"))

    class Meta:
        verbose_name_plural = _("séances")
        ordering = ["-opened_at"]
        verbose_name = _("séance")
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
        return f"{self.table} · {shown.moment(self.opened_at)}"

    def float_counts(self) -> list[FloatCount]:
        """The carnet d'avances of the séance: its opening count, then its closing count(s)."""
        related = ("counted_by", "countersignature__by")
        counts = [FloatCount.objects.select_related(*related).get(pk=self.opening_count_id)]
        counts += self.closing_counts.select_related(*related).order_by("at", "id")
        return counts

    def rules(self) -> Reglement:
        """The engine's règlement of this séance: the version and limits it opened under."""
        assert self.reglement is not None, "a séance opens under a règlement"
        assert self.min_stake, "and with the table's limits"
        assert self.max_stake, "and with the table's limits"
        return self.reglement.with_limits(min_stake=self.min_stake, max_stake=self.max_stake)


class Duty(models.Model):
    """Who works a séance and as what: the tailleur who deals and the croupiers, assigned by the
    chef de partie. A relief is a new duty; the duty it ends gets a ``DutyEnd``."""

    class Post(models.TextChoices):
        CHEF_DE_PARTIE = "chef_de_partie", _("chef de partie")
        TAILLEUR = "tailleur", _("tailleur")
        CROUPIER = "croupier", _("croupier")

    shift = models.ForeignKey(
        Shift, on_delete=models.PROTECT, related_name="duties", verbose_name=_("séance")
    )
    person = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("personne"),
    )
    post = models.CharField(max_length=20, choices=Post.choices, verbose_name=_("poste"))
    started_at = models.DateTimeField(verbose_name=_("depuis"))
    assigned_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("mis de service par"),
    )

    class Meta:
        verbose_name = _("service")
        ordering = ["started_at", "id"]
        verbose_name_plural = _("services")
        # "Open" is a fact of two append-only tables (a duty without its DutyEnd), which no index
        # can express; this trigger holds the at-most-one rules of duties instead
        # (docs/uniqueness.md). It locks the séance and the person before looking, so of two
        # transactions starting a duty for the same person (or the same post at the same séance)
        # the second waits for the first to end, then looks again with a fresh snapshot (READ
        # COMMITTED: each statement of the function sees what committed before it) and is
        # refused, as audit/migrations/0004_serialize_role_changes.py does for roles. The
        # services lock the same rows first, in the same order (séance, then people, then the
        # audit chain), so that the friendly check in ``_duty_start`` is already exact. A refusal
        # names its rule (CONSTRAINT) and gives its facts as JSON (DETAIL), which the application
        # words in the person's language (casino/database_rules.py).
        triggers = [
            *append_only(),
            pgtrigger.Trigger(
                name="at_most_one_duty",
                when=pgtrigger.Before,
                operation=pgtrigger.Insert,
                declare=[("busy_table", "integer"), ("who", "varchar")],
                func="""
                PERFORM 1 FROM floor_shift WHERE id = NEW.shift_id FOR NO KEY UPDATE;
                IF EXISTS (SELECT 1 FROM floor_shift WHERE id = NEW.shift_id
                           AND closed_at IS NOT NULL) THEN
                    RAISE EXCEPTION 'séance % is closed: nobody goes on duty there', NEW.shift_id
                        USING ERRCODE = 'check_violation', CONSTRAINT = 'no_duty_in_a_closed_seance',
                        DETAIL = json_build_object('shift', NEW.shift_id)::text;
                END IF;
                SELECT username INTO who FROM auth_user WHERE id = NEW.person_id FOR NO KEY UPDATE;
                SELECT t.number INTO busy_table
                  FROM floor_duty d JOIN floor_shift s ON s.id = d.shift_id
                  JOIN floor_table t ON t.id = s.table_id
                 WHERE d.person_id = NEW.person_id
                   AND NOT EXISTS (SELECT 1 FROM floor_dutyend e WHERE e.duty_id = d.id)
                 LIMIT 1;
                IF FOUND THEN
                    RAISE EXCEPTION '% is already on duty at table %', who, busy_table
                        USING ERRCODE = 'unique_violation', CONSTRAINT = 'one_duty_per_person',
                        DETAIL = json_build_object('person', who, 'table', busy_table)::text;
                END IF;
                IF NEW.post IN ('tailleur', 'chef_de_partie') AND EXISTS (
                    SELECT 1 FROM floor_duty d WHERE d.shift_id = NEW.shift_id AND d.post = NEW.post
                       AND NOT EXISTS (SELECT 1 FROM floor_dutyend e WHERE e.duty_id = d.id)
                ) THEN
                    RAISE EXCEPTION 'séance % has its % on duty: relieve them first',
                        NEW.shift_id, NEW.post
                        USING ERRCODE = 'unique_violation', CONSTRAINT = 'one_post_holder_per_seance',
                        DETAIL = json_build_object('shift', NEW.shift_id, 'post', NEW.post)::text;
                END IF;
                RETURN NEW;
                """,
            ),
        ]

    def __str__(self) -> str:
        return f"{self.person}, {self.get_post_display()}"


class DutyEnd(models.Model):
    """The end of a duty: relieved, or the séance closed."""

    duty = models.OneToOneField(
        Duty, on_delete=models.PROTECT, related_name="end", verbose_name=_("service")
    )
    at = models.DateTimeField(verbose_name=_("date"))
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("par")
    )
    reason = models.CharField(max_length=40, verbose_name=_("motif"))

    class Meta:
        verbose_name = _("fin de service")
        verbose_name_plural = _("fins de service")
        triggers = append_only()

    def __str__(self) -> str:
        return f"end of {self.duty}: {self.reason}"


class FloatCount(models.Model):
    """The carnet d'avances: the table's chips counted by denomination at opening or closing, the
    counting croupier's own act; it counts once the director or a comité member has countersigned
    it in theirs (``CountSignature``). An opening count belongs to the séance it opens
    (``Shift.opening_count``); a closing count names its séance."""

    class Moment(models.TextChoices):
        OPENING = "opening", _("ouverture")
        CLOSING = "closing", _("fermeture")

    table = models.ForeignKey(
        Table, on_delete=models.PROTECT, related_name="+", verbose_name=_("table")
    )
    shift = models.ForeignKey(
        Shift,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="closing_counts",
        verbose_name=_("séance"),
    )
    moment = models.CharField(max_length=10, choices=Moment.choices, verbose_name=_("moment"))
    chips = models.JSONField(
        help_text=_("le nombre de jetons de chaque valeur (en centimes)"), verbose_name=_("jetons")
    )
    total = models.BigIntegerField(verbose_name=_("total"))
    counted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("compté par"),
    )
    at = models.DateTimeField(verbose_name=_("date"))

    class Meta:
        verbose_name_plural = _("comptages de la caisse")
        verbose_name = _("comptage de la caisse")
        constraints = [
            models.CheckConstraint(condition=models.Q(total__gte=0), name="count_not_negative"),
            models.CheckConstraint(
                condition=models.Q(moment="opening", shift__isnull=True)
                | models.Q(moment="closing", shift__isnull=False),
                name="closing_counts_name_their_seance",
            ),
        ]
        triggers = append_only()

    def __str__(self) -> str:
        return f"{self.get_moment_display()} {shown.money(self.total)}"


class CountSignature(models.Model):
    """The countersignature of a count, by the director or a comité member, in their own act."""

    count = models.OneToOneField(
        FloatCount,
        on_delete=models.PROTECT,
        related_name="countersignature",
        verbose_name=_("comptage"),
    )
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("par")
    )
    at = models.DateTimeField(verbose_name=_("date"))

    class Meta:
        verbose_name = _("contresignature")
        verbose_name_plural = _("contresignatures")
        triggers = append_only()

    def __str__(self) -> str:
        return f"countersignature of {self.count}"


class CashTransfer(models.Model):
    """A fill (cage → table) or a credit (table → cage), recorded by one side (the cashier or the
    chef de partie on duty); the money moves when the other side countersigns in their own act."""

    class Kind(models.TextChoices):
        FILL = "fill", _("apport")
        CREDIT = "credit", _("retour")

    shift = models.ForeignKey(
        Shift, on_delete=models.PROTECT, related_name="transfers", verbose_name=_("séance")
    )
    kind = models.CharField(max_length=6, choices=Kind.choices, verbose_name=_("nature"))
    amount = models.BigIntegerField(verbose_name=_("montant"))
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("enregistré par"),
    )
    at = models.DateTimeField(verbose_name=_("date"))

    class Meta:
        verbose_name = _("apport ou retour")
        verbose_name_plural = _("apports et retours")
        ordering = ["at", "id"]
        constraints = [
            models.CheckConstraint(condition=models.Q(amount__gt=0), name="transfer_positive"),
        ]
        triggers = append_only()

    def __str__(self) -> str:
        return f"{self.kind} {self.amount}"


class TransferSignature(models.Model):
    """The other side's signature of a fill or credit: signed (the money moves) or declined."""

    transfer = models.OneToOneField(
        CashTransfer,
        on_delete=models.PROTECT,
        related_name="countersignature",
        verbose_name=_("apport ou retour"),
    )
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("par")
    )
    at = models.DateTimeField(verbose_name=_("date"))
    signed = models.BooleanField(
        help_text=_("non : refusé, rien n'a bougé"), verbose_name=_("signé")
    )
    remark = models.CharField(max_length=200, blank=True, verbose_name=_("remarque"))

    class Meta:
        verbose_name = _("signature d'un apport ou d'un retour")
        verbose_name_plural = _("signatures des apports et retours")
        triggers = append_only()

    def __str__(self) -> str:
        return f"{'signature' if self.signed else 'refusal'} of {self.transfer}"


class Account(models.Model):
    """Where money stands: a patron or seat, a table's layout, bank or prison, the cage, or the
    outside world. Its balance is the sum of its movements, never a stored number."""

    class Kind(models.TextChoices):
        PATRON = "patron", _("joueur")
        SEAT = "seat", _("place anonyme")
        LAYOUT = "layout", _("tapis")
        BANK = "bank", _("banque de la table")
        PRISON = "prison", _("prison")
        CAGE = "cage", _("caisse")
        OUTSIDE = "outside", _("extérieur")
        # A cercle table's own account (Alliance, RULES.md 3.6): the house's fee per deal.
        FEE_BOX = "fee_box", _("cagnotte")

    code = models.CharField(max_length=60, unique=True, verbose_name=_("code"))
    kind = models.CharField(max_length=10, choices=Kind.choices, verbose_name=_("sorte"))
    table = models.ForeignKey(
        Table,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="accounts",
        verbose_name=_("table"),
    )
    name = models.CharField(max_length=120, blank=True, verbose_name=_("nom"))

    class Meta:
        verbose_name_plural = _("comptes")
        ordering = ["code"]
        verbose_name = _("compte")
        triggers = [
            pgtrigger.Protect(name="not_deleted", operation=pgtrigger.Delete),
            pgtrigger.ReadOnly(name="never_changed", exclude=["name"]),
        ]

    def __str__(self) -> str:
        return self.code


class Movement(models.Model):
    """One movement of money: ``amount`` minor units leave the ``credit`` account and enter the
    ``debit`` account. Every movement balances by construction, so the whole ledger sums to zero."""

    class Kind(models.TextChoices):
        STAKE_PLACED = "stake_placed", _("mise posée")
        INSURANCE_PREMIUM = "insurance_premium", _("prime d'assurance")
        LOSS_COLLECTED = "loss_collected", _("mise perdue ramassée")
        WIN_PAID = "win_paid", _("gain payé")
        STAKE_RETURNED = "stake_returned", _("mise rendue")
        PUSH_RETURNED = "push_returned", _("après, mise rendue")
        IMPRISONED = "imprisoned", _("mise en prison")
        FREED = "freed", _("libérée")
        PRISON_LOST = "prison_lost", _("perdue en prison")
        HALF_TAKEN = "half_taken", _("moitié prise")
        HALF_RETURNED = "half_returned", _("moitié rendue")
        VOID_RETURNED = "void_returned", _("coup nul, mise rendue")
        REFUNDED = "refunded", _("prison remboursée")
        FILL = "fill", _("apport de la caisse")
        CREDIT = "credit", _("retour à la caisse")
        FLOAT = "float", _("avance initiale")
        BUY_IN = "buy_in", _("change")
        CASH_OUT = "cash_out", _("sortie")
        DISPUTE_CORRECTION = (
            "dispute_correction",
            _("correction sur contestation"),
        )
        # Pharao (RULES.md §2): the bank's share of a plié, and the winnings a mark puts back on
        # the card (paid after the win, they ride again).
        PLIE_TAKEN = "plie_taken", _("part du plié à la banque")
        WINNINGS_RIDDEN = "winnings_ridden", _("gain remis sur la carte par une marque")
        # Alliance (RULES.md 3.6): marks paid from one player to another, the house's fee.
        MARKS_PAID = "marks_paid", _("marques payées")
        CERCLE_FEE = "cercle_fee", _("cagnotte de la donne")

    at = models.DateTimeField(verbose_name=_("date"))
    debit = models.ForeignKey(
        Account, on_delete=models.PROTECT, related_name="debits", verbose_name=_("vers (débit)")
    )
    credit = models.ForeignKey(
        Account, on_delete=models.PROTECT, related_name="credits", verbose_name=_("depuis (crédit)")
    )
    amount = models.BigIntegerField(verbose_name=_("montant"))
    kind = models.CharField(max_length=24, choices=Kind.choices, verbose_name=_("nature"))
    shift = models.ForeignKey(
        Shift,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="movements",
        verbose_name=_("séance"),
    )
    reference = models.CharField(
        max_length=120,
        blank=True,
        help_text=_("ce à quoi le mouvement appartient : un coup, une mise, un apport…"),
        verbose_name=_("référence"),
    )
    idempotency_key = models.CharField(
        max_length=200, unique=True, verbose_name=_("clé d'idempotence")
    )
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("par")
    )

    class Meta:
        verbose_name_plural = _("mouvements")
        ordering = ["at", "id"]
        verbose_name = _("mouvement")
        indexes = [
            # A coup's, a taille's or a dispute's movements are found by their reference or its
            # prefix ("coup:12:"): LIKE 'coup:12:%' can use a B-tree of the default operator
            # class only under the C collation, so this one compares by bytes (and serves = too).
            # The accounts are indexed as foreign keys, not twice.
            models.Index(
                fields=["reference"], opclasses=["varchar_pattern_ops"], name="movement_reference"
            ),
            # The ledger read in time order: its pages (admin, API) and a day's movements.
            models.Index(fields=["at", "id"], name="movement_at"),
        ]
        constraints = [
            models.CheckConstraint(condition=models.Q(amount__gt=0), name="amount_positive"),
            models.CheckConstraint(
                condition=~models.Q(debit=models.F("credit")), name="two_different_accounts"
            ),
        ]
        triggers = append_only()

    def __str__(self) -> str:
        return f"{self.kind} {self.amount}: {self.credit_id} → {self.debit_id}"


class TableChange(models.Model):
    """The director's act changing a table's règlement version or limits, effective from the
    table's next séance. The table's row may change only together with such a record."""

    table = models.ForeignKey(
        Table, on_delete=models.PROTECT, related_name="changes", verbose_name=_("table")
    )
    reglement = models.ForeignKey(
        PostedReglement, on_delete=models.PROTECT, related_name="+", verbose_name=_("règlement")
    )
    min_stake = models.PositiveIntegerField(verbose_name=_("mise minimum"))
    max_stake = models.PositiveIntegerField(verbose_name=_("mise maximum"))
    at = models.DateTimeField(verbose_name=_("date"))
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("par")
    )

    class Meta:
        verbose_name = _("changement de table")
        verbose_name_plural = _("changements de table (en vigueur à la séance suivante)")
        ordering = ["at", "id"]
        triggers = append_only()

    def __str__(self) -> str:
        return f"{self.table}: {self.reglement} {self.min_stake}-{self.max_stake}"


# Each game's records, loaded with the app (their tables are the floor app's, in its migrations).
# Trente-et-Quarante's are also found here, their path before the floor served several games.
from casino.floor.registry import game_parts  # noqa: E402

game_parts("models")
from casino.floor.play.trente_et_quarante.models import *  # noqa: E402,F403
