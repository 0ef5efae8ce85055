from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from django.utils.formats import number_format
from django.utils.html import format_html, format_html_join
from django.utils.translation import get_language, gettext_lazy
from django.utils.translation import gettext as _

from casino import shown
from casino.admin_base import IndexedHistoryAdmin, RecordAdmin, RecordInline, RelatedReadWith
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
from casino.floor.registry import game_module, game_part, game_parts
from casino.floor.selectors import figures_of
from casino.floor.services import balance, rundown, table_configure, table_create
from casino.people.roles import Role
from casino.people.services import roles_of
from casino.readable import chips_text, readable

MINIMUM, MAXIMUM = gettext_lazy("mise minimum"), gettext_lazy("mise maximum")


def movement_lines(movements: Any) -> str:
    """Ledger movements as lines: their nature, amount, and from which account to which."""
    return (
        format_html_join(
            "",
            "<div>{} · {} · {} → {}</div>",
            (
                (m.get_kind_display(), shown.money(m.amount), m.credit.code, m.debit.code)
                for m in movements
            ),
        )
        or "–"
    )


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
        "threshold",
        "articles_text",
        "parameters_read",
    ]
    fields = readonly_fields

    @admin.display(description=gettext_lazy("articles"))
    def articles_text(self, posted: PostedReglement) -> str:
        """The articles as posted, in the reader's language (each is posted in both)."""
        language = "en" if (get_language() or "").startswith("en") else "fr"
        return format_html_join(
            "",
            "<p><strong>{}</strong> {}</p>",
            (
                (_("Art. %(number)s.") % {"number": a["number"]}, a.get(language) or a["fr"])
                for a in posted.articles
            ),
        )

    @admin.display(description=gettext_lazy("seuil de la seconde approbation"))
    def threshold(self, posted: PostedReglement) -> str:
        return shown.money(posted.correction_approval_threshold)

    @admin.display(description=gettext_lazy("paramètres"))
    def parameters_read(self, posted: PostedReglement) -> str:
        return readable(posted.parameters)


class TableForm(forms.Form):
    number = forms.IntegerField(label=gettext_lazy("numéro"), min_value=1, max_value=32767)
    game = forms.ChoiceField(label=gettext_lazy("jeu"), choices=Game.choices)
    reglement = forms.ModelChoiceField(
        label=gettext_lazy("règlement affiché"), queryset=PostedReglement.objects.all()
    )
    min_stake = forms.IntegerField(
        label=MINIMUM, min_value=1, help_text=gettext_lazy("en centimes")
    )
    max_stake = forms.IntegerField(
        label=MAXIMUM, min_value=1, help_text=gettext_lazy("en centimes")
    )


class TableSettingsForm(TableForm):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        del self.fields["number"], self.fields["game"]


class TableChangeInline(RecordInline):
    model = TableChange
    fields = ["at", "by", "reglement", "minimum", "maximum"]

    @admin.display(description=MINIMUM)
    def minimum(self, change: TableChange) -> str:
        return shown.money(change.min_stake)

    @admin.display(description=MAXIMUM)
    def maximum(self, change: TableChange) -> str:
        return shown.money(change.max_stake)


class LimitsShown:
    """A table's or a séance's stake limits as money (they are kept in minor units)."""

    @admin.display(description=MINIMUM, ordering="min_stake")
    def minimum(self, record: Any) -> str:
        return shown.money(record.min_stake)

    @admin.display(description=MAXIMUM, ordering="max_stake")
    def maximum(self, record: Any) -> str:
        return shown.money(record.max_stake)


