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
    Duty,
    FloatCount,
    Game,
    Movement,
    PostedReglement,
    Shift,
    Table,
    TableChange,
)
from casino.floor.registry import game_part, game_parts
from casino.floor.selectors import shift_figures
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


@admin.register(Shift)
class ShiftAdmin(RecordAdmin):
    list_display = ["table", "opened_at", "opened_by", "closed_at", "figures"]
    list_filter = ["table"]
    date_hierarchy = "opened_at"
    inlines = [DutyInline, CountInline]
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

    def get_inlines(self, request: HttpRequest, obj: Any = None) -> list[Any]:
        """The séance's staff and counts, then its game's rounds (``SHIFT_INLINES``)."""
        game = game_part(obj.table.game, "admin") if obj is not None else None
        return [*self.inlines, *getattr(game, "SHIFT_INLINES", [])]

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


# Each game's pages (Trente-et-Quarante's coups...), registered with the floor's.
game_parts("admin")
