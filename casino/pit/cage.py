"""The cage's page: fills and credits waiting for the cage's signature, those waiting for the
table's, a fill or a credit recorded for a séance, the packs the card room holds for the
cashier, and the patrons who play from an account of the house (at the cercle): their balances,
their buy-ins and cash-outs, the cashier's acts (casino/floor/cage.py). Fills and credits are
the séance's too: its page (casino/pit/seance.py) uses the same forms and acts.

A fill (cage → table) or a credit (table → cage) is recorded by one side, the cashier or the
chef de partie on duty at that séance (``transfer_record``), and moves money only when the other
side signs it in their own session (``transfer_countersign``), or declines it with a reason.
Which side a person signs for, and whether they may, is the service's to say.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django import forms
from django.db.models import QuerySet, Sum
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from casino.floor.cage import patron_buy_in, patron_cash_out
from casino.floor.models import Account, CashTransfer, Movement, Shift
from casino.floor.play.alliance.models import CercleSeat
from casino.floor.services import transfer_countersign, transfer_record
from casino.people.roles import Role
from casino.people.services import roles_of
from casino.pit.access import CAGE_AND_PIT, holds, refused
from casino.pit.acting import Outcome, act, answer, bound
from casino.pit.pages import page
from casino.pit.templatetags.pit_cash import money, person
from shoes.models import Pack, PackState

KINDS = [
    (CashTransfer.Kind.FILL.value, gettext_lazy("apport (la caisse donne à la table)")),
    (CashTransfer.Kind.CREDIT.value, gettext_lazy("retour (la table rend à la caisse)")),
]


class TransferForm(forms.Form):
    kind = forms.ChoiceField(label=gettext_lazy("nature"), choices=KINDS)
    amount = forms.DecimalField(
        label=gettext_lazy("montant"),
        max_digits=14,
        decimal_places=2,
        widget=forms.NumberInput(attrs={"step": "0.01", "min": "0.01"}),
    )


class CageTransferForm(TransferForm):
    """On the cage's page the cashier also says for which séance."""

    shift = forms.ModelChoiceField(label=gettext_lazy("séance"), queryset=Shift.objects.none())

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["shift"]
        field.queryset = (  # type: ignore[attr-defined]
            Shift.objects.filter(closed_at__isnull=True)
            .select_related("table")
            .order_by("table__number")
        )
        field.label_from_instance = lambda s: str(s.table)  # type: ignore[attr-defined]
        self.order_fields(["shift", "kind", "amount"])


class BuyInForm(forms.Form):
    """A patron changes money at the cage: it enters his account (made at his first buy-in)."""

    patron = forms.CharField(label=gettext_lazy("carte de patron n°"), max_length=48)
    name = forms.CharField(label=gettext_lazy("nom"), max_length=120, required=False)
    amount = forms.DecimalField(
        label=gettext_lazy("montant"),
        max_digits=14,
        decimal_places=2,
        widget=forms.NumberInput(attrs={"step": "0.01", "min": "0.01"}),
    )


class CashOutForm(forms.Form):
    """A patron is paid out: part of his balance, or all of it when no amount is typed."""

    patron = forms.CharField(label=gettext_lazy("carte de patron n°"), max_length=48)
    amount = forms.DecimalField(
        label=gettext_lazy("montant (vide : tout son solde)"),
        max_digits=14,
        decimal_places=2,
        required=False,
        widget=forms.NumberInput(attrs={"step": "0.01", "min": "0.01"}),
    )


class SignForm(forms.Form):
    transfer = forms.IntegerField(widget=forms.HiddenInput)
    decision = forms.ChoiceField(choices=[("sign", "sign"), ("decline", "decline")])
    remark = forms.CharField(label=gettext_lazy("motif"), max_length=200, required=False)


def minor_units(amount: Decimal) -> int:
    """An amount typed in the currency's units (two decimals at most: the form says so) as
    minor units, exactly: Decimal arithmetic, no float."""
    return int(amount * 100)


