"""Reports over the API, for regulators' tools: every version of every report, the signed PDF,
the export."""

from __future__ import annotations

from typing import Any

from django.http import FileResponse, HttpResponse
from django.urls import path
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request

from casino.api.permissions import PIT
from casino.api.resources import Collection, Filters, Item
from casino.api.serializers import reference
from casino.errors import Conflict
from casino.reports.export import export_zip
from casino.reports.models import Report


class ReportSerializer(serializers.ModelSerializer[Report]):
    status = serializers.CharField(help_text="pending, rendered or failed")

    class Meta:
        model = Report
        fields = [
            "id",
            "kind",
            "shift",
            "day",
            "version",
            "status",
            "requested_at",
            "reason",
            "chain_from",
            "chain_to",
            "head_hash",
            "rendered_at",
            "sha256",
            "pages",
            "signer",
        ]


class ReportFilters(Filters):
    shift = reference(required=False)
    day = serializers.DateField(required=False)
    kind = serializers.ChoiceField(choices=Report.Kind.choices, required=False)


REPORTS = Report.objects.select_related("outbox")


class ReportList(Collection):
    """Every version of every report, oldest first."""

    serializer_class = ReportSerializer
    read_roles = PIT
    sees_all = PIT
    queryset = REPORTS
    filters = ReportFilters


class ReportDetail(Item):
    serializer_class = ReportSerializer
    read_roles = PIT
    sees_all = PIT
    queryset = REPORTS
    noun = gettext_lazy("le rapport")


class ReportPdf(ReportDetail):
    """The signed PDF (409 ``not_rendered`` until the worker has signed it)."""

    @extend_schema(responses={(200, "application/pdf"): OpenApiTypes.BINARY})
    def get(self, request: Request, *args: Any, **kwargs: Any) -> HttpResponse:
        report = self.get_object()
        if report.rendered_at is None:
            raise NotRendered(
                _("%(report)s n'est pas encore signé") % {"report": report}, where="id"
            )
        name = report.pdf.name.rsplit("/", 1)[-1]
        return FileResponse(report.pdf.open("rb"), as_attachment=True, filename=name)


class ReportExport(ReportDetail):
    """The regulator's export: signed PDF, records, replay files, audit events (a zip)."""

    @extend_schema(responses={(200, "application/zip"): OpenApiTypes.BINARY})
    def get(self, request: Request, *args: Any, **kwargs: Any) -> HttpResponse:
        report = self.get_object()
        response = HttpResponse(export_zip(report), content_type="application/zip")
        response["Content-Disposition"] = (
            f'attachment; filename="export-{report.pk}-v{report.version}.zip"'
        )
        return response


class NotRendered(Conflict):
    """The report is asked for but the worker has not signed it yet: ask again shortly."""

    code = "not_rendered"


routes = [
    path("reports", ReportList.as_view(), name="reports"),
    path("reports/<ref:id>", ReportDetail.as_view(), name="report"),
    path("reports/<ref:id>/pdf", ReportPdf.as_view(), name="report-pdf"),
    path("reports/<ref:id>/export", ReportExport.as_view(), name="report-export"),
]
