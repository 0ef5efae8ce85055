"""Alliance's records at the cercle table (RULES.md §3): the seats the players take and leave,
each deal with its calls, its contract, its cards played and what it settled.

They keep their tables in the floor app (its migrations, ``app_label``) and are loaded with it
(``casino/floor/models.py``); the acts that write them are in ``seats.py`` and ``deals.py``. All
history and append-only, the deal's phase apart (it moves forward only). The cards dealt are the
pack's (``shoes.CardLaid``, one taille of the pack per deal); where the deal stands is not stored:
the engine reads it from these records (``deals.deal_of``).
"""

from __future__ import annotations

import pgtrigger
from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from audit.append_only import append_only

SEATS = 6  # a cercle table has up to six seats (RULES.md 3.1: four to six players)


class CercleSeat(models.Model):
    """A patron takes a seat at the cercle table, between deals: the croupier's act. He plays
    every deal dealt while he sits; ``CercleSeatEnd`` records when he leaves."""

    shift = models.ForeignKey(
        "floor.Shift", on_delete=models.PROTECT, related_name="seats", verbose_name=_("séance")
    )
    seat = models.PositiveSmallIntegerField(verbose_name=_("place"))
    patron = models.ForeignKey(
        "floor.Account",
        on_delete=models.PROTECT,
        related_name="cercle_seats",
        verbose_name=_("joueur"),
    )
    at = models.DateTimeField(verbose_name=_("assis le"))
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("placé par"),
    )

    class Meta:
        app_label = "floor"
        ordering = ["at", "id"]
        verbose_name = _("place au cercle")
        verbose_name_plural = _("places au cercle")
        constraints = [
            models.CheckConstraint(
                condition=models.Q(seat__gte=1, seat__lte=SEATS), name="cercle_seat_in_range"
            ),
        ]
        # "Taken" is a fact of two append-only tables (a seat without its end): the acts lock the
        # séance first, so of two acts taking one seat the second sees the first (seats.py).
        triggers = append_only()

    def __str__(self) -> str:
        return _("place %(seat)s : %(patron)s") % {"seat": self.seat, "patron": self.patron.name}


class CercleSeatEnd(models.Model):
    """A player leaves his seat between deals (or the séance closes)."""

    seating = models.OneToOneField(
        CercleSeat, on_delete=models.PROTECT, related_name="end", verbose_name=_("place")
    )
    at = models.DateTimeField(verbose_name=_("levé le"))
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("par")
    )
    reason = models.CharField(max_length=60, verbose_name=_("motif"))

    class Meta:
        app_label = "floor"
        verbose_name = _("départ du cercle")
        verbose_name_plural = _("départs du cercle")
        triggers = append_only()

    def __str__(self) -> str:
        return f"{self.seating}: {self.reason}"


class DealPhase(models.TextChoices):
    DEALING = "dealing", _("donne des cartes")
    AUCTION = "auction", _("enchères")
    CONTRACT = "contract", _("contrat")
    PLAY = "play", _("jeu de la carte")
    OVER = "over", _("réglée")


class Deal(models.Model):
    """One deal at the cercle table: the pack shuffled by the dealer and cut by the player on his
    left, dealt to the seated players (``players``, their accounts' codes in dealing order, the
    first the Vorhand, the dealer last), played out and settled under the séance's règlement at
    its mark value."""

    # Found through `one_deal_number`, which begins with it: no index of its own.
    shift = models.ForeignKey(
        "floor.Shift",
        on_delete=models.PROTECT,
        db_index=False,
        related_name="deals",
        verbose_name=_("séance"),
    )
    number = models.PositiveIntegerField(help_text=_("dans la séance"), verbose_name=_("numéro"))
    # Found through `one_deal_per_cut`, which begins with it: no index of its own.
    pack = models.ForeignKey(
        "shoes.Pack",
        on_delete=models.PROTECT,
        db_index=False,
        related_name="deals",
        verbose_name=_("jeu de cartes"),
    )
    pack_taille = models.PositiveSmallIntegerField(
        help_text=_("quelle donne du jeu : une par coupe"), verbose_name=_("coupe du jeu")
    )
    reglement = models.ForeignKey(
        "floor.PostedReglement",
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("règlement"),
    )
    mark_value = models.PositiveIntegerField(
        help_text=_("en centimes"), verbose_name=_("valeur de la marque")
    )
    players = models.JSONField(
        help_text=_("les comptes des joueurs, dans l'ordre de la donne"), verbose_name=_("joueurs")
    )
    dealer = models.CharField(max_length=60, verbose_name=_("donneur"))
    cut_by = models.CharField(max_length=60, verbose_name=_("coupé par"))
    opened_at = models.DateTimeField(verbose_name=_("commencée le"))
    opened_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("enregistrée par"),
    )
    phase = models.CharField(
        max_length=10,
        choices=DealPhase.choices,
        default=DealPhase.DEALING,
        verbose_name=_("phase"),
    )

    class Meta:
        app_label = "floor"
        ordering = ["opened_at", "id"]
        verbose_name = _("donne")
        verbose_name_plural = _("donnes")
        constraints = [
            models.UniqueConstraint(
                fields=["shift"],
                condition=~models.Q(phase="over"),
                name="one_deal_in_progress_per_seance",
            ),
            models.UniqueConstraint(fields=["shift", "number"], name="one_deal_number"),
            models.UniqueConstraint(fields=["pack", "pack_taille"], name="one_deal_per_cut"),
        ]
        triggers = [
            pgtrigger.Protect(name="not_deleted", operation=pgtrigger.Delete),
            pgtrigger.ReadOnly(name="only_phase_changes", exclude=["phase"]),
            pgtrigger.FSM(
                name="phase_forward_only",
                field="phase",
                transitions=[
                    (DealPhase.DEALING.value, DealPhase.AUCTION.value),
                    (DealPhase.AUCTION.value, DealPhase.CONTRACT.value),
                    (DealPhase.CONTRACT.value, DealPhase.PLAY.value),
                    (DealPhase.PLAY.value, DealPhase.OVER.value),
                ],
            ),
            # A deal is over when its last card settled it: never without its settlement (a raw
            # edit to "over" would end a deal nobody paid).
            pgtrigger.Trigger(
                name="over_only_when_settled",
                when=pgtrigger.Before,
                operation=pgtrigger.Update,
                condition=pgtrigger.Q(new__phase="over") & ~pgtrigger.Q(old__phase="over"),
                func="""
                IF NOT EXISTS (SELECT 1 FROM floor_dealsettlement WHERE deal_id = NEW.id) THEN
                    RAISE EXCEPTION 'deal %: over only once settled', NEW.id;
                END IF;
                RETURN NEW;
                """,
            ),
        ]

    def __str__(self) -> str:
        return _("%(table)s, donne %(number)s") % {"table": self.shift.table, "number": self.number}


