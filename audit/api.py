"""Audit over the API: the event log, chain verification, and the anomaly review queue."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.urls import path
from django.utils.translation import gettext_lazy
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit.chain import verify_chain
from audit.models import Anomaly, AnomalyReview, AnomalyState, AuditEvent, Severity
from audit.services import anomaly_review
from casino.api.acts import record_act
from casino.api.permissions import OVERSIGHT, PIT, HoldsRole
from casino.api.resources import Collection, Filters, Item
from casino.api.serializers import PageOfRecords, ReadWithPage, StrictSerializer


class AuditEventSerializer(serializers.ModelSerializer[AuditEvent]):
    actor_id = serializers.IntegerField(
        allow_null=True, help_text="as hashed: the user's id (null for the system)"
    )

    class Meta:
        model = AuditEvent
        fields = [
            "seq",
            "at",
            "actor_id",
            "actor_name",
            "action",
            "subject_type",
            "subject_id",
            "payload",
            "prev_hash",
            "hash",
        ]


class EventFilters(Filters):
    after = serializers.IntegerField(
        min_value=0, required=False, help_text="events after this sequence number"
    )
    action = serializers.CharField(max_length=80, required=False)
    subject_type = serializers.CharField(max_length=60, required=False)
    subject_id = serializers.CharField(max_length=60, required=False)
    lookups = {"after": "seq__gt"}


class AuditEventList(Collection):
    """The audit log in sequence order; ``?after=SEQ`` continues from a known event."""

    serializer_class = AuditEventSerializer
    read_roles = OVERSIGHT
    sees_all = OVERSIGHT
    queryset = AuditEvent.objects.all()
    ordering = "seq"
    filters = EventFilters


class AuditEventDetail(Item):
    serializer_class = AuditEventSerializer
    read_roles = OVERSIGHT
    sees_all = OVERSIGHT
    queryset = AuditEvent.objects.all()
    lookup_field = "seq"
    lookup_url_kwarg = "seq"
    noun = gettext_lazy("l'événement")


class VerificationSerializer(serializers.Serializer[Any]):
    ok = serializers.BooleanField()
    events = serializers.IntegerField()
    head_seq = serializers.IntegerField()
    head_hash = serializers.CharField()
    first_broken_seq = serializers.IntegerField(allow_null=True)
    reason = serializers.CharField()
    seconds = serializers.FloatField()


class ChainVerify(APIView):
    """Recompute the chain now and say whether it holds (read-only: nothing is recorded)."""

    permission_classes = [HoldsRole]
    read_roles = OVERSIGHT

    @extend_schema(responses=VerificationSerializer)
    def get(self, request: Request) -> Response:
        return Response(VerificationSerializer(verify_chain()).data)


class AnomalyReviewSerializer(serializers.ModelSerializer[AnomalyReview]):
    actor = serializers.CharField(source="actor.username")

    class Meta:
        model = AnomalyReview
        fields = ["at", "actor", "from_state", "to_state", "reason"]


class AnomalySerializer(ReadWithPage, serializers.ModelSerializer[Anomaly]):
    reviews = AnomalyReviewSerializer(many=True, read_only=True)
    involved = serializers.SerializerMethodField(help_text="usernames of the people in question")

    class Meta:
        model = Anomaly
        fields = [
            "id",
            "detector",
            "severity",
            "state",
            "summary",
            "subject_type",
            "subject_id",
            "evidence",
            "detected_at",
            "involved",
            "reviews",
        ]
        list_serializer_class = PageOfRecords

    def read_with_page(self, records: list[Anomaly]) -> None:
        """The usernames of everyone the anomalies involve: one query."""
        people = {pk for anomaly in records for pk in anomaly.involved}
        self.usernames = dict(User.objects.filter(pk__in=people).values_list("pk", "username"))

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_involved(self, anomaly: Anomaly) -> list[str]:
        return [self.usernames[pk] for pk in anomaly.involved if pk in self.usernames]


class AnomalyFilters(Filters):
    state = serializers.ChoiceField(choices=AnomalyState.choices, required=False)
    severity = serializers.ChoiceField(choices=Severity.choices, required=False)
    detector = serializers.CharField(max_length=60, required=False)


ANOMALIES = Anomaly.objects.prefetch_related("reviews__actor")


class AnomalyList(Collection):
    """Anomalies, oldest first."""

    serializer_class = AnomalySerializer
    read_roles = PIT
    sees_all = PIT
    queryset = ANOMALIES
    filters = AnomalyFilters


class AnomalyDetail(Item):
    serializer_class = AnomalySerializer
    read_roles = PIT
    sees_all = PIT
    queryset = ANOMALIES
    noun = gettext_lazy("l'anomalie")


class ReviewInput(StrictSerializer):
    to_state = serializers.ChoiceField(choices=AnomalyState.choices)
    reason = serializers.CharField(allow_blank=True, max_length=2000)


AnomalyReviewCreate = record_act(
    "AnomalyReviewCreate",
    anomaly_review,
    ReviewInput,
    "Move an anomaly one step forward in its review, with the reason.",
    record_id="anomaly_id",
    answer=lambda pk: AnomalySerializer(ANOMALIES.get(pk=pk)).data,
    response=AnomalySerializer,
)

routes = [
    path("audit/events", AuditEventList.as_view(), name="audit-events"),
    path("audit/events/<ref:seq>", AuditEventDetail.as_view(), name="audit-event"),
    path("audit/verify", ChainVerify.as_view(), name="audit-verify"),
    path("anomalies", AnomalyList.as_view(), name="anomalies"),
    path("anomalies/<ref:id>", AnomalyDetail.as_view(), name="anomaly"),
    path("anomalies/<ref:id>/reviews", AnomalyReviewCreate.as_view(), name="anomaly-review"),
]
