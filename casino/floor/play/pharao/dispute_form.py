"""Pharao's rows of the admin's decision form (``casino/disputes/decide_form.py``): a row per
stake of the contested taille (its rank, its amount as found) and rows for draws as found, in
ordinary fields. Each row's ``finding()`` is what the API's findings say: ``{"stake": id,
"rank"|"amount": …}``, ``{"draw": n, "bank"|"players": code}``."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from casino import shown
from casino.disputes.decide_form import MONEY, UNCHANGED, Rows, stake_rows
from casino.floor.play.pharao.models import RANKS, PharaoStake
from casino.pit.cage import minor_units


class PharaoFindingForm(forms.Form):
    """A Pharao stake as the decider found it: its rank or its amount; blank is as recorded."""

    stake = forms.TypedChoiceField(label=_("mise"), coerce=int, choices=[])
    rank = forms.ChoiceField(label=_("rang constaté"), required=False, choices=[UNCHANGED])
    amount = forms.DecimalField(label=_("montant constaté"), required=False, **MONEY)

    def __init__(self, *args: Any, stakes: list[tuple[int, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["stake"].choices = stakes  # type: ignore[attr-defined]
        self.fields["rank"].choices = [UNCHANGED, *RANKS]  # type: ignore[attr-defined]

    def finding(self) -> dict[str, Any] | None:
        data = self.cleaned_data
        found: dict[str, Any] = {}
        if data.get("rank"):
            found["rank"] = data["rank"]
        if data.get("amount") is not None:
            found["amount"] = minor_units(data["amount"])
        return {"stake": data["stake"], **found} if found else None


class DrawFindingForm(forms.Form):
    """A Pharao draw's cards as the decider found them (``KS``, ``10H``); blank is as recorded.
    The recomputation checks the cards and the draw (its refusal names the field)."""

    draw = forms.IntegerField(label=_("tirage"), required=False, min_value=1, max_value=26)
    bank = forms.CharField(label=_("carte de la banque (gauche)"), required=False, max_length=3)
    players = forms.CharField(label=_("carte des joueurs (droite)"), required=False, max_length=3)

    def finding(self) -> dict[str, Any] | None:
        data = self.cleaned_data
        cards = {side: data[side].strip().upper() for side in ("bank", "players") if data.get(side)}
        if data.get("draw") is None and not cards:
            return None
        return {"draw": data.get("draw"), **cards}


PharaoFindingRows = forms.formset_factory(PharaoFindingForm, formset=Rows, extra=0)
DrawFindingRows = forms.formset_factory(DrawFindingForm, formset=Rows, extra=2)


def finding_rows(dispute: Any, data: Any) -> list[Any]:
    """A row per stake of the contested taille, then two rows for draws as found."""
    taille = dispute.subject().taille
    stakes = [
        (s.pk, f"{s.ref} · {s.holder.code} · {s.rank} {shown.money(s.amount)}")
        for s in PharaoStake.objects.filter(taille=taille).select_related("holder").order_by("id")
    ]
    rows = [stake_rows(PharaoFindingRows, data, stakes)] if stakes else []
    draws = DrawFindingRows(data, prefix="draws")
    draws.title = _("Les tirages tels que constatés")
    draws.help = _("Un tirage dont une carte a été mal enregistrée : ses cartes vues.")
    return [*rows, draws]
