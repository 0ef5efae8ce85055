"""Trente-et-Quarante's admin pages: coups with their cards as the pit reads them, stakes,
settlements, movements and disputes; a séance's coups on its page (``SHIFT_INLINES``)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from casino import shown
from casino.admin_base import IndexedHistoryAdmin, RecordInline
from casino.floor.admin import ShiftFilter, movement_lines
from casino.floor.models import Movement
from casino.floor.play.trente_et_quarante.models import Coup, CoupResult, Settlement, Stake
from casino.floor.play.trente_et_quarante.selectors import coup_movements
from casino.floor.selectors import row_html
from casino.games.trente_et_quarante import Result
from casino.pit.table_view import OUTCOME_WORDS
from casino.readable import transfer

RESULT_WORDS = {
    "noir": gettext_lazy("noir"),
    "rouge": gettext_lazy("rouge"),
    "apres": gettext_lazy("après"),
    "couleur": gettext_lazy("couleur"),
    "inverse": gettext_lazy("inverse"),
}


def result_words(result: CoupResult) -> str:
    """A coup's result as the room says it: the winning row, then couleur or inverse."""
    words = [str(RESULT_WORDS.get(w, w)) for w in (result.result, result.couleur) if w]
    said = ", ".join(words)
    return _("%(result)s (coup nul)") % {"result": said} if result.void else said


def outcome_word(code: str) -> str:
    return str(OUTCOME_WORDS.get(code, code))


# What a coup's row shows (its table, its pack, its result), read with the rows: not a query each.
COUP_ROW = ("shift__table", "pack", "outcome")


class ShiftCoupInline(RecordInline):
    model = Coup
    fields = ["number", "pack", "phase", "outcome_line"]
    show_change_link = True
    verbose_name_plural = gettext_lazy("coups")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Coup]:
        return super().get_queryset(request).select_related(*COUP_ROW)  # a séance's hundreds

    @admin.display(description=gettext_lazy("résultat"))
    def outcome_line(self, coup: Coup) -> str:
        o = getattr(coup, "outcome", None)
        if o is None:
            return "–"
        return f"{o.noir_total} – {o.rouge_total} · {result_words(o)}"


class StakeInline(RecordInline):
    model = Stake
    fields = ["ref", "holder", "chance", "sum", "insured", "on_refait", "placed_by", "placed_at"]

    @admin.display(description=gettext_lazy("montant"))
    def sum(self, stake: Stake) -> str:
        return shown.money(stake.amount)


class SettlementInline(RecordInline):
    model = Settlement
    fields = ["stake", "issue", "paid_", "returned_", "to_bank_", "premium_", "held_", "level"]

    @admin.display(description=gettext_lazy("issue"))
    def issue(self, settlement: Settlement) -> str:
        return outcome_word(settlement.outcome)

    @admin.display(description=gettext_lazy("payé"))
    def paid_(self, settlement: Settlement) -> str:
        return shown.money(settlement.paid)

    @admin.display(description=gettext_lazy("rendu"))
    def returned_(self, settlement: Settlement) -> str:
        return shown.money(settlement.returned)

    @admin.display(description=gettext_lazy("à la banque"))
    def to_bank_(self, settlement: Settlement) -> str:
        return shown.money(settlement.to_bank)

    @admin.display(description=gettext_lazy("prime"))
    def premium_(self, settlement: Settlement) -> str:
        return shown.money(settlement.premium)

    @admin.display(description=gettext_lazy("en prison"))
    def held_(self, settlement: Settlement) -> str:
        return shown.money(settlement.held)


class ResultFilter(admin.SimpleListFilter):
    """The engine's results (``Result``), not the values found among the coups: finding those read
    every coup's result on every page of the list (a DISTINCT over the month's 200,000, 38 ms)."""

    title = gettext_lazy("résultat")
    parameter_name = "outcome__result"

    def lookups(self, request: Any, model_admin: Any) -> list[tuple[str, str]]:
        return [(result.value, result.value) for result in Result]

    def queryset(self, request: Any, queryset: QuerySet[Coup]) -> QuerySet[Coup]:
        return queryset.filter(outcome__result=self.value()) if self.value() else queryset


@admin.register(Coup)
class CoupAdmin(IndexedHistoryAdmin):
    list_display = ["__str__", "phase", "result", "totals", "opened_at"]
    list_select_related = COUP_ROW
    list_filter = ["shift__table", "phase", ResultFilter, ("shift", ShiftFilter)]
    date_hierarchy = "opened_at"
    inlines = [StakeInline, SettlementInline]
    readonly_fields = [
        "shift",
        "pack",
        "number",
        "reglement",
        "phase",
        "opened_at",
        "opened_by",
        "noir",
        "rouge",
        "result",
        "announcement",
        "movements",
        "disputes",
    ]
    fields = readonly_fields

    def _outcome(self, coup: Coup) -> CoupResult | None:
        return getattr(coup, "outcome", None)

    @admin.display(description=gettext_lazy("résultat"))
    def result(self, coup: Coup) -> str:
        o = self._outcome(coup)
        return "–" if o is None else result_words(o)

    @admin.display(description=gettext_lazy("noir – rouge"))
    def totals(self, coup: Coup) -> str:
        o = self._outcome(coup)
        return "–" if o is None else f"{o.noir_total} – {o.rouge_total}"

    @admin.display(description=gettext_lazy("première rangée (noir)"))
    def noir(self, coup: Coup) -> str:
        o = self._outcome(coup)
        return "–" if o is None else row_html(o.noir_cards, o.noir_total, o.announcement["noir"])

    @admin.display(description=gettext_lazy("seconde rangée (rouge)"))
    def rouge(self, coup: Coup) -> str:
        o = self._outcome(coup)
        return "–" if o is None else row_html(o.rouge_cards, o.rouge_total, o.announcement["rouge"])

    @admin.display(description=gettext_lazy("annonce"))
    def announcement(self, coup: Coup) -> str:
        o = self._outcome(coup)
        if o is None:
            return "–"
        if not o.spoken:
            return o.announcement["result"]
        return _("%(announcement)s — annoncé : « %(spoken)s »") % {
            "announcement": o.announcement["result"],
            "spoken": o.spoken,
        }

    @admin.display(description=gettext_lazy("mouvements"))
    def movements(self, coup: Coup) -> str:
        return movement_lines(coup_movements(coup))

    @admin.display(description=gettext_lazy("contestations"))
    def disputes(self, coup: Coup) -> str:
        """Disputes about the coup or its stakes, with the corrections they ordered: the coup's
        own records above stay as they were."""
        from casino.disputes.models import about_coup

        found = about_coup(coup)
        lines = format_html_join(
            "",
            '<div><a href="{}">{}</a> · {} · {}</div>',
            (
                (
                    reverse("admin:disputes_dispute_change", args=[d.pk]),
                    d,
                    d.get_state_display(),
                    _("corrections : %(moves)s")
                    % {
                        "moves": "; ".join(
                            transfer(m.credit.code, m.debit.code, m.amount)
                            for m in Movement.objects.filter(reference=d.reference)
                        )
                        or "–"
                    },
                )
                for d in found
            ),
        )
        raise_url = reverse("admin:disputes_dispute_raise") + f"?subject=coup&subject_id={coup.pk}"
        return format_html('{}<a class="button" href="{}">{}</a>', lines, raise_url, _("Contester"))


SHIFT_INLINES = [ShiftCoupInline]
