"""The séance's pages (issue 12, item 2): a table's opening counts and the opening itself, then
the séance: its staff on duty, its fills and credits, its closing count and rundown, its close.

Who does what is the services' to decide (casino/floor/services.py): the croupier counts the
float (``count_record``), the director or a comité member countersigns it in their own session
(``count_countersign``), the chef de partie opens the séance on the countersigned count
(``shift_open``), puts staff on and off duty (``duty_assign``, ``duty_end``) and closes it
(``shift_close``); fills and credits are recorded by one side and signed by the other
(casino/pit/cage.py). A page shows each form to those whose role may use it; the service
refuses anyone else, with its reason, and records nothing.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django import forms
from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from audit.models import Anomaly
from casino.floor.models import Coup, Duty, FloatCount, Shift, Table
from casino.floor.registry import game_module
from casino.floor.services import (
    CHIP_VALUES,
    count_countersign,
    count_record,
    duty_assign,
    duty_end,
    rundown,
    shift_close,
    shift_open,
)
from casino.people.roles import Role
from casino.pit import cage
from casino.pit.access import CAGE_AND_PIT, FLOOR_READERS, holds, refused, worked
from casino.pit.acting import Outcome, act, answer, bound
from casino.pit.pages import page
from casino.pit.templatetags.pit_cash import money, person, signed_money
from shoes.services import IN_USE, packs_at

COUNTERSIGNERS = (Role.DIRECTEUR, Role.COMITE)


def people(*roles: Role) -> QuerySet[User]:
    """Active people holding one of ``roles``, by name."""
    return (
        User.objects.filter(groups__name__in=[str(r) for r in roles], is_active=True)
        .distinct()
        .order_by("last_name", "first_name", "username")
    )


# --- the forms -----------------------------------------------------------------------------------


class CountForm(forms.Form):
    """The carnet d'avances: a row per chip value, the number of chips found."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for value in CHIP_VALUES:
            self.fields[f"chips_{value}"] = forms.IntegerField(
                label=money(value),
                required=False,
                widget=forms.NumberInput(
                    attrs={"min": 0, "step": 1, "data-value": value, "class": "chips"}
                ),
            )

    def rows(self) -> list[tuple[int, forms.BoundField]]:
        return [(value, self[f"chips_{value}"]) for value in CHIP_VALUES]

    def chips(self) -> dict[str, int]:
        """The chips found, by value, as typed: a row left empty was not counted, a row typed 0
        was counted and found none (a cercle's fee box is counted empty: ``{"100": 0}``)."""
        found = {str(v): self.cleaned_data.get(f"chips_{v}") for v in CHIP_VALUES}
        return {value: number for value, number in found.items() if number is not None}


class CountChoice(forms.ModelChoiceField):  # type: ignore[type-arg]
    def label_from_instance(self, count: FloatCount) -> str:
        signature = getattr(count, "countersignature", None)
        signed = (
            _("contresigné par %(person)s") % {"person": person(signature.by)}
            if signature
            else _("en attente de contresignature")
        )
        return _("n° %(count)s · %(total)s · %(signed)s") % {
            "count": count.pk,
            "total": money(count.total),
            "signed": signed,
        }