@dataclass(frozen=True)
class Transfer:
    """A fill or a credit as the pages show it: who recorded it for which side, and where it
    stands (waiting for the other side, signed, declined)."""

    record: CashTransfer
    side: str  # "cage" or "table": the side that recorded it

    @property
    def signature(self) -> Any:
        return getattr(self.record, "countersignature", None)

    @property
    def kind(self) -> str:
        return _("apport") if self.record.kind == CashTransfer.Kind.FILL else _("retour")

    @property
    def waiting_for(self) -> str | None:
        """The side whose signature it waits for, or None once signed or declined."""
        if self.signature is not None:
            return None
        return "table" if self.side == "cage" else "cage"

    @property
    def state(self) -> str:
        signature = self.signature
        if signature is None:
            return (
                _("attend la signature de la table")
                if self.side == "cage"
                else _("attend la signature de la caisse")
            )
        if signature.signed:
            return _("signé par %(person)s") % {"person": person(signature.by)}
        return _("refusé par %(person)s : %(remark)s") % {
            "person": person(signature.by),
            "remark": signature.remark,
        }


def transfers(queryset: QuerySet[CashTransfer]) -> list[Transfer]:
    rows = list(
        queryset.select_related("shift__table", "recorded_by", "countersignature__by").order_by(
            "at", "id"
        )
    )
    cashiers = {
        row.recorded_by_id
        for row in rows
        if Role.CAISSIER in roles_of(row.recorded_by)  # a handful of people: one query each
    }
    return [Transfer(row, "cage" if row.recorded_by_id in cashiers else "table") for row in rows]


# --- the acts, shared with the séance's page ----------------------------------------------------


def record(request: HttpRequest, shift: Shift | None) -> tuple[Outcome, Any]:
    """A fill or a credit recorded for ``shift`` (on the cage's page: the séance chosen)."""
    form: TransferForm = TransferForm(request.POST) if shift else CageTransferForm(request.POST)
    outcome = act(
        "transfer",
        form,
        lambda data: transfer_record(
            actor=request.user,
            shift_id=(shift or data["shift"]).pk,
            kind=data["kind"],
            amount=minor_units(data["amount"]),
        ),
    )
    return outcome, _said_recorded


def sign(request: HttpRequest) -> tuple[Outcome, Any]:
    """The other side signs a fill or a credit, or declines it with a reason."""
    outcome = act(
        "sign",
        SignForm(request.POST),
        lambda data: transfer_countersign(
            actor=request.user,
            transfer_id=data["transfer"],
            signed=data["decision"] == "sign",
            remark=data["remark"],
        ),
    )
    return outcome, _said_signed


def _said_recorded(transfer: CashTransfer) -> str:
    words = (
        _("Apport de %(amount)s enregistré pour %(table)s ; il attend la seconde signature.")
        if transfer.kind == CashTransfer.Kind.FILL
        else _("Retour de %(amount)s enregistré pour %(table)s ; il attend la seconde signature.")
    )
    return words % {"amount": money(transfer.amount), "table": transfer.shift.table}


def _said_signed(signature: Any) -> str:
    transfer = signature.transfer
    if not signature.signed:
        return _("Transfert n° %(transfer)s refusé.") % {"transfer": transfer.pk}
    words = (
        _("Apport de %(amount)s signé : la table le reçoit.")
        if transfer.kind == CashTransfer.Kind.FILL
        else _("Retour de %(amount)s signé : la caisse le reçoit.")
    )
    return words % {"amount": money(transfer.amount)}


# --- the patrons' accounts (the cercle's players) ------------------------------------------------


@dataclass(frozen=True)
class Patron:
    code: str
    name: str
    balance: int
    seat: str  # where he sits now, or ""


