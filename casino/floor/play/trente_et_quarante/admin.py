"""Trente-et-Quarante's admin pages: coups with their cards as the pit reads them, stakes,
settlements, movements and disputes; a séance's coups on its page (``SHIFT_INLINES``)."""

from __future__ import annotations

from django.contrib import admin

from casino.admin_base import RecordAdmin, RecordInline
from casino.floor.models import Movement
from casino.floor.play.trente_et_quarante.models import Coup, CoupResult, Settlement, Stake
from casino.floor.play.trente_et_quarante.selectors import coup_movements
from casino.floor.selectors import row_html


class ShiftCoupInline(RecordInline):
    model = Coup
    fields = ["number", "pack", "phase", "outcome_line"]
    show_change_link = True
    verbose_name_plural = "coups"

    @admin.display(description="résultat / result")
    def outcome_line(self, coup: Coup) -> str:
        o = getattr(coup, "outcome", None)
        if o is None:
            return "–"
        void = " (nul / void)" if o.void else ""
        return f"{o.noir_total} / {o.rouge_total} · {o.result} {o.couleur}{void}"


class StakeInline(RecordInline):
    model = Stake
    fields = ["ref", "holder", "chance", "amount", "insured", "on_refait", "placed_by", "placed_at"]


class SettlementInline(RecordInline):
    model = Settlement
    fields = ["stake", "outcome", "paid", "returned", "to_bank", "premium", "held", "level"]


@admin.register(Coup)
class CoupAdmin(RecordAdmin):
    list_display = ["__str__", "phase", "result", "totals", "opened_at"]
    list_filter = ["shift__table", "phase", "outcome__result", "shift"]
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

    @admin.display(description="résultat / result")
    def result(self, coup: Coup) -> str:
        o = self._outcome(coup)
        if o is None:
            return "–"
        return f"{o.result} {o.couleur}" + (" (nul / void)" if o.void else "")

    @admin.display(description="noir / rouge")
    def totals(self, coup: Coup) -> str:
        o = self._outcome(coup)
        return "–" if o is None else f"{o.noir_total} / {o.rouge_total}"

    @admin.display(description="1re rangée / noir")
    def noir(self, coup: Coup) -> str:
        o = self._outcome(coup)
        return "–" if o is None else row_html(o.noir_cards, o.noir_total, o.announcement["noir"])

    @admin.display(description="2e rangée / rouge")
    def rouge(self, coup: Coup) -> str:
        o = self._outcome(coup)
        return "–" if o is None else row_html(o.rouge_cards, o.rouge_total, o.announcement["rouge"])

    @admin.display(description="annonce / announcement")
    def announcement(self, coup: Coup) -> str:
        o = self._outcome(coup)
        if o is None:
            return "–"
        said = f" — annoncé / spoken: « {o.spoken} »" if o.spoken else ""
        return f"{o.announcement['result']}{said}"

    @admin.display(description="mouvements / movements")
    def movements(self, coup: Coup) -> str:
        from django.utils.html import format_html_join

        return (
            format_html_join(
                "",
                "<div>{} · {} · {} → {}</div>",
                (
                    (m.get_kind_display(), m.amount, m.credit.code, m.debit.code)
                    for m in coup_movements(coup)
                ),
            )
            or "–"
        )

    @admin.display(description="contestations / disputes")
    def disputes(self, coup: Coup) -> str:
        """Disputes about the coup or its stakes, with the corrections they ordered: the coup's
        own records above stay as they were."""
        from django.urls import reverse
        from django.utils.html import format_html, format_html_join

        from casino.disputes.models import about_coup

        found = about_coup(coup)
        lines = format_html_join(
            "",
            '<div><a href="{}">{}</a> · {} · corrections: {}</div>',
            (
                (
                    reverse("admin:disputes_dispute_change", args=[d.pk]),
                    d,
                    d.get_state_display(),
                    "; ".join(
                        f"{m.credit.code} → {m.debit.code}: {m.amount}"
                        for m in Movement.objects.filter(reference=d.reference)
                    )
                    or "–",
                )
                for d in found
            ),
        )
        raise_url = reverse("admin:disputes_dispute_raise") + f"?subject=coup&subject_id={coup.pk}"
        return format_html('{}<a class="button" href="{}">Contester / Raise</a>', lines, raise_url)


SHIFT_INLINES = [ShiftCoupInline]