class OpenForm(forms.Form):
    count = CountChoice(label=gettext_lazy("comptage d'ouverture"), queryset=FloatCount.objects)
    tailleur = forms.ModelChoiceField(label=gettext_lazy("tailleur"), queryset=User.objects)
    croupiers = forms.ModelMultipleChoiceField(
        label=gettext_lazy("croupiers"),
        queryset=User.objects,
        required=False,
        widget=forms.CheckboxSelectMultiple,
    )

    def __init__(self, *args: Any, table: Table, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # At a cercle the players deal: the form asks for no tailleur, and one sent all the
        # same goes to the service, which refuses it in its own words.
        self.fields["tailleur"].required = game_module(table.game).tailleur
        self.fields["count"].queryset = opening_counts(table)  # type: ignore[attr-defined]
        self.fields["tailleur"].queryset = people(Role.TAILLEUR)  # type: ignore[attr-defined]
        self.fields["croupiers"].queryset = people(Role.CROUPIER)  # type: ignore[attr-defined]
        self.fields["tailleur"].label_from_instance = person  # type: ignore[attr-defined]
        self.fields["croupiers"].label_from_instance = person  # type: ignore[attr-defined]


class CountersignForm(forms.Form):
    count = forms.IntegerField(widget=forms.HiddenInput)


class DutyForm(forms.Form):
    person = forms.ModelChoiceField(label=gettext_lazy("personne"), queryset=User.objects)
    post = forms.ChoiceField(
        label=gettext_lazy("poste"), choices=Duty.Post.choices, initial=Duty.Post.CROUPIER
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["person"]
        field.queryset = people(Role.TAILLEUR, Role.CROUPIER, Role.CHEF_DE_PARTIE)  # type: ignore[attr-defined]
        field.label_from_instance = person  # type: ignore[attr-defined]


class DutyEndForm(forms.Form):
    duty = forms.IntegerField(widget=forms.HiddenInput)
    # The service asks for the reason; the record holds 40 characters.
    reason = forms.CharField(label=gettext_lazy("motif"), max_length=40, required=False)


class CloseForm(forms.Form):
    count = forms.IntegerField(widget=forms.HiddenInput)


# --- reads ---------------------------------------------------------------------------------------


def opening_counts(table: Table) -> QuerySet[FloatCount]:
    """The table's opening counts no séance has opened on yet, the latest first."""
    return (
        FloatCount.objects.filter(
            table=table, moment=FloatCount.Moment.OPENING, opened__isnull=True
        )
        .select_related("counted_by", "countersignature__by")
        .order_by("-id")
    )


def closing_counts(shift: Shift) -> list[FloatCount]:
    return list(
        shift.closing_counts.select_related("counted_by", "countersignature__by").order_by("id")
    )


def anomalies(subject_type: str, subject_id: int) -> QuerySet[Anomaly]:
    return Anomaly.objects.filter(subject_type=subject_type, subject_id=str(subject_id))


# --- the opening page ----------------------------------------------------------------------------


def _table(value: Any) -> Table | None:
    try:
        return Table.objects.select_related("reglement").get(number=int(value))
    except (TypeError, ValueError, Table.DoesNotExist):
        return None


def seance_open(request: HttpRequest) -> HttpResponse:
    """Choose a table; see its opening counts; count, countersign, open."""
    if not holds(request.user, *FLOOR_READERS):
        return refused(request)
    return _open_page(request, _table(request.GET.get("table")))


def _open_page(
    request: HttpRequest, table: Table | None, outcome: Outcome | None = None
) -> HttpResponse:
    tables = list(Table.objects.order_by("number"))
    in_seance = {
        s.table_id: s
        for s in Shift.objects.filter(closed_at__isnull=True).select_related("opened_by")
    }
    for t in tables:
        t.seance = in_seance.get(t.pk)  # type: ignore[attr-defined]
    context: dict[str, Any] = {"tables": tables, "table": table, "outcome": outcome}
    if table is not None:
        context.update(
            seance=in_seance.get(table.pk),
            counts=opening_counts(table),
            count_form=bound(outcome, "count", CountForm()),
            open_form=bound(outcome, "open", OpenForm(table=table)),
            cercle=not game_module(table.game).tailleur,
            smallest_chip=CHIP_VALUES[-1],
        )
    user = request.user
    return page(
        request,
        "pit/seance_open.html",
        title=_("Ouvrir une séance")
        if table is None
        else _("Ouvrir une séance : %(table)s") % {"table": table},
        may_count=holds(user, Role.CROUPIER),
        may_countersign=holds(user, *COUNTERSIGNERS),
        may_open=holds(user, Role.CHEF_DE_PARTIE),
        **context,
    )


def seance_open_act(request: HttpRequest, act_name: str) -> HttpResponse:
    """The opening page's forms: ``count`` (a croupier), ``countersign`` (the director or a
    comité member), ``open`` (the chef de partie)."""
    if not holds(request.user, *FLOOR_READERS):
        return refused(request)
    if request.method != "POST":
        return HttpResponseRedirect(reverse("admin:pit-seance-open"))
    table = _table(request.POST.get("table"))
    if table is None:
        raise Http404(_("choisissez une table"))
    back = reverse("admin:pit-seance-open") + f"?table={table.number}"
    user = request.user
    if act_name == "count":
        form = CountForm(request.POST)
        outcome = act(
            "count",
            form,
            lambda data: count_record(
                actor=user, table_id=table.pk, moment=FloatCount.Moment.OPENING, chips=form.chips()
            ),
        )
        said = _said_counted
    elif act_name == "countersign":
        outcome = act(
            "countersign",
            CountersignForm(request.POST),
            lambda data: count_countersign(actor=user, count_id=data["count"]),
        )
        said = _said_countersigned
    elif act_name == "open":
        outcome = act(
            "open",
            OpenForm(request.POST, table=table),
            lambda data: shift_open(
                actor=user,
                table=table,
                count_id=data["count"].pk,
                tailleur=data.get("tailleur"),
                croupiers=data["croupiers"],
            ),
        )
        if outcome.done is not None and outcome.done.ok:
            back = reverse("admin:pit-seance", args=[outcome.done.result.pk])
        said = _said_opened
    else:
        raise Http404(act_name)
    return answer(
        request,
        outcome,
        back=back,
        said=said,
        again=lambda failed: _open_page(request, table, failed),
    )


def _said_counted(count: FloatCount) -> str:
    return _("Comptage n° %(count)s enregistré : %(total)s ; il attend sa contresignature.") % {
        "count": count.pk,
        "total": money(count.total),
    }


def _said_countersigned(signature: Any) -> str:
    return _("Comptage n° %(count)s contresigné.") % {"count": signature.count_id}


def _said_opened(shift: Shift) -> str:
    return _("Séance ouverte à %(table)s.") % {"table": shift.table}


# --- the séance ----------------------------------------------------------------------------------


def _may_read(user: Any, shift: Shift) -> bool:
    """Oversight, the pit and the cage read every séance; a dealer those he worked."""
    return holds(user, *CAGE_AND_PIT) or (
        holds(user, Role.TAILLEUR, Role.CROUPIER) and worked(user, shift)
    )


def _shift(shift_id: int) -> Shift:
    return get_object_or_404(
        Shift.objects.select_related("table", "reglement", "opened_by"), pk=shift_id
    )


def seance(request: HttpRequest, shift_id: int) -> HttpResponse:
    shift = _shift(shift_id)
    if not _may_read(request.user, shift):
        return refused(request)
    return _seance_page(request, shift)


def _seance_page(
    request: HttpRequest, shift: Shift, outcome: Outcome | None = None
) -> HttpResponse:
    user = request.user
    duties = list(
        shift.duties.select_related("person", "assigned_by", "end__by").order_by("started_at", "id")
    )
    closings = closing_counts(shift)
    last = closings[-1] if closings else None
    figures = rundown(shift)
    if shift.closed_at is None and last is not None:
        # Before the close the rundown is shown against the latest closing count, signed or
        # not: the chef de partie sees the variance before he certifies it.
        figures = replace(figures, closing=last.total)
    coup_open = Coup.objects.filter(shift=shift).exclude(phase__in=["settled", "cancelled"]).first()
    return page(
        request,
        "pit/seance.html",
        title=_("Séance de %(table)s") % {"table": shift.table},
        shift=shift,
        outcome=outcome,
        opening=shift.float_counts()[0] if shift.opening_count_id else None,
        on_duty=[d for d in duties if not hasattr(d, "end")],
        off_duty=[d for d in duties if hasattr(d, "end")],
        transfers=cage.transfers(shift.transfers.all()),
        closings=closings,
        last_count=last,
        figures=figures,
        rounds=game_module(shift.table.game).rounds_played([shift]).get(shift.pk, 0),
        rounds_word=game_module(shift.table.game).rounds_word,
        coup_open=coup_open,
        packs=packs_at(shift.table_id, *IN_USE),
        anomalies=anomalies("floor.shift", shift.pk),
        duty_form=bound(outcome, "duty", DutyForm()),
        transfer_form=bound(outcome, "transfer", cage.TransferForm()),
        count_form=bound(outcome, "count", CountForm()),
        may_count=holds(user, Role.CROUPIER),
        may_countersign=holds(user, *COUNTERSIGNERS),
        may_chef=holds(user, Role.CHEF_DE_PARTIE),
        may_cage=holds(user, Role.CAISSIER),
    )


def seance_act(request: HttpRequest, shift_id: int, act_name: str) -> HttpResponse:
    """The séance's forms: ``duty`` and ``end`` (the chef de partie on duty), ``transfer`` and
    ``sign`` (the cage and the chef de partie on duty, one each side), ``count`` (a croupier on
    duty), ``countersign`` (the director or a comité member), ``close`` (the chef de partie on
    duty)."""
    shift = _shift(shift_id)
    if not _may_read(request.user, shift):
        return refused(request)
    back = reverse("admin:pit-seance", args=[shift.pk])
    if request.method != "POST":
        return HttpResponseRedirect(back)
    user = request.user
    said: Any
    if act_name == "duty":
        outcome = act(
            "duty",
            DutyForm(request.POST),
            lambda data: duty_assign(
                actor=user, shift_id=shift.pk, person=data["person"], post=data["post"]
            ),
        )
        said = _said_on_duty
    elif act_name == "end":
        outcome = act(
            "end",
            DutyEndForm(request.POST),
            lambda data: duty_end(actor=user, duty_id=data["duty"], reason=data["reason"]),
        )
        said = _said_off_duty
    elif act_name == "transfer":
        outcome, said = cage.record(request, shift)
    elif act_name == "sign":
        outcome, said = cage.sign(request)
    elif act_name == "count":
        form = CountForm(request.POST)
        outcome = act(
            "count",
            form,
            lambda data: count_record(
                actor=user,
                table_id=shift.table_id,
                moment=FloatCount.Moment.CLOSING,
                chips=form.chips(),
            ),
        )
        said = _said_counted
    elif act_name == "countersign":
        outcome = act(
            "countersign",
            CountersignForm(request.POST),
            lambda data: count_countersign(actor=user, count_id=data["count"]),
        )
        said = _said_countersigned
    elif act_name == "close":
        outcome = act(
            "close",
            CloseForm(request.POST),
            lambda data: shift_close(actor=user, shift=shift, count_id=data["count"]),
        )
        said = _said_closed
    else:
        raise Http404(act_name)
    return answer(
        request,
        outcome,
        back=back,
        said=said,
        again=lambda failed: _seance_page(request, shift, failed),
    )


def _said_on_duty(duty: Duty) -> str:
    return _("%(person)s de service comme %(post)s.") % {
        "person": person(duty.person),
        "post": duty.get_post_display(),
    }


def _said_off_duty(end: Any) -> str:
    return _("%(person)s relevé de son service.") % {"person": person(end.duty.person)}


def _said_closed(figures: Any) -> str:
    if figures.variance:
        return _("Séance fermée ; écart de caisse de %(variance)s signalé.") % {
            "variance": signed_money(figures.variance)
        }
    return _("Séance fermée ; la caisse est juste.")
