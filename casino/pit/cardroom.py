"""The card room (issue 12, item 3): sealed packs from their delivery to their destruction.

The card room's page holds the delivery (several packs in one form), the receipt register's
pages and the commissioner's visa, and every pack by where it stands. A pack's page holds its
timeline, said in sentences (casino/pit/timeline.py), and the forms of the acts its state
allows, each one service of shoes/services.py: store (the cashier), verify the seal (the
commissioner), open (the chef de partie or the tailleur on duty), shuffle (the croupiers, then
the tailleur), cut (the tailleur), the cards pass with the undealt cards (the tailleur),
a new sealed pack demanded (the chef de partie or the tailleur), retire with the count card by
card (the chef de partie), destruction witnessed (the commissioner). Who may is the service's
to say; a refusal is shown with its reason and nothing is recorded, except the refusals that
are evidence (a foreign card burned at the cut), which the service records and the page says so.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from django import forms
from django.db.models import QuerySet
from django.forms import formset_factory
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from casino import clock
from casino.floor.models import Duty, Shift
from casino.games.cards import ONE_PACK
from casino.people.roles import Role
from casino.pit.access import CAGE_AND_PIT, FLOOR_READERS, holds, refused
from casino.pit.acting import Outcome, act, answer, bound
from casino.pit.pages import page
from casino.pit.seance import anomalies
from casino.pit.timeline import count_verdict, event_text, method_words, named_cards
from shoes.models import Pack, PackEvent, PackKind, PackState, RegisterVisa, SealVerification
from shoes.services import (
    GAME_PACK,
    IN_USE,
    cards_left,
    cards_pass,
    current_shift,
    current_taille,
    delivery_receive,
    pack_cut,
    pack_destroy,
    pack_open,
    pack_retire,
    pack_shuffle,
    pack_store,
    packs_at,
    register_visa,
    replacement_demand,
    seal_verify,
)

CODES = [str(c) for c in ONE_PACK]  # the 52 cards, spades to clubs, ace to king
SUITS = [CODES[i : i + 13] for i in range(0, 52, 13)]
REGISTER_DAYS = 7  # the register's pages shown: today's and the days before


def _codes(text: str) -> list[str]:
    """The cards typed or scanned: codes separated by spaces, commas or new lines, as typed
    (the service says which is no card, by its place)."""
    return [code for code in re.split(r"[\s,;]+", text.strip()) if code]


# --- the forms -----------------------------------------------------------------------------------


class DeliveryForm(forms.Form):
    """What a delivery's packs share: their kind, maker, sealing authority and store."""

    kind = forms.ChoiceField(label=gettext_lazy("sorte de jeu"), choices=PackKind.choices)
    maker = forms.CharField(label=gettext_lazy("fabricant"), max_length=120)
    sealing_authority = forms.CharField(
        label=gettext_lazy("autorité de scellement"), max_length=120
    )
    store_location = forms.CharField(label=gettext_lazy("emplacement"), max_length=120)


