"""The audit log and the anomaly review queue in the admin."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import path, reverse

from audit.models import (
    ANOMALY_TRANSITIONS,
    Anomaly,
    AnomalyReview,
    AuditEvent,
    ChainVerification,
)
from audit.services import anomaly_review
from casino.admin_base import RecordAdmin, RecordInline, pretty_json


@admin.register(AuditEvent)
class AuditEventAdmin(RecordAdmin):
    list_display = ["seq", "at", "actor_name", "action", "subject_type", "subject_id", "short_hash"]
    list_filter = ["action", "subject_type"]
    search_fields = ["action", "subject_id", "actor_name", "hash"]
    date_hierarchy = "at"
    readonly_fields = [
        "seq",
        "at",
        "actor_name",
        "action",
        "subject_type",
        "subject_id",
        "payload_pretty",
        "prev_hash",
        "hash",
    ]
    fields = readonly_fields

    @admin.display(description="hash")
    def short_hash(self, event: AuditEvent) -> str:
        return event.hash[:16] + "…"

    @admin.display(description="payload")
    def payload_pretty(self, event: AuditEvent) -> str:
        return pretty_json(json.loads(event.payload))


@admin.register(ChainVerification)
class ChainVerificationAdmin(RecordAdmin):
    list_display = ["at", "ok", "events", "head_seq", "first_broken_seq", "seconds"]
    list_filter = ["ok"]


class AnomalyReviewInline(RecordInline):
    model = AnomalyReview
    fields = ["at", "actor", "from_state", "to_state", "reason"]


class ReviewForm(forms.Form):
    to_state = forms.ChoiceField(label="Nouvel état / New state")
    reason = forms.CharField(label="Motif / Reason", widget=forms.Textarea(attrs={"rows": 3}))

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
        "evidence_pretty",
        "involved",
        "review_link",
    ]
    fields = readonly_fields

    @admin.display(description="objet / subject")
    def subject(self, anomaly: Anomaly) -> str:
        return f"{anomaly.subject_type}:{anomaly.subject_id}" if anomaly.subject_type else "–"

    @admin.display(description="preuves / evidence")
    def evidence_pretty(self, anomaly: Anomaly) -> str:
        return pretty_json(anomaly.evidence)

    @admin.display(description="examen / review")
    def review_link(self, anomaly: Anomaly) -> str:
        from django.utils.html import format_html

        if not any(a == anomaly.state for a, _ in ANOMALY_TRANSITIONS):
            return "–"
        url = reverse("admin:audit_anomaly_review", args=[anomaly.pk])
        return format_html('<a class="button" href="{}">Examiner / Review</a>', url)

    def get_urls(self) -> list[Any]:
        review = self.admin_site.admin_view(self.review_view)
        return [path("<int:pk>/review/", review, name="audit_anomaly_review"), *super().get_urls()]

    def review_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        anomaly = get_object_or_404(Anomaly, pk=pk)
        if not self.has_view_permission(request, anomaly):
            return HttpResponse(status=403)

        def act(data: dict[str, Any]) -> tuple[str, int]:
            anomaly_review(actor=request.user, anomaly_id=anomaly.pk, **data)
            return "Examen enregistré / Review recorded", messages.SUCCESS

        return self.act_view(
            request,
            form=ReviewForm(request.POST or None, anomaly=anomaly),
            act=act,
            done_url=reverse("admin:audit_anomaly_change", args=[pk]),
            template="admin/audit/anomaly/review.html",
            anomaly=anomaly,
            title=f"Examiner / Review: {anomaly}",
        )
