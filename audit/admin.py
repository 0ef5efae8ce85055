"""The audit log and the anomaly review queue in the admin."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from audit.models import (
    ANOMALY_TRANSITIONS,
    Anomaly,
    AnomalyReview,
    AuditEvent,
    ChainVerification,
)
from audit.services import anomaly_review
from casino import shown
from casino.admin_base import RecordAdmin, RecordInline
from casino.readable import readable, subject_link

# Where ``expected`` is money (a séance's rundown), not a number of cards (a talon's count).
RUNDOWNS = ("shift.closed", "cash_variance")


@admin.register(AuditEvent)
class AuditEventAdmin(RecordAdmin):
    list_display = ["seq", "when", "actor_name", "action", "subject", "short_hash"]
    list_filter = ["action", "subject_type"]
    search_fields = ["action", "subject_id", "actor_name", "hash"]
    date_hierarchy = "at"
    readonly_fields = [
        "seq",
        "when",
        "actor_name",
        "action",
        "subject",
        "payload_read",
        "prev_hash",
        "hash",
    ]
    fields = readonly_fields

    @admin.display(description=gettext_lazy("date"), ordering="at")
    def when(self, event: AuditEvent) -> str:
        return shown.moment(event.at, seconds=True)

    @admin.display(description=gettext_lazy("objet"))
    def subject(self, event: AuditEvent) -> str:
        return subject_link(event.subject_type, event.subject_id)

    @admin.display(description=gettext_lazy("empreinte"))
    def short_hash(self, event: AuditEvent) -> str:
        return event.hash[:16] + "…"

    @admin.display(description=gettext_lazy("contenu"))
    def payload_read(self, event: AuditEvent) -> str:
        money = {"expected"} if event.action in RUNDOWNS else set()
        return readable(event.payload, money=money)


@admin.register(ChainVerification)
class ChainVerificationAdmin(RecordAdmin):
    list_display = ["when", "ok", "events", "head_seq", "first_broken_seq", "seconds"]
    readonly_fields = [
        "when",
        "ok",
        "events",
        "head_seq",
        "head_hash",
        "first_broken_seq",
        "reason",
        "seconds",
    ]
    fields = readonly_fields

    @admin.display(description=gettext_lazy("date"), ordering="at")
    def when(self, verification: ChainVerification) -> str:
        return shown.moment(verification.at, seconds=True)

    list_filter = ["ok"]


class AnomalyReviewInline(RecordInline):
    model = AnomalyReview
    fields = ["at", "actor", "from_state", "to_state", "reason"]


class ReviewForm(forms.Form):
    to_state = forms.ChoiceField(label=gettext_lazy("nouvel état"))
    reason = forms.CharField(label=gettext_lazy("motif"), widget=forms.Textarea(attrs={"rows": 3}))

    def __init__(self, *args: Any, anomaly: Anomaly, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        labels = dict(Anomaly._meta.get_field("state").choices or [])
        self.fields["to_state"].choices = [
            (b, labels[b]) for a, b in ANOMALY_TRANSITIONS if a == anomaly.state
        ]


@admin.register(Anomaly)
class AnomalyAdmin(RecordAdmin):
    """The review queue: open ones first; each review step goes through ``anomaly_review``."""

    list_display = ["detected_at", "severity", "detector", "state", "summary", "subject"]
    list_filter = ["state", "severity", "detector"]
    search_fields = ["summary", "subject_id", "detector"]
    date_hierarchy = "detected_at"
    inlines = [AnomalyReviewInline]
    readonly_fields = [
        "detector",
        "severity",
        "state",
        "summary",
        "subject",
        "detected_at",
        "evidence_read",
        "involved_people",
        "review_link",
    ]
    fields = readonly_fields

    @admin.display(description=gettext_lazy("objet"))
    def subject(self, anomaly: Anomaly) -> str:
        return subject_link(anomaly.subject_type, anomaly.subject_id)

    @admin.display(description=gettext_lazy("éléments"))
    def evidence_read(self, anomaly: Anomaly) -> str:
        money = {"expected"} if anomaly.detector in RUNDOWNS else set()
        return readable(anomaly.evidence, money=money)

    @admin.display(description=gettext_lazy("personnes en cause"))
    def involved_people(self, anomaly: Anomaly) -> str:
        from django.contrib.auth.models import User

        people = User.objects.filter(pk__in=anomaly.involved).order_by("username")
        return ", ".join(p.username for p in people) or "–"

    @admin.display(description=gettext_lazy("examen"))
    def review_link(self, anomaly: Anomaly) -> str:
        if not any(a == anomaly.state for a, _b in ANOMALY_TRANSITIONS):
            return "–"
        url = reverse("admin:audit_anomaly_review", args=[anomaly.pk])
        return format_html('<a class="button" href="{}">{}</a>', url, _("Examiner"))

    def get_urls(self) -> list[Any]:
        review = self.admin_site.admin_view(self.review_view)
        return [path("<int:pk>/review/", review, name="audit_anomaly_review"), *super().get_urls()]

    def review_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        anomaly = get_object_or_404(Anomaly, pk=pk)
        if not self.has_view_permission(request, anomaly):
            raise PermissionDenied

        def act(data: dict[str, Any]) -> tuple[str, int]:
            anomaly_review(actor=request.user, anomaly_id=anomaly.pk, **data)
            return _("Examen enregistré"), messages.SUCCESS

        return self.act_view(
            request,
            form=ReviewForm(request.POST or None, anomaly=anomaly),
            act=act,
            done_url=reverse("admin:audit_anomaly_change", args=[pk]),
            template="admin/audit/anomaly/review.html",
            anomaly=anomaly,
            title=_("Examiner : %(anomaly)s") % {"anomaly": anomaly},
        )
