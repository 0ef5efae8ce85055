"""The decision's form in the admin: the articles, the reasoning, the findings and the corrections
ordered, in ordinary fields (a row per stake of the contested coup, or the rows the contested
round's game offers, ``games.py``; a few rows of corrections), never JSON to type. It produces the
arguments of ``dispute_decide``, the same as the API's: ``findings`` ``[{"stake": id,
"chance"|"amount"|"insured"|"on_refait": …}, …]`` (each row's ``finding()``) and ``corrections``
``[[from, to, amount]]`` (None: the engine's)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django import forms
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _

from casino import shown
from casino.disputes import services
from casino.disputes.games import game_disputes
from casino.disputes.models import Dispute
from casino.floor.models import Account, Stake
from casino.pit.cage import minor_units
from casino.pit.table_view import CHANCE_WORDS

UNCHANGED = ("", "—")
# An amount as people type it, in the page's language: 12,50 in French, 12.50 in English.
MONEY = {
    "max_digits": 14,
    "decimal_places": 2,
    "min_value": Decimal("0.01"),
    "localize": True,
    "widget": forms.TextInput(attrs={"inputmode": "decimal", "size": 10}),
}


class FindingForm(forms.Form):
    """One stake as the decider found it; a field left blank is as recorded."""

    stake = forms.TypedChoiceField(label=_("mise"), coerce=int, choices=[])
    chance = forms.ChoiceField(label=_("chance constatée"), required=False, choices=[UNCHANGED])
    amount = forms.DecimalField(label=_("montant constaté"), required=False, **MONEY)
    insured = forms.TypedChoiceField(
        label=_("assurée"),
        required=False,
        empty_value=None,
        coerce=lambda v: v == "yes",
        choices=[UNCHANGED, ("yes", _("oui")), ("no", _("non"))],
    )
    on_refait = forms.ChoiceField(
        label=_("au refait"),
        required=False,
        choices=[UNCHANGED, ("prison", _("en prison")), ("half", _("moitié"))],
    )

    def __init__(self, *args: Any, stakes: list[tuple[int, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["stake"].choices = stakes  # type: ignore[attr-defined]
        self.fields["chance"].choices = [UNCHANGED, *CHANCE_WORDS.items()]  # type: ignore[attr-defined]

    def finding(self) -> dict[str, Any] | None:
        """What this row says the record got wrong (None: nothing)."""
        data = self.cleaned_data
        found: dict[str, Any] = {}
        if data.get("chance"):
            found["chance"] = data["chance"]
        if data.get("amount") is not None:
            found["amount"] = minor_units(data["amount"])
        if data.get("insured") is not None:
            found["insured"] = data["insured"]
        if data.get("on_refait"):
            found["on_refait"] = data["on_refait"]
        return {"stake": data["stake"], **found} if found else None


class CorrectionForm(forms.Form):
    """One movement the decider orders instead of the engine's: from an account to another."""

    source = forms.ChoiceField(label=_("compte de départ"), required=False, choices=[])
    target = forms.ChoiceField(label=_("compte d'arrivée"), required=False, choices=[])
    amount = forms.DecimalField(label=_("montant"), required=False, **MONEY)

    def __init__(self, *args: Any, accounts: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name in ("source", "target"):
            self.fields[name].choices = [UNCHANGED, *accounts]  # type: ignore[attr-defined]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        given = [data.get("source"), data.get("target"), data.get("amount")]
        if any(v not in (None, "") for v in given) and not all(v not in (None, "") for v in given):
            raise forms.ValidationError(
                _("une correction a un compte de départ, un compte d'arrivée et un montant")
            )
        return data

    def correction(self) -> list[Any] | None:
        data = self.cleaned_data
        if not data.get("source"):
            return None
        return [data["source"], data["target"], minor_units(data["amount"])]


class Rows(forms.BaseFormSet):  # type: ignore[type-arg]
    """A formset that carries its title and the keyword arguments of its rows."""

    title: Any = ""
    help: Any = ""


FindingRows = forms.formset_factory(FindingForm, formset=Rows, extra=0)


def stake_rows(rows: Any, data: Any, stakes: list[tuple[int, str]]) -> Any:
    """A row per stake of the contested round, ``rows`` the formset of its game's stakes."""
    found = rows(
        data,
        prefix="findings",
        initial=[{"stake": pk} for pk, _label in stakes],
        form_kwargs={"stakes": stakes},
    )
    found.title = _("Les mises telles que constatées")
    found.help = _("Laissez vide ce que l'enregistrement dit juste.")
    return found


CorrectionRows = forms.formset_factory(CorrectionForm, formset=Rows, extra=3)


class DecideForm(forms.Form):
    articles = forms.MultipleChoiceField(
        label=_("articles appliqués"), widget=forms.CheckboxSelectMultiple
    )
    reasoning = forms.CharField(label=_("motifs"), widget=forms.Textarea(attrs={"rows": 4}))
    no_correction = forms.BooleanField(
        label=_("n'ordonner aucune correction"),
        required=False,
        help_text=_("s'écarter de la règle sans rien déplacer ; dites pourquoi ci-dessous"),
    )
    override_reason = forms.CharField(
        label=_("motif de l'écart"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_("si les corrections ordonnées ne sont pas celles de la règle"),
    )

    def __init__(self, data: Any = None, *, dispute: Dispute) -> None:
        super().__init__(data)
        language = "en" if (get_language() or "").startswith("en") else "fr"
        self.fields["articles"].choices = [  # type: ignore[attr-defined]
            (a["number"], f"{a['number']}. {a.get(language) or a['fr']}")
            for a in dispute.reglement.articles
        ]
        game = game_disputes(dispute.subject_name())
        self.findings: Any = None  # the stakes as found, when the round has any
        if game is not None:
            self.formsets = game.finding_rows(dispute, data)
            self.findings = next((f for f in self.formsets if f.prefix == "findings"), None)
        else:
            stakes = _stakes(dispute)
            self.findings = stake_rows(FindingRows, data, stakes)
            self.formsets = [self.findings] if stakes else []
        self.corrections = CorrectionRows(
            data, prefix="corrections", form_kwargs={"accounts": _accounts(dispute)}
        )
        self.corrections.title = _("Corrections, si autres que celles de la règle")
        self.corrections.help = _(
            "Vide : les corrections que la règle calcule avec les faits constatés."
        )
        self.formsets.append(self.corrections)

    def is_valid(self) -> bool:
        return all([super().is_valid(), *(f.is_valid() for f in self.formsets)])

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        ordered = [f.correction() for f in self.corrections if f.is_valid()]
        return {
            "articles": data.get("articles"),
            "reasoning": data.get("reasoning"),
            "override_reason": data.get("override_reason") or "",
            "findings": [
                f.finding()
                for rows in self.formsets
                if rows is not self.corrections
                for f in rows
                if f.is_valid() and f.finding()
            ],
            "corrections": [] if data.get("no_correction") else ([c for c in ordered if c] or None),
        }


def _stakes(dispute: Dispute) -> list[tuple[int, str]]:
    """The stakes of the contested coup (none when the dispute is not about a played coup)."""
    coup = services.contested_coup_of(dispute.subject_name(), dispute.subject())
    if coup is None:
        return []
    stakes = Stake.objects.filter(coup=coup, withdrawal__isnull=True).select_related("holder")
    return [
        (s.pk, f"{s.ref} · {s.holder.code} · {s.chance} {shown.money(s.amount)}") for s in stakes
    ]


def _accounts(dispute: Dispute) -> list[tuple[str, str]]:
    """The accounts a correction may move between: the table's, and the patrons'."""
    shift = dispute.seance()
    table = shift.table if shift is not None else None
    accounts = Account.objects.filter(table=table) | Account.objects.filter(
        kind=Account.Kind.PATRON
    )
    return [(a.code, a.code) for a in accounts.order_by("code")]