class _DealAct(models.Model):
    """What every act of a deal keeps: its place in the deal, who did it and when."""

    index = models.PositiveSmallIntegerField(verbose_name=_("rang"))
    player = models.CharField(max_length=60, verbose_name=_("joueur"))
    at = models.DateTimeField(verbose_name=_("date"))
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("enregistré par"),
    )

    class Meta:
        abstract = True


class DealCall(_DealAct):
    """A call of the auction, in turn (RULES.md 3.2): pass, alliance, lever, solo or hold."""

    # Found through `one_call_per_turn`, which begins with it: no index of its own.
    deal = models.ForeignKey(
        Deal,
        on_delete=models.PROTECT,
        db_index=False,
        related_name="calls",
        verbose_name=_("donne"),
    )
    call = models.CharField(max_length=10, verbose_name=_("annonce"))

    class Meta:
        app_label = "floor"
        ordering = ["deal", "index"]
        verbose_name = _("annonce")
        verbose_name_plural = _("annonces")
        constraints = [
            models.UniqueConstraint(fields=["deal", "index"], name="one_call_per_turn"),
        ]
        triggers = append_only()

    def __str__(self) -> str:
        return f"{self.player}: {self.call}"


class DealContract(models.Model):
    """The declarer's contract (RULES.md 3.3), as REPLAY.md writes it."""

    deal = models.OneToOneField(
        Deal, on_delete=models.PROTECT, related_name="contract", verbose_name=_("donne")
    )
    declarer = models.CharField(max_length=60, verbose_name=_("déclarant"))
    contract = models.JSONField(verbose_name=_("contrat"))
    at = models.DateTimeField(verbose_name=_("date"))
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("enregistré par"),
    )

    class Meta:
        app_label = "floor"
        verbose_name = _("contrat")
        verbose_name_plural = _("contrats")
        triggers = append_only()

    def __str__(self) -> str:
        return f"{self.declarer}: {self.contract}"


class DealPlay(_DealAct):
    """A card played, in its trick (RULES.md 3.4)."""

    # Found through `one_card_per_place_in_a_deal`, which begins with it: no index of its own.
    deal = models.ForeignKey(
        Deal,
        on_delete=models.PROTECT,
        db_index=False,
        related_name="plays",
        verbose_name=_("donne"),
    )
    card = models.CharField(max_length=2, verbose_name=_("carte"))

    class Meta:
        app_label = "floor"
        ordering = ["deal", "index"]
        verbose_name = _("carte jouée")
        verbose_name_plural = _("cartes jouées")
        constraints = [
            models.UniqueConstraint(fields=["deal", "index"], name="one_card_per_place_in_a_deal"),
        ]
        triggers = append_only()

    def __str__(self) -> str:
        return f"{self.player}: {self.card}"


class DealSettlement(models.Model):
    """What the deal settled, as the engine computed it at its last card: the replay's output
    document (REPLAY.md, Alliance), kept so that reports and detectors read it without replaying;
    the movements it posted name the deal (``deal:<id>``)."""

    deal = models.OneToOneField(
        Deal, on_delete=models.PROTECT, related_name="settlement", verbose_name=_("donne")
    )
    outcome = models.JSONField(verbose_name=_("résultat"))
    at = models.DateTimeField(verbose_name=_("date"))
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("enregistré par"),
    )

    class Meta:
        app_label = "floor"
        verbose_name = _("règlement de la donne")
        verbose_name_plural = _("règlements des donnes")
        triggers = append_only()

    def __str__(self) -> str:
        return f"{self.deal_id}: {self.outcome.get('winners')}"