@admin.register(Table)
class TableAdmin(LimitsShown, RecordAdmin):
    """Tables are created and changed by the director through ``table_create`` and
    ``table_configure``: each a recorded, audited act; the page itself edits nothing."""

    list_display = ["number", "game", "reglement", "minimum", "maximum"]
    inlines = [TableChangeInline]
    readonly_fields = ["number", "game", "reglement", "minimum", "maximum", "acts"]
    fields = readonly_fields

    @admin.display(description=gettext_lazy("actes"))
    def acts(self, table: Table) -> str:
        url = reverse("admin:floor_table_configure", args=[table.pk])
        return format_html('<a class="button" href="{}">{}</a>', url, _("Changer"))

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
            return _("%(table)s créée") % {"table": table}, messages.SUCCESS

        return self.act_view(
            request,
            form=form,
            act=act,
            done_url=reverse("admin:floor_table_changelist"),
            template="admin/act.html",
            title=_("Nouvelle table"),
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
            return _("Enregistré, en vigueur dès la prochaine séance"), messages.SUCCESS

        return self.act_view(
            request,
            form=form,
            act=act,
            done_url=reverse("admin:floor_table_change", args=[pk]),
            template="admin/act.html",
            title=_("Changer %(table)s") % {"table": table},
        )


class CountInline(RecordInline):
    model = FloatCount
    fk_name = "shift"
    fields = ["moment", "chips_counted", "amount", "counted_by", "countersigned", "at"]
    verbose_name_plural = gettext_lazy("comptages de fermeture")

    @admin.display(description=gettext_lazy("jetons"))
    def chips_counted(self, count: FloatCount) -> str:
        return chips_text(count.chips)

    @admin.display(description=gettext_lazy("total"))
    def amount(self, count: FloatCount) -> str:
        return shown.money(count.total)

    @admin.display(description=gettext_lazy("contresigné"))
    def countersigned(self, count: FloatCount) -> str:
        signature = getattr(count, "countersignature", None)
        if signature is None:
            return _("en attente")
        return f"{signature.by} ({shown.moment(signature.at)})"


class DutyInline(RecordInline):
    model = Duty
    fields = ["person", "post", "started_at", "assigned_by", "ended"]
    verbose_name_plural = gettext_lazy("personnel de service")

    @admin.display(description=gettext_lazy("fin"))
    def ended(self, duty: Duty) -> str:
        end = getattr(duty, "end", None)
        return "–" if end is None else f"{shown.moment(end.at)} ({end.reason})"


class ShiftFilter(RelatedReadWith):
    """The séances to filter a game's rounds by, each named with its table."""

    related = ("table",)


@admin.register(Shift)
class ShiftAdmin(LimitsShown, RecordAdmin):
    list_display = ["table", "opened_at", "opened_by", "closed_at", "figures"]
    list_filter = ["table"]
    date_hierarchy = "opened_at"
    inlines = [DutyInline, CountInline]
    readonly_fields = [
        "table",
        "reglement",
        "minimum",
        "maximum",
        "opened_at",
        "opened_by",
        "opening_count",
        "closed_at",
        "figures",
        "cash_rundown",
        "hold_by_hour",
    ]
    fields = readonly_fields

    def get_inlines(self, request: HttpRequest, obj: Any = None) -> list[Any]:
        """The séance's staff and counts, then its game's rounds (``SHIFT_INLINES``)."""
        game = game_part(obj.table.game, "admin") if obj is not None else None
        return [*self.inlines, *getattr(game, "SHIFT_INLINES", [])]

    def read_with_page(self, rows: list[Shift]) -> None:
        """Each séance's figures, read for the page in a few queries (not five a row)."""
        figures = figures_of(rows)
        for shift in rows:
            shift.page_figures = figures[shift.pk]  # type: ignore[attr-defined]

    @admin.display(description=gettext_lazy("jeu, mises, gain de la maison, taux"))
    def figures(self, shift: Shift) -> str:
        f = shift.page_figures  # type: ignore[attr-defined]
        hold = "–" if f.hold is None else f"{number_format(f.hold, 2, use_l10n=True)} %"
        return _(
            "%(rounds)s %(word)s · mises %(drop)s · gain de la maison %(win)s · taux %(hold)s"
        ) % {
            "rounds": f.coups,
            "word": game_module(shift.table.game).rounds_word,
            "drop": shown.money(f.drop),
            "win": shown.money(f.win),
            "hold": hold,
        }

    @admin.display(
        description=gettext_lazy("rapprochement (ouverture + apports − retours + résultat)")
    )
    def cash_rundown(self, shift: Shift) -> str:
        r = rundown(shift)
        return _(
            "%(opening)s + %(fills)s − %(credits)s + %(result)s = %(expected)s attendus ; "
            "compté %(closing)s ; écart %(variance)s"
        ) % {
            "opening": shown.money(r.opening),
            "fills": shown.money(r.fills),
            "credits": shown.money(r.credits),
            "result": shown.money(r.result),
            "expected": shown.money(r.expected),
            "closing": shown.money(r.closing),
            "variance": shown.money(r.variance),
        }

    @admin.display(description=gettext_lazy("taux par heure et sa bande à 95 %"))
    def hold_by_hour(self, shift: Shift) -> str:
        """The séance's hold hour by hour against the band of the stakes actually placed (the hold
        detector's reading; at Pharao the tailles' exact mean and variance, normal band); the
        cercle's house banks nothing."""
        if shift.table.game not in (Game.TRENTE_ET_QUARANTE, Game.PHARAO):
            return "–"
        # The detectors stand above the floor: read lazily, as the page is drawn.
        from dataclasses import replace

        from casino.detectors.hold import hour_chart, seance_measure
        from casino.detectors.svg import svg

        measure = seance_measure(shift)
        if not measure.coups:
            return "–"
        chart = replace(
            hour_chart(measure, percent=True),
            title=_("taux par heure (barres), attendu (trait) et bande à 95 %"),
        )
        return svg(chart)


@admin.register(Account)
class AccountAdmin(RecordAdmin):
    list_display = ["code", "kind", "table", "current_balance"]
    list_select_related = ["table"]
    list_filter = ["kind", "table"]
    readonly_fields = ["code", "kind", "table", "name", "current_balance"]
    fields = readonly_fields

    @admin.display(description=gettext_lazy("solde"))
    def current_balance(self, account: Account) -> str:
        return shown.money(balance(account))


@admin.register(Movement)
class MovementAdmin(IndexedHistoryAdmin):
    list_display = ["at", "kind", "sum", "credit", "debit", "shift", "reference", "actor"]
    # What a row names (its accounts, its séance and table, who), read with the page: not a
    # query each; and the ledger counted once, for the pages.
    list_select_related = ["credit", "debit", "shift__table", "actor"]
    show_full_result_count = False
    readonly_fields = [
        "at",
        "kind",
        "sum",
        "credit",
        "debit",
        "shift",
        "reference",
        "idempotency_key",
        "actor",
    ]
    fields = readonly_fields

    @admin.display(description=gettext_lazy("montant"), ordering="amount")
    def sum(self, movement: Movement) -> str:
        return shown.money(movement.amount)

    list_filter = ["kind", "shift__table"]
    search_fields = ["reference", "idempotency_key"]
    date_hierarchy = "at"


# Each game's pages (Trente-et-Quarante's coups...), registered with the floor's.
game_parts("admin")
