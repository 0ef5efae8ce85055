from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from django.utils.html import format_html

from casino.admin_base import RecordAdmin, RecordInline, pretty_json
from casino.floor.models import (
    Account,
    Coup,
    CoupResult,
    Duty,
    FloatCount,
    Game,
    Movement,
    PostedReglement,
    Settlement,
    Shift,
    Stake,
    Table,
    TableChange,
)
from casino.floor.selectors import coup_movements, row_html, shift_figures
from casino.floor.services import balance, rundown, table_configure, table_create
from casino.people.roles import Role
from casino.people.services import roles_of


@admin.register(PostedReglement)
class PostedReglementAdmin(RecordAdmin):
    list_display = ["name", "version", "effective_from", "approved_by", "approved_at"]
    list_filter = ["name"]
    readonly_fields = [
        "name",
        "version",
        "effective_from",
        "approved_by",
        "approved_at",
        "supersedes",
        "articles_text",
        "parameters_pretty",
    ]
    fields = readonly_fields

    @admin.display(description="articles (fr / en)")
    def articles_text(self, posted: PostedReglement) -> str:
        from django.utils.html import format_html_join

        return format_html_join(
            "",
            "<p><strong>Art. {}.</strong> {}<br><em>{}</em></p>",
            ((a["number"], a["fr"], a["en"]) for a in posted.articles),
        )

    @admin.display(description="paramètres / parameters")
    def parameters_pretty(self, posted: PostedReglement) -> str:
        import json

        return pretty_json(json.loads(posted.parameters))


class TableForm(forms.Form):
    number = forms.IntegerField(label="numéro / number", min_value=1, max_value=32767)
    game = forms.ChoiceField(label="jeu / game", choices=Game.choices)
    reglement = forms.ModelChoiceField(
        label="règlement affiché / posted règlement", queryset=PostedReglement.objects.all()
    )
    min_stake = forms.IntegerField(label="mise minimum / minimum stake", min_value=1)
    max_stake = forms.IntegerField(label="mise maximum / maximum stake", min_value=1)


class TableSettingsForm(TableForm):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        del self.fields["number"], self.fields["game"]


class TableChangeInline(RecordInline):
    model = TableChange
    fields = ["at", "by", "reglement", "min_stake", "max_stake"]
    verbose_name_plural = "changements / changes (effective at the next séance)"


@admin.register(Table)
class TableAdmin(RecordAdmin):
    """Tables are created and changed by the director through ``table_create`` and
    ``table_configure``: each a recorded, audited act; the page itself edits nothing."""

    list_display = ["number", "game", "reglement", "min_stake", "max_stake"]
    inlines = [TableChangeInline]
    readonly_fields = ["number", "game", "reglement", "min_stake", "max_stake", "acts"]
    fields = readonly_fields

    @admin.display(description="actes / acts")
    def acts(self, table: Table) -> str:
        url = reverse("admin:floor_table_configure", args=[table.pk])
        return format_html('<a class="button" href="{}">{}</a>', url, "Changer / Change")

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return Role.DIRECTEUR in roles_of(request.user)  # the button leads to the service's form

    def add_view(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        return self.create_view(request)

    def get_urls(self) -> list[Any]:
        return [
            path("create/", self.admin_site.admin_view(self.create_view), name="floor_table_new"),
            path(
                "<int:pk>/configure/",
                self.admin_site.admin_view(self.configure_view),
                name="floor_table_configure",
            ),
            *super().get_urls(),
        ]

    def create_view(self, request: HttpRequest) -> HttpResponse:
        form = TableForm(request.POST or None)

        def act(data: dict[str, Any]) -> tuple[str, int]:
            table = table_create(
                actor=request.user,
                number=data["number"],
                game=data["game"],
                reglement_id=data["reglement"].pk,
                min_stake=data["min_stake"],
                max_stake=data["max_stake"],
            )
            return f"{table} créée / created", messages.SUCCESS

        return self.act_view(
            request,
            form=form,
            act=act,
            done_url=reverse("admin:floor_table_changelist"),
            template="admin/act.html",
            title="Nouvelle table / New table",
        )

    def configure_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        table = get_object_or_404(Table, pk=pk)
        form = TableSettingsForm(
            request.POST or None,
            initial={
                "reglement": table.reglement,
                "min_stake": table.min_stake,
                "max_stake": table.max_stake,
            },
        )

        def act(data: dict[str, Any]) -> tuple[str, int]:
            table_configure(
                actor=request.user,
                table_id=table.pk,
                reglement_id=data["reglement"].pk,
                min_stake=data["min_stake"],
                max_stake=data["max_stake"],
            )
            return "Enregistré, dès la prochaine séance / from the next séance", messages.SUCCESS

        return self.act_view(
            request,
            form=form,
            act=act,
            done_url=reverse("admin:floor_table_change", args=[pk]),
            template="admin/act.html",
            title=f"Changer / Change: {table}",
        )


class CountInline(RecordInline):
    model = FloatCount
    fk_name = "shift"
    fields = ["moment", "chips", "total", "counted_by", "countersigned", "at"]
    verbose_name_plural = "comptes de fermeture / closing counts"

    @admin.display(description="contresigné / countersigned")
    def countersigned(self, count: FloatCount) -> str:
        signature = getattr(count, "countersignature", None)
        return f"{signature.by} ({signature.at:%H:%M})" if signature else "en attente / pending"


class DutyInline(RecordInline):
    model = Duty
    fields = ["person", "post", "started_at", "assigned_by", "ended"]
    verbose_name_plural = "personnel de service / staff on duty"

    @admin.display(description="fin / end")
    def ended(self, duty: Duty) -> str:
        end = getattr(duty, "end", None)
        return "–" if end is None else f"{end.at:%Y-%m-%d %H:%M} ({end.reason})"


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


@admin.register(Shift)
class ShiftAdmin(RecordAdmin):
    list_display = ["table", "opened_at", "opened_by", "closed_at", "figures"]
    list_filter = ["table"]
    date_hierarchy = "opened_at"
    inlines = [DutyInline, CountInline, ShiftCoupInline]
    readonly_fields = [
        "table",
        "reglement",
        "min_stake",
        "max_stake",
        "opened_at",
        "opened_by",
        "opening_count",
        "closed_at",
        "figures",
        "cash_rundown",
    ]
    fields = readonly_fields

    @admin.display(description="coups, drop, win, hold")
    def figures(self, shift: Shift) -> str:
        f = shift_figures(shift)
        hold = "–" if f.hold is None else f"{f.hold:.2f} %"
        return f"{f.coups} coups · drop {f.drop} · win {f.win} · hold {hold}"

    @admin.display(description="rundown (ouverture + apports − retours + résultat = fermeture)")
    def cash_rundown(self, shift: Shift) -> str:
        r = rundown(shift)
        closing = "–" if r.closing is None else r.closing
        variance = "–" if r.variance is None else r.variance
        return (
            f"{r.opening} + {r.fills} − {r.credits} + {r.result} = {r.expected}; "
            f"compté / counted {closing}; écart / variance {variance}"
        )


@admin.register(Account)
class AccountAdmin(RecordAdmin):
    list_display = ["code", "kind", "table", "current_balance"]
    list_filter = ["kind", "table"]

    @admin.display(description="solde / balance")
    def current_balance(self, account: Account) -> int:
        return balance(account)


@admin.register(Movement)
class MovementAdmin(RecordAdmin):
    list_display = ["at", "kind", "amount", "credit", "debit", "shift", "reference", "actor"]
    list_filter = ["kind", "shift__table"]
    search_fields = ["reference", "idempotency_key"]
    date_hierarchy = "at"


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
