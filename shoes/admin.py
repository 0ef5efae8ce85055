"""The pack register in the admin: filters, each pack's timeline, the commissioner's verification."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from casino import shown
from casino.admin_base import RecordAdmin, RecordInline
from casino.floor.models import Table
from casino.pit.timeline import count_verdict, event_text
from casino.readable import readable
from casino.tallies import count_by
from shoes.models import (
    CardLaid,
    Pack,
    PackEvent,
    PackState,
    Reconciliation,
    RegisterVisa,
    SealVerification,
    TalonCount,
)
from shoes.services import seal_verify


class TableFilter(admin.SimpleListFilter):
    title = gettext_lazy("table")
    parameter_name = "table"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[int, str]]:
        return [(t.number, str(t)) for t in Table.objects.all()]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Pack]) -> QuerySet[Pack]:
        if self.value():
            return queryset.filter(
                events__kind=PackEvent.Kind.OPENED, events__table__number=self.value()
            ).distinct()
        return queryset


class VerificationInline(RecordInline):
    model = SealVerification
    fields = ["at", "commissaire", "seal_number_read", "verdict", "remarks"]


class TimelineInline(RecordInline):
    model = PackEvent
    fields = ["when", "kind", "actor", "table", "shift", "said"]

    @admin.display(description=gettext_lazy("date"))
    def when(self, event: PackEvent) -> str:
        return shown.moment(event.at, seconds=True)

    @admin.display(description=gettext_lazy("ce qui a été fait"))
    def said(self, event: PackEvent) -> str:
        return event_text(event) or "–"


class TalonCountInline(RecordInline):
    """The undealt cards the tailleur recorded at each pass, as recorded."""

    model = TalonCount
    fields = ["taille", "at", "counted_by", "method", "undealt", "expected", "reconciled"]

    @admin.display(description=gettext_lazy("cartes, la prochaine à donner d'abord"))
    def undealt(self, count: TalonCount) -> str:
        return " ".join(count.cards) or "–"

    @admin.display(description=gettext_lazy("rapprochement"))
    def reconciled(self, count: TalonCount) -> str:
        verdict = count_verdict({"missing": count.missing, "extra": count.extra})
        return _("%(counted)s sur %(expected)s : %(verdict)s") % {
            "counted": len(count.cards),
            "expected": count.expected,
            "verdict": verdict,
        }


class VerifyForm(forms.Form):
    seal_number_read = forms.CharField(label=gettext_lazy("n° de scellé lu"), max_length=60)
    verdict = forms.ChoiceField(
        label=gettext_lazy("constat"), choices=SealVerification.Verdict.choices
    )
    remarks = forms.CharField(
        label=gettext_lazy("observations"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
    )


@admin.register(Pack)
class PackAdmin(RecordAdmin):
    list_display = ["seal_number", "kind", "maker", "state", "received_at", "table", "cards"]
    list_filter = ["state", "kind", TableFilter]
    search_fields = ["seal_number", "maker", "maker_pack_numbers"]
    date_hierarchy = "received_at"
    inlines = [VerificationInline, TalonCountInline, TimelineInline]
    readonly_fields = [
        "kind",
        "maker",
        "maker_pack_numbers",
        "seal_number",
        "sealing_authority",
        "received_at",
        "received_by",
        "store_location",
        "state",
        "cards",
        "reconciled",
        "verify_link",
    ]
    fields = readonly_fields

    def read_with_page(self, rows: list[Pack]) -> None:
        """Each pack's table (where it was last opened, as ``current_shift`` reads it) and its
        cards laid, for the page in two queries (not four a row)."""
        opened = (
            PackEvent.objects.filter(pack__in=rows, kind=PackEvent.Kind.OPENED)
            .order_by("pack_id", "-at")
            .distinct("pack_id")
            .values_list("pack_id", "shift__table__number")
        )
        tables = dict(opened)
        laid = count_by(CardLaid.objects.filter(pack__in=rows), "pack_id")
        for pack in rows:
            pack.page_table = tables.get(pack.pk)  # type: ignore[attr-defined]
            pack.page_cards = laid.get(pack.pk, 0)  # type: ignore[attr-defined]

    @admin.display(description=gettext_lazy("table"))
    def table(self, pack: Pack) -> str:
        number = pack.page_table  # type: ignore[attr-defined]
        return "–" if number is None else str(number)

    @admin.display(description=gettext_lazy("cartes tirées"))
    def cards(self, pack: Pack) -> int:
        return int(pack.page_cards)  # type: ignore[attr-defined]

    @admin.display(description=gettext_lazy("recomptage"))
    def reconciled(self, pack: Pack) -> str:
        try:
            r = pack.reconciliation
        except Reconciliation.DoesNotExist:
            return "–"
        return count_verdict({"missing": r.missing, "extra": r.extra})

    @admin.display(description=gettext_lazy("scellé"))
    def verify_link(self, pack: Pack) -> str:
        if pack.state not in (PackState.RECEIVED, PackState.IN_STORE):
            return "–"
        url = reverse("admin:shoes_pack_verify", args=[pack.pk])
        return format_html('<a class="button" href="{}">{}</a>', url, _("Vérifier le scellé"))

    def get_urls(self) -> list[Any]:
        verify = self.admin_site.admin_view(self.verify_view)
        return [path("<int:pk>/verify/", verify, name="shoes_pack_verify"), *super().get_urls()]

    def verify_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        pack = get_object_or_404(Pack, pk=pk)
        if not self.has_view_permission(request, pack):
            raise PermissionDenied

        def act(data: dict[str, Any]) -> tuple[str, int]:
            verification = seal_verify(actor=request.user, pack_id=pack.pk, **data)
            level = messages.SUCCESS if verification.verdict == "intact" else messages.ERROR
            return _("Scellé : %(verdict)s") % {
                "verdict": verification.get_verdict_display()
            }, level

        return self.act_view(
            request,
            form=VerifyForm(request.POST or None),
            act=act,
            done_url=reverse("admin:shoes_pack_change", args=[pk]),
            template="admin/shoes/pack/verify.html",
            pack=pack,
            title=_("Vérifier le scellé : %(pack)s") % {"pack": pack},
        )


class VisaForm(forms.Form):
    remarks = forms.CharField(
        label=gettext_lazy("observations"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
    )


@admin.register(RegisterVisa)
class RegisterVisaAdmin(RecordAdmin):
    """The commissioner signs the receipt register's page of the day (one visa a day)."""

    list_display = ["day", "commissaire", "at", "packs_seen", "remarks"]
    date_hierarchy = "day"
    change_list_template = "admin/shoes/registervisa/change_list.html"

    def get_urls(self) -> list[Any]:
        sign = self.admin_site.admin_view(self.sign_view)
        return [path("sign/", sign, name="shoes_registervisa_sign"), *super().get_urls()]

    def sign_view(self, request: HttpRequest) -> HttpResponse:
        from shoes.services import register_visa

        if not self.has_view_permission(request):
            raise PermissionDenied
        # The casino's day: at 00:30 in Paris, UTC's day is still yesterday.
        today = shown.today()
        said = {"day": shown.day(today)}

        def act(data: dict[str, Any]) -> tuple[str, int]:
            register_visa(actor=request.user, day=today, **data)
            return _("Visa du %(day)s enregistré") % said, messages.SUCCESS

        return self.act_view(
            request,
            form=VisaForm(request.POST or None),
            act=act,
            done_url=reverse("admin:shoes_registervisa_changelist"),
            template="admin/shoes/registervisa/sign.html",
            day=today,
            received=Pack.objects.filter(received_at__date=today),
            title=_("Viser le registre du %(day)s") % said,
        )


@admin.register(Reconciliation)
class ReconciliationAdmin(RecordAdmin):
    list_display = ["pack", "at", "counted_by", "verdict"]
    readonly_fields = ["pack", "at", "counted_by", "verdict", "cards_counted"]
    fields = readonly_fields

    @admin.display(description=gettext_lazy("constat"))
    def verdict(self, reconciliation: Reconciliation) -> str:
        return count_verdict({"missing": reconciliation.missing, "extra": reconciliation.extra})

    @admin.display(description=gettext_lazy("cartes recomptées"))
    def cards_counted(self, reconciliation: Reconciliation) -> str:
        return readable({"counted": reconciliation.counted})
