"""Reports in the admin: their status (a failed render shows its error), download, the regulator's
export, regeneration, the verification of the stored file, and the register's sign-offs."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from casino import shown
from casino.admin_base import RecordAdmin
from casino.detectors.frame import Chart
from casino.detectors.svg import svg
from casino.readable import recorded_words
from casino.reports import daily_register, services
from casino.reports.export import export_zip
from casino.reports.models import RegisterSignOff, Report
from casino.reports.signing import verify_pdf


class ReasonForm(forms.Form):
    reason = forms.CharField(label=gettext_lazy("motif"), max_length=200)


class SignOffForm(forms.Form):
    confirm = forms.BooleanField(
        label=gettext_lazy("Je certifie exact le registre de cette journée")
    )


@admin.register(Report)
class ReportAdmin(RecordAdmin):
    list_display = ["__str__", "kind", "version", "state", "requested_at", "rendered_at", "pages"]
    list_filter = ["kind", "day"]
    list_select_related = ["outbox"]
    date_hierarchy = "requested_at"
    readonly_fields = [
        "kind",
        "shift",
        "day",
        "version",
        "state",
        "requested_at",
        "requested_by",
        "why",
        "chain_from",
        "chain_to",
        "head_hash",
        "rendered_at",
        "sha256",
        "pages",
        "signer",
        "verification",
        "sign_offs",
        "results_per_table",
        "acts",
    ]
    fields = readonly_fields

    @admin.display(description=gettext_lazy("motif"))
    def why(self, report: Report) -> str:
        return recorded_words(report.reason)

    @admin.display(description=gettext_lazy("état"))
    def state(self, report: Report) -> str:
        """The true state: a failed or retried render says when, how often and why."""
        outbox = report.outbox
        if report.status == "failed":
            assert outbox is not None
            return format_html(
                "{} <code>{}</code>",
                _(
                    "échec (essais : %(attempts)s, le dernier le %(at)s ; le relais l'envoie de nouveau) :"
                )
                % {"attempts": outbox.attempts, "at": shown.moment(outbox.failed_at, seconds=True)},
                outbox.last_error,
            )
        if report.status == "retrying":
            assert outbox is not None
            return format_html(
                "{} <code>{}</code>",
                _("nouvel essai le %(at)s (échecs : %(attempts)s) :")
                % {"attempts": outbox.attempts, "at": shown.moment(outbox.retry_at, seconds=True)},
                outbox.last_error,
            )
        return {"signed": _("signé"), "pending": _("en attente")}[report.status]

    @admin.display(description=gettext_lazy("vérification"))
    def verification(self, report: Report) -> str:
        if report.rendered_at is None:
            return "–"
        with report.pdf.open("rb") as pdf:
            result = verify_pdf(pdf.read())
        verdict = _("VALIDE") if result.ok else _("NON VALIDE")
        return format_html(
            "<strong>{}</strong>{}",
            verdict,
            format_html_join("", "<div>{}</div>", ((f,) for f in result.findings)),
        )

    @admin.display(description=gettext_lazy("visas"))
    def sign_offs(self, report: Report) -> str:
        if report.day is None:
            return "–"
        found = RegisterSignOff.objects.filter(day=report.day).select_related("person")
        return (
            format_html_join(
                "",
                "<div>{} : {} ({})</div>",
                ((s.get_capacity_display(), s.person, shown.moment(s.at)) for s in found),
            )
            or "–"
        )

    @admin.display(description=gettext_lazy("résultat par table"))
    def results_per_table(self, report: Report) -> str:
        """The day's result per table as a picture (a daily register's page only)."""
        if report.day is None:
            return "–"
        results = daily_register.results_per_table(report.day)
        if not results:
            return "–"
        return svg(
            Chart(
                kind="bars",
                title=_("Résultat par table, journée du %(day)s") % {"day": shown.day(report.day)},
                labels=[str(number) for number, _win in results],
                values=[win / 100 for _number, win in results],
            )
        )

    @admin.display(description=gettext_lazy("actes"))
    def acts(self, report: Report) -> str:
        def url(name: str) -> str:
            return reverse(f"admin:reports_report_{name}", args=[report.pk])

        links = []
        if report.rendered_at is not None:
            links.append((url("pdf"), _("PDF")))
        links.append((url("export"), _("export (zip)")))
        links.append((url("regenerate"), _("Régénérer")))
        if report.day is not None and report.rendered_at is not None:
            links.append((url("sign_off"), _("Viser")))
        return format_html_join(" ", '<a class="button" href="{}">{}</a>', links)

    def get_urls(self) -> list[Any]:
        def view(name: str, fn: Any) -> Any:
            return path(
                f"<int:pk>/{name}/", self.admin_site.admin_view(fn), name=f"reports_report_{name}"
            )

        return [
            view("pdf", self.pdf_view),
            view("export", self.export_view),
            view("regenerate", self.regenerate_view),
            view("sign_off", self.sign_off_view),
            *super().get_urls(),
        ]

    def _report(self, request: HttpRequest, pk: int) -> Report:
        report = get_object_or_404(Report, pk=pk)
        if not self.has_view_permission(request, report):
            raise PermissionDenied
        return report

    def pdf_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        report = self._report(request, pk)
        if report.rendered_at is None:
            raise Http404(_("le rapport n'est pas encore rendu"))
        return FileResponse(
            report.pdf.open("rb"), as_attachment=True, filename=f"{report.pdf.name.split('/')[-1]}"
        )

    def export_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        report = self._report(request, pk)
        response = HttpResponse(export_zip(report), content_type="application/zip")
        name = f"export-{report.kind}-{report.shift_id or report.day}-v{report.version}.zip"
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response

    def regenerate_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        report = self._report(request, pk)

        def act(data: dict[str, Any]) -> tuple[str, int]:
            new = services.report_regenerate(actor=request.user, report_id=pk, **data)
            return _("%(report)s demandé") % {"report": new}, messages.SUCCESS

        return self.act_view(
            request,
            form=ReasonForm(request.POST or None),
            act=act,
            done_url=reverse("admin:reports_report_changelist"),
            template="admin/act.html",
            title=_("Régénérer : %(report)s") % {"report": report},
        )

    def sign_off_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        report = self._report(request, pk)

        def act(data: dict[str, Any]) -> tuple[str, int]:
            assert report.day is not None
            services.register_sign_off(actor=request.user, day=report.day)
            return _("Visa enregistré"), messages.SUCCESS

        return self.act_view(
            request,
            form=SignOffForm(request.POST or None),
            act=act,
            done_url=reverse("admin:reports_report_change", args=[pk]),
            template="admin/act.html",
            title=_("Certifié exact : %(report)s") % {"report": report},
        )


@admin.register(RegisterSignOff)
class RegisterSignOffAdmin(RecordAdmin):
    list_display = ["day", "capacity", "person", "at", "report"]