class DeliveryRow(forms.Form):
    """One pack of the delivery: its seal and the maker's numbers. An empty row is no pack."""

    seal_number = forms.CharField(label=gettext_lazy("n° de scellé"), max_length=60, required=False)
    maker_pack_numbers = forms.CharField(
        label=gettext_lazy("numéros du fabricant"), max_length=200, required=False
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("maker_pack_numbers") and not (data.get("seal_number") or "").strip():
            raise forms.ValidationError(_("un jeu reçu a son numéro de scellé"))
        return data


DeliveryRows = formset_factory(DeliveryRow, extra=6, max_num=24)


class Delivery:
    """The delivery's form and its rows, read together as one form."""

    def __init__(self, data: Any = None) -> None:
        self.head = DeliveryForm(data, prefix="delivery")
        self.rows = DeliveryRows(data, prefix="packs")

    def is_valid(self) -> bool:
        head, rows = self.head.is_valid(), self.rows.is_valid()
        if head and rows and not self.packs():
            self.head.add_error(None, _("entrez au moins un jeu : son numéro de scellé"))
            return False
        return head and rows

    @property
    def cleaned_data(self) -> dict[str, Any]:
        return self.head.cleaned_data

    def packs(self) -> list[dict[str, str]]:
        return [
            {"seal_number": row["seal_number"], "maker_pack_numbers": row["maker_pack_numbers"]}
            for row in self.rows.cleaned_data
            if row and (row.get("seal_number") or "").strip()
        ]


class VisaForm(forms.Form):
    day = forms.DateField(widget=forms.HiddenInput)
    remarks = forms.CharField(
        label=gettext_lazy("observations"), required=False, widget=forms.Textarea(attrs={"rows": 2})
    )


class CardGrid(forms.Form):
    """A count card by card: a number for each of the 52 codes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for code in CODES:
            self.fields[f"n_{code}"] = forms.IntegerField(
                label=code,
                required=False,
                widget=forms.NumberInput(
                    attrs={"min": 0, "step": 1, "data-value": 1, "class": "count"}
                ),
            )

    def grid(self) -> list[list[tuple[str, forms.BoundField]]]:
        return [[(code, self[f"n_{code}"]) for code in suit] for suit in SUITS]

    def counted(self) -> dict[str, int]:
        """Every card and the number counted (a box left empty: none)."""
        return {code: self.cleaned_data.get(f"n_{code}") or 0 for code in CODES}


class VerifyForm(forms.Form):
    seal_number_read = forms.CharField(label=gettext_lazy("n° de scellé lu"), max_length=60)
    verdict = forms.ChoiceField(
        label=gettext_lazy("constat"), choices=SealVerification.Verdict.choices
    )
    remarks = forms.CharField(label=gettext_lazy("observations"), required=False)


class OpenForm(forms.Form):
    shift = forms.ModelChoiceField(label=gettext_lazy("séance"), queryset=Shift.objects.none())

    def __init__(self, *args: Any, pack: Pack, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        games = [game for game, kind in GAME_PACK.items() if kind == pack.kind]
        field = self.fields["shift"]
        field.queryset = (  # type: ignore[attr-defined]
            Shift.objects.filter(closed_at__isnull=True, table__game__in=games)
            .select_related("table")
            .order_by("table__number")
        )
        field.label_from_instance = lambda s: str(s.table)  # type: ignore[attr-defined]


class ShuffleForm(forms.Form):
    player = forms.CharField(
        label=gettext_lazy("joueur qui mêle ouvertement"), max_length=120, required=False
    )


class CutForm(forms.Form):
    cut_by = forms.CharField(
        label=gettext_lazy("coupé par (galerie)"), max_length=120, required=False
    )
    burn = forms.CharField(label=gettext_lazy("cartes brûlées"), max_length=200, required=False)


class PassForm(CardGrid):
    """The undealt cards: read in order by a scanner (``scanned``: the text, the next card to
    deal first) or counted by hand (``counted``: the grid, listed in the pack's order)."""

    method = forms.ChoiceField(
        choices=[("scanned", "scanned"), ("counted", "counted")], widget=forms.HiddenInput
    )
    undealt = forms.CharField(
        label=gettext_lazy("cartes restantes, la prochaine à donner d'abord"),
        required=False,
        widget=forms.Textarea(
            attrs={"rows": 4, "cols": 90, "spellcheck": "false", "autocomplete": "off"}
        ),
    )

    def undealt_cards(self) -> list[str]:
        if self.cleaned_data["method"] == "scanned":
            return _codes(self.cleaned_data.get("undealt") or "")
        return [code for code, n in self.counted().items() for _ in range(n)]


class ReplaceForm(forms.Form):
    demanded_by = forms.CharField(label=gettext_lazy("demandé par"), max_length=120, required=False)
    side = forms.ChoiceField(
        label=gettext_lazy("pour"),
        choices=[("players", gettext_lazy("les joueurs")), ("bank", gettext_lazy("la banque"))],
    )


class DestroyForm(forms.Form):
    remarks = forms.CharField(label=gettext_lazy("observations"), max_length=500, required=False)


# --- reads ---------------------------------------------------------------------------------------


def visible_packs(user: Any) -> QuerySet[Pack]:
    """The API's scope: the cage, the pit and oversight see the whole register; a dealer the
    packs of the séances he worked."""
    if holds(user, *CAGE_AND_PIT):
        return Pack.objects.all()
    worked = Duty.objects.filter(person=user).values("shift_id")
    return Pack.objects.filter(pk__in=PackEvent.objects.filter(shift__in=worked).values("pack_id"))


def _at_tables(packs: list[Pack]) -> list[Pack]:
    """Each pack with the table where it was opened (one query for them all)."""
    opened = {
        e.pack_id: e
        for e in PackEvent.objects.filter(
            pack__in=packs, kind=PackEvent.Kind.OPENED
        ).select_related("table")
    }
    for pack in packs:
        event = opened.get(pack.pk)
        pack.table = event.table if event else None  # type: ignore[attr-defined]
    return packs


def demands() -> list[Pack]:
    """Packs withdrawn because new sealed cards were demanded, at a table that has none in use
    yet: the card room brings a verified pack there."""
    withdrawn = _at_tables(list(Pack.objects.filter(state=PackState.WITHDRAWN)))
    return [
        p
        for p in withdrawn
        if p.table is not None  # type: ignore[attr-defined]
        and not packs_at(p.table.pk, *IN_USE).exists()  # type: ignore[attr-defined]
    ]


def register_pages(today: dt.date) -> list[dict[str, Any]]:
    """The receipt register's pages of the last days: the packs received each day and its
    visa (today's page is shown even before anything is received)."""
    first = today - dt.timedelta(days=REGISTER_DAYS - 1)
    received: dict[dt.date, list[Pack]] = {}
    for pack in Pack.objects.filter(received_at__date__gte=first).select_related("received_by"):
        received.setdefault(timezone.localdate(pack.received_at), []).append(pack)
    visas = {
        v.day: v for v in RegisterVisa.objects.filter(day__gte=first).select_related("commissaire")
    }
    days = sorted(set(received) | {today}, reverse=True)
    return [
        {
            "day": day,
            "packs": sorted(received.get(day, []), key=lambda p: p.received_at),
            "visa": visas.get(day),
        }
        for day in days
    ]


# --- the card room's page ------------------------------------------------------------------------


GROUPS = [
    (gettext_lazy("Reçus, à ranger"), [PackState.RECEIVED]),
    (gettext_lazy("En magasin, scellé à vérifier"), [PackState.IN_STORE]),
    (gettext_lazy("Scellé vérifié, prêts à ouvrir"), [PackState.VERIFIED]),
    (gettext_lazy("Aux tables"), [PackState.OPENED, PackState.IN_PLAY, PackState.PASSED]),
    (gettext_lazy("Remplacés, à recompter"), [PackState.WITHDRAWN]),
    (gettext_lazy("Recomptés ou rejetés, à détruire"), [PackState.RETIRED, PackState.REJECTED]),
]


def card_room(request: HttpRequest) -> HttpResponse:
    if not holds(request.user, *FLOOR_READERS):
        return refused(request)
    return _card_room_page(request)


def _card_room_page(request: HttpRequest, outcome: Outcome | None = None) -> HttpResponse:
    user = request.user
    packs = _at_tables(list(visible_packs(user).exclude(state=PackState.DESTROYED)))
    groups = [(title, [p for p in packs if p.state in states]) for title, states in GROUPS]
    today = timezone.localdate(clock.now())
    delivery = outcome.form if outcome is not None and outcome.name == "receive" else Delivery()
    return page(
        request,
        "pit/cardroom.html",
        title=_("Salle des cartes"),
        outcome=outcome,
        groups=groups,
        destroyed=visible_packs(user).filter(state=PackState.DESTROYED).count(),
        demands=demands(),
        pages=register_pages(today) if holds(user, *CAGE_AND_PIT) else [],
        today=today,
        delivery=delivery,
        visa_form=bound(outcome, "visa", VisaForm()),
        may_cage=holds(user, Role.CAISSIER),
        may_visa=holds(user, Role.COMMISSAIRE),
    )


def card_room_act(request: HttpRequest, act_name: str) -> HttpResponse:
    """The card room's forms: ``receive`` (a delivery, the cashier) and ``visa`` (the register's
    page of a day, the commissioner)."""
    if not holds(request.user, *FLOOR_READERS):
        return refused(request)
    back = reverse("admin:pit-card-room")
    if request.method != "POST":
        return HttpResponseRedirect(back)
    user = request.user
    if act_name == "receive":
        delivery = Delivery(request.POST)
        outcome = act(
            "receive",
            delivery,  # type: ignore[arg-type]
            lambda data: delivery_receive(actor=user, packs=delivery.packs(), **data),
        )
        said: Any = _said_received
    elif act_name == "visa":
        outcome = act(
            "visa",
            VisaForm(request.POST),
            lambda data: register_visa(actor=user, day=data["day"], remarks=data["remarks"]),
        )
        said = _said_visa
    else:
        raise Http404(act_name)
    return answer(
        request,
        outcome,
        back=back,
        said=said,
        again=lambda failed: _card_room_page(request, failed),
    )


def _said_received(packs: list[Pack]) -> str:
    return _("%(n)s jeux reçus au registre : %(seals)s.") % {
        "n": len(packs),
        "seals": ", ".join(p.seal_number for p in packs),
    }


def _said_visa(visa: RegisterVisa) -> str:
    return _("Page du %(day)s visée (%(n)s jeux).") % {
        "day": visa.day.strftime("%d/%m/%Y"),
        "n": visa.packs_seen,
    }


# --- a pack's page -------------------------------------------------------------------------------


def _pack(request: HttpRequest, pack_id: int) -> Pack | None:
    """The pack, if this person may read it (None: refused)."""
    if not holds(request.user, *FLOOR_READERS):
        return None
    found = get_object_or_404(Pack.objects.select_related("received_by"), pk=pack_id)
    if not visible_packs(request.user).filter(pk=found.pk).exists():
        return None
    return found


def pack(request: HttpRequest, pack_id: int) -> HttpResponse:
    found = _pack(request, pack_id)
    if found is None:
        return refused(request)
    return _pack_page(request, found)


def _pack_page(request: HttpRequest, pack: Pack, outcome: Outcome | None = None) -> HttpResponse:
    user = request.user
    opened_in = current_shift(pack)
    table = opened_in.table if opened_in else None
    seance_now = (
        Shift.objects.filter(table=table, closed_at__isnull=True).first() if table else None
    )
    rules = seance_now.rules() if seance_now else None
    events = list(pack.events.select_related("actor", "table").order_by("at", "id"))
    for event in events:
        event.text = event_text(event)  # type: ignore[attr-defined]
    taille = current_taille(pack)
    left, _codes_left = cards_left(pack)
    talon_counted = pack.talon_counts.filter(taille=taille).exists()
    state = PackState(pack.state)
    counts = list(pack.talon_counts.select_related("counted_by").order_by("taille"))
    for count in counts:
        count.missing_text = named_cards(count.missing)  # type: ignore[attr-defined]
        count.extra_text = named_cards(count.extra)  # type: ignore[attr-defined]
        count.method_text = method_words(count.method)  # type: ignore[attr-defined]
    reconciliation = getattr(pack, "reconciliation", None)
    busy = table is not None and packs_at(table.pk, *IN_USE).exists()
    demanded = state == PackState.WITHDRAWN and table is not None and not busy
    replacements = (
        list(Pack.objects.filter(state=PackState.VERIFIED, kind=pack.kind).order_by("received_at"))
        if demanded
        else []
    )
    may = {
        "store": state == PackState.RECEIVED and holds(user, Role.CAISSIER),
        "verify": state in (PackState.RECEIVED, PackState.IN_STORE)
        and holds(user, Role.COMMISSAIRE),
        "open": state == PackState.VERIFIED and holds(user, Role.CHEF_DE_PARTIE, Role.TAILLEUR),
        "shuffle": state in (PackState.OPENED, PackState.PASSED)
        and holds(user, Role.CROUPIER, Role.TAILLEUR),
        "cut": state in (PackState.OPENED, PackState.PASSED) and holds(user, Role.TAILLEUR),
        "pass": (
            state == PackState.IN_PLAY or (state == PackState.PASSED and not talon_counted and left)
        )
        and holds(user, Role.TAILLEUR),
        "replace": state == PackState.PASSED and holds(user, Role.CHEF_DE_PARTIE, Role.TAILLEUR),
        "retire": state in (PackState.IN_PLAY, PackState.PASSED, PackState.WITHDRAWN)
        and holds(user, Role.CHEF_DE_PARTIE),
        "destroy": state in (PackState.RETIRED, PackState.REJECTED)
        and holds(user, Role.COMMISSAIRE),
    }
    return page(
        request,
        "pit/pack.html",
        title=_("Jeu scellé %(seal)s") % {"seal": pack.seal_number},
        pack=pack,
        outcome=outcome,
        table=table,
        at_table=state in (*IN_USE, PackState.WITHDRAWN),
        in_use=state in IN_USE,
        opened_in=opened_in,
        seance_now=seance_now,
        events=events,
        verifications=pack.verifications.select_related("commissaire").order_by("at"),
        talon_counts=counts,
        reconciliation=reconciliation,
        taille=taille,
        cards_left=left,
        laid=pack.cards_laid.filter(taille=taille, burned=False).count() if taille else 0,
        talon_counted=talon_counted,
        demanded=demanded,
        replacements=replacements,
        reconciliation_text=count_verdict(
            {"missing": reconciliation.missing, "extra": reconciliation.extra}
        )
        if reconciliation
        else "",
        anomalies=anomalies("shoes.pack", pack.pk),
        player_may_shuffle=bool(rules and rules.player_may_shuffle),
        burn=rules.burn if rules else 0,
        may=may,
        verify_form=bound(outcome, "verify", VerifyForm()),
        open_form=bound(outcome, "open", OpenForm(pack=pack)),
        shuffle_form=bound(outcome, "shuffle", ShuffleForm()),
        cut_form=bound(outcome, "cut", CutForm()),
        scan_form=bound(outcome, "pass-scanned", PassForm(initial={"method": "scanned"})),
        count_form=bound(outcome, "pass-counted", PassForm(initial={"method": "counted"})),
        replace_form=bound(outcome, "replace", ReplaceForm()),
        retire_form=bound(outcome, "retire", CardGrid(prefix="retire")),
        destroy_form=bound(outcome, "destroy", DestroyForm()),
    )


def pack_act(request: HttpRequest, pack_id: int, act_name: str) -> HttpResponse:
    found = _pack(request, pack_id)
    if found is None:
        return refused(request)
    back = reverse("admin:pit-pack", args=[found.pk])
    if request.method != "POST":
        return HttpResponseRedirect(back)
    user, p, post = request.user, found.pk, request.POST
    said: Any
    if act_name == "store":
        outcome = act("store", forms.Form(post), lambda data: pack_store(actor=user, pack_id=p))
        said = _said(gettext_lazy("Rangé en magasin."))
    elif act_name == "verify":
        outcome = act(
            "verify",
            VerifyForm(post),
            lambda data: seal_verify(actor=user, pack_id=p, **data),
        )
        said = _said_verified
    elif act_name == "open":
        outcome = act(
            "open",
            OpenForm(post, pack=found),
            lambda data: pack_open(actor=user, pack_id=p, shift_id=data["shift"].pk),
        )
        said = _said(gettext_lazy("Ouvert à la table."))
    elif act_name == "shuffle":
        outcome = act(
            "shuffle",
            ShuffleForm(post),
            lambda data: pack_shuffle(actor=user, pack_id=p, player=data["player"]),
        )
        said = _said(gettext_lazy("Mélange enregistré."))
    elif act_name == "cut":
        outcome = act(
            "cut",
            CutForm(post),
            lambda data: pack_cut(
                actor=user, pack_id=p, cut_by=data["cut_by"], burn=_codes(data["burn"])
            ),
        )
        said = _said(gettext_lazy("Coupé : le jeu est en jeu."))
    elif act_name == "pass":
        form = PassForm(post)
        name = (
            f"pass-{post.get('method')}"
            if post.get("method") in ("scanned", "counted")
            else "pass-scanned"
        )
        outcome = act(
            name,
            form,
            lambda data: cards_pass(
                actor=user, pack_id=p, undealt=form.undealt_cards(), method=data["method"]
            ),
        )
        said = _said_passed
    elif act_name == "replace":
        outcome = act(
            "replace",
            ReplaceForm(post),
            lambda data: replacement_demand(
                actor=user, pack_id=p, demanded_by=data["demanded_by"], side=data["side"]
            ),
        )
        said = _said(gettext_lazy("Un jeu neuf est demandé : celui-ci est retiré du jeu."))
    elif act_name == "retire":
        grid = CardGrid(post, prefix="retire")
        outcome = act(
            "retire",
            grid,
            lambda data: pack_retire(actor=user, pack_id=p, counted=grid.counted()),
        )
        said = _said_retired
    elif act_name == "destroy":
        outcome = act(
            "destroy",
            DestroyForm(post),
            lambda data: pack_destroy(actor=user, pack_id=p, remarks=data["remarks"]),
        )
        said = _said(gettext_lazy("Détruit devant le commissaire."))
    else:
        raise Http404(act_name)
    return answer(
        request,
        outcome,
        back=back,
        said=said,
        again=lambda failed: _pack_page(request, found, failed),
    )


def _said(words: Any) -> Any:
    """A success said in words that need nothing from the act's result (marked lazily)."""
    return lambda result: str(words)


def _said_verified(verification: SealVerification) -> str:
    return _("Scellé %(seal)s : %(verdict)s.") % {
        "seal": verification.seal_number_read,
        "verdict": verification.get_verdict_display(),
    }


def _said_passed(talon: Any) -> str:
    if talon.balanced:
        return _("Les cartes passent : %(n)s cartes restantes, le compte est juste.") % {
            "n": len(talon.cards)
        }
    return _(
        "Les cartes passent : %(n)s cartes restantes ; le compte n'est pas juste, signalé."
    ) % {"n": len(talon.cards)}


def _said_retired(reconciliation: Any) -> str:
    if reconciliation.balanced:
        return _("Jeu retiré : le recomptage est juste.")
    return _("Jeu retiré : le recomptage n'est pas juste, signalé.")
