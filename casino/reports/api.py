"""Reports over the API, for regulators' tools: the list, the signed PDF, the export."""

from __future__ import annotations

from typing import Any

from django.http import FileResponse, HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers
from rest_framework.request import Request

from casino.api.permissions import OVERSIGHT, HoldsRole
from casino.errors import NotFound
from casino.people.roles import Role
from casino.reports.export import export_zip
from casino.reports.models import Report

REPORT_READERS = (*OVERSIGHT, Role.CHEF_DE_PARTIE)


class ReportSerializer(serializers.ModelSerializer[Report]):
    status = serializers.CharField()

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


class ReportList(generics.ListAPIView[Report]):
    """Every version of every report, newest first: ``?shift=ID``, ``?day=YYYY-MM-DD``."""

    serializer_class = ReportSerializer
    permission_classes = [HoldsRole]
    read_roles = REPORT_READERS

    def get_queryset(self) -> Any:
        found = Report.objects.select_related("outbox")
        for name in ("shift", "day"):
            value = self.request.query_params.get(name)
            if value:
                found = found.filter(**{name: value})
        return found


class _ReportFile(generics.GenericAPIView[Report]):
    permission_classes = [HoldsRole]
    read_roles = REPORT_READERS
    queryset = Report.objects.all()

    def report(self) -> Report:
        try:
            return Report.objects.get(pk=self.kwargs["pk"])
        except Report.DoesNotExist:
            raise NotFound(f"report {self.kwargs['pk']} does not exist", where="report") from None


class ReportPdf(_ReportFile):
    """The signed PDF (404 until the worker has rendered it)."""

    @extend_schema(responses={(200, "application/pdf"): OpenApiTypes.BINARY})
    def get(self, request: Request, pk: int) -> HttpResponse:
        report = self.report()
        if report.rendered_at is None:
            raise NotFound(f"{report} is not rendered yet", where="report")
        name = report.pdf.name.rsplit("/", 1)[-1]
        return FileResponse(report.pdf.open("rb"), as_attachment=True, filename=name)


class ReportExport(_ReportFile):
    """The regulator's export: signed PDF, records, replay files, audit events (a zip)."""

    @extend_schema(responses={(200, "application/zip"): OpenApiTypes.BINARY})
    def get(self, request: Request, pk: int) -> HttpResponse:
        report = self.report()
        response = HttpResponse(export_zip(report), content_type="application/zip")
        response["Content-Disposition"] = (
            f'attachment; filename="export-{pk}-v{report.version}.zip"'
        )
        return response
