"""Alliance's rows of the admin's decision form (``casino/disputes/decide_form.py``), in ordinary
fields: a few rows of cards as found (the trick, the place in it, the card), and one row of the
calls as recorded, to be changed where they were wrong (the auction's words in order, the
contract's fields). Each row's ``finding()`` is what the API's findings say: ``{"trick", "place",
"card"}``, ``{"auction": [...], "contract": {...}}``."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from casino.disputes.decide_form import UNCHANGED, Rows
from casino.floor.play.alliance.models import SEATS
from casino.games import alliance as engine
from casino.games.cards import Suit
from casino.games.errors import GameError

WORDS = [c.value for c in engine.Call]


class PlayFindingForm(forms.Form):
    """A card the decider found played at a place of a trick; a row left blank finds nothing."""

    trick = forms.IntegerField(label=_("pli"), required=False, min_value=1, max_value=12)
    place = forms.IntegerField(
        label=_("place dans le pli"),
        required=False,
        min_value=1,
        max_value=SEATS,
        help_text=_("1 : la carte de celui qui entame"),
    )
    card = forms.CharField(label=_("carte jouée"), required=False, max_length=3)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        given = [data.get("trick"), data.get("place"), (data.get("card") or "").strip()]
        if any(v not in (None, "") for v in given) and not all(v not in (None, "") for v in given):
            raise forms.ValidationError(_("une carte constatée a un pli, une place et une carte"))
        return data

    def finding(self) -> dict[str, Any] | None:
        data = self.cleaned_data
        if data.get("trick") is None:
            return None
        return {
            "trick": data["trick"],
            "place": data["place"],
            "card": data["card"].strip().upper(),
        }


def _words(raw: str) -> list[str]:
    return raw.replace(",", " ").lower().split()


class CallFindingForm(forms.Form):
    """The auction and the contract as recorded, shown to be changed where they were wrong; a row
    left as recorded finds nothing."""

    auction = forms.CharField(
        label=_("annonces, dans l'ordre"),
        max_length=400,
        help_text=_("pass, alliance, lever, solo ou hold, séparées par des espaces"),
    )
    trumps = forms.ChoiceField(
        label=_("atout"),
        required=False,
        choices=[UNCHANGED, *((s.value, s.value) for s in Suit)],
    )
    called = forms.CharField(label=_("carte appelée"), required=False, max_length=3)
    turn = forms.IntegerField(
        label=_("carte retournée (lever)"), required=False, min_value=1, max_value=4
    )
    take = forms.TypedChoiceField(
        label=_("prend les cartes de table"),
        required=False,
        empty_value=None,
        coerce=lambda v: v == "yes",
        choices=[UNCHANGED, ("yes", _("oui")), ("no", _("non"))],
    )
    discard = forms.CharField(label=_("écart"), required=False, max_length=40)
    resistance = forms.ChoiceField(label=_("résistance"), required=False, choices=[UNCHANGED])

    def __init__(self, *args: Any, players: list[str], recorded: dict[str, Any], **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.recorded = recorded
        self.fields["resistance"].choices = [UNCHANGED, *((p, p) for p in players)]  # type: ignore[attr-defined]

    def clean_auction(self) -> list[str]:
        words = _words(self.cleaned_data["auction"])
        wrong = [w for w in words if w not in WORDS]
        if wrong:
            raise forms.ValidationError(
                _("%(call)r : pass, alliance, lever, solo ou hold") % {"call": wrong[0]}
            )
        return words

    def contract(self) -> dict[str, Any]:
        """The contract as the fields give it, each key only when given (a solo has no called
        card, a lever no trumps: the replay reads it for the declarer's game)."""
        data = self.cleaned_data
        contract: dict[str, Any] = {}
        for key in ("trumps", "called", "resistance"):
            if data.get(key):
                contract[key] = data[key].strip().upper() if key == "called" else data[key]
        if data.get("turn") is not None:
            contract["turn"] = data["turn"]
        if data.get("take") is not None:
            contract["take"] = data["take"]
        if data.get("discard"):
            contract["discard"] = data["discard"].replace(",", " ").upper().split()
        return contract

    def finding(self) -> dict[str, Any] | None:
        found: dict[str, Any] = {}
        if self.cleaned_data["auction"] != self.recorded["auction"]:
            found["auction"] = self.cleaned_data["auction"]
        contract = self.contract()
        if _normal(contract) != _normal(self.recorded["contract"]):
            found["contract"] = contract
        return found or None


def _normal(contract: dict[str, Any]) -> Any:
    """A contract as the engine reads it, so that a solo without résistance given as blank is the
    one recorded with ``null``; one it cannot read stays as given (the replay will say why)."""
    try:
        return engine.contract_dict(engine.contract_from_dict(contract))
    except (KeyError, ValueError, TypeError, GameError):
        return contract


def _initial(contract: dict[str, Any]) -> dict[str, Any]:
    """The contract's fields as the form shows them."""
    shown = {k: v for k, v in contract.items() if v is not None}
    if "take" in shown:
        shown["take"] = "yes" if shown["take"] else "no"
    if "discard" in shown:
        shown["discard"] = " ".join(shown["discard"])
    return shown


PlayFindingRows = forms.formset_factory(PlayFindingForm, formset=Rows, extra=3)
CallFindingRows = forms.formset_factory(CallFindingForm, formset=Rows, extra=0, max_num=1)


def finding_rows(dispute: Any, data: Any) -> list[Any]:
    """Three rows of cards as found, then the calls as recorded."""
    from casino.floor.play.alliance.selectors import deal_document

    deal = dispute.subject()
    document = deal_document(deal)
    recorded = {"auction": document["auction"], "contract": document["contract"]}
    plays = PlayFindingRows(data, prefix="plays")
    plays.title = _("Les cartes jouées telles que constatées")
    plays.help = _("Une carte mal enregistrée : le pli (1 le premier), sa place, la carte jouée.")
    calls = CallFindingRows(
        data,
        prefix="calls",
        initial=[{"auction": " ".join(recorded["auction"]), **_initial(recorded["contract"])}],
        form_kwargs={"players": list(deal.players), "recorded": recorded},
    )
    calls.title = _("Les annonces et le contrat tels que constatés")
    calls.help = _("Tels qu'enregistrés : changez ce qui a été mal enregistré.")
    return [plays, calls]
