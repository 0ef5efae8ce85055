from __future__ import annotations

from django.contrib import admin

from casino.admin_base import RecordAdmin, pretty_json
from casino.floor.models import Account, FloatCount, Movement, PostedReglement, Shift, Table
from casino.floor.services import balance, rundown


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

    def get_readonly_fields(self, request, obj=None):  # type: ignore[no-untyped-def]
        return self.readonly_fields

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


@admin.register(Table)
class TableAdmin(RecordAdmin):
    list_display = ["number", "game", "reglement", "min_stake", "max_stake"]


class CountInline(admin.TabularInline):  # type: ignore[type-arg]
    model = FloatCount
    fields = ["moment", "chips", "total", "counted_by", "countersigned_by", "at"]
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):  # type: ignore[no-untyped-def]
        return False


@admin.register(Shift)
class ShiftAdmin(RecordAdmin):
    list_display = ["table", "opened_at", "opened_by", "closed_at"]
    list_filter = ["table"]
    date_hierarchy = "opened_at"
    inlines = [CountInline]
    readonly_fields = ["table", "opened_at", "opened_by", "closed_at", "cash_rundown"]
    fields = readonly_fields

    def get_readonly_fields(self, request, obj=None):  # type: ignore[no-untyped-def]
        return self.readonly_fields

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