def patrons() -> list[Patron]:
    """Every patron's account with its balance (two sums over the ledger, not one per patron)
    and the cercle seat he holds now."""
    accounts = list(Account.objects.filter(kind=Account.Kind.PATRON).order_by("code"))
    came_in = dict(
        Movement.objects.filter(debit__in=accounts)
        .values("debit")
        .annotate(s=Sum("amount"))
        .values_list("debit", "s")
    )
    went_out = dict(
        Movement.objects.filter(credit__in=accounts)
        .values("credit")
        .annotate(s=Sum("amount"))
        .values_list("credit", "s")
    )
    seats = {
        s.patron_id: _("place %(seat)s, %(table)s") % {"seat": s.seat, "table": s.shift.table}
        for s in CercleSeat.objects.filter(
            patron__in=accounts, end__isnull=True, shift__closed_at__isnull=True
        ).select_related("shift__table")
    }
    return [
        Patron(
            a.code,
            a.name,
            int(came_in.get(a.pk, 0) - went_out.get(a.pk, 0)),
            seats.get(a.pk, ""),
        )
        for a in accounts
    ]


def buy_in(request: HttpRequest) -> tuple[Outcome, Any]:
    outcome = act(
        "buy-in",
        BuyInForm(request.POST),
        lambda data: patron_buy_in(
            actor=request.user,
            patron=data["patron"],
            amount=minor_units(data["amount"]),
            name=data["name"],
        ),
    )
    return outcome, _said_bought_in


def cash_out(request: HttpRequest) -> tuple[Outcome, Any]:
    outcome = act(
        "cash-out",
        CashOutForm(request.POST),
        lambda data: patron_cash_out(
            actor=request.user,
            patron=data["patron"],
            amount=None if data["amount"] is None else minor_units(data["amount"]),
        ),
    )
    return outcome, _said_cashed_out


def _said_bought_in(movement: Movement) -> str:
    return _("%(patron)s a changé %(amount)s : ils sont sur son compte.") % {
        "patron": movement.debit.code.removeprefix("patron:"),
        "amount": money(movement.amount),
    }


def _said_cashed_out(movement: Movement) -> str:
    return _("%(patron)s est payé %(amount)s.") % {
        "patron": movement.credit.code.removeprefix("patron:"),
        "amount": money(movement.amount),
    }


# --- the cage's page -----------------------------------------------------------------------------


def cage(request: HttpRequest) -> HttpResponse:
    if not holds(request.user, *CAGE_AND_PIT):
        return refused(request)
    return _cage_page(request)


def _cage_page(request: HttpRequest, outcome: Outcome | None = None) -> HttpResponse:
    open_transfers = transfers(CashTransfer.objects.filter(shift__closed_at__isnull=True))
    return page(
        request,
        "pit/cage.html",
        title=_("La caisse"),
        outcome=outcome,
        for_cage=[t for t in open_transfers if t.waiting_for == "cage"],
        for_table=[t for t in open_transfers if t.waiting_for == "table"],
        done=[t for t in open_transfers if t.waiting_for is None],
        transfer_form=bound(outcome, "transfer", CageTransferForm()),
        buy_in_form=bound(outcome, "buy-in", BuyInForm()),
        cash_out_form=bound(outcome, "cash-out", CashOutForm()),
        patrons=patrons(),
        to_store=Pack.objects.filter(state=PackState.RECEIVED).order_by("received_at"),
        in_store=Pack.objects.filter(state__in=[PackState.IN_STORE, PackState.VERIFIED]).count(),
        may_cage=holds(request.user, Role.CAISSIER),
    )


def cage_act(request: HttpRequest, act_name: str) -> HttpResponse:
    """The cage's forms: ``transfer`` (a fill or a credit for a séance), ``sign``, and a
    patron's ``buy-in`` and ``cash-out`` (the cashier's acts, the services say)."""
    if not holds(request.user, *CAGE_AND_PIT):
        return refused(request)
    back = reverse("admin:pit-cage")
    if request.method != "POST":
        return HttpResponseRedirect(back)
    if act_name == "transfer":
        outcome, said = record(request, None)
    elif act_name == "sign":
        outcome, said = sign(request)
    elif act_name == "buy-in":
        outcome, said = buy_in(request)
    elif act_name == "cash-out":
        outcome, said = cash_out(request)
    else:
        raise Http404(act_name)
    return answer(
        request, outcome, back=back, said=said, again=lambda failed: _cage_page(request, failed)
    )
