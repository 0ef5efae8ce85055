"""Audit over the API: the event log, chain verification, and the anomaly review queue."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit.chain import verify_chain
from audit.models import Anomaly, AnomalyReview, AnomalyState, AuditEvent
from audit.services import anomaly_review
from casino.api.idempotency import idempotent
from casino.api.permissions import OVERSIGHT, HoldsRole
from casino.api.serializers import StrictSerializer
from casino.people.roles import Role


class AuditEventSerializer(serializers.ModelSerializer[AuditEvent]):
    class Meta:
        model = AuditEvent
        fields = [
            "seq",
            "at",
            "actor",
            "actor_name",
            "action",
            "subject_type",
            "subject_id",
            "payload",
            "prev_hash",
            "hash",
        ]


class AuditEventList(generics.ListAPIView[AuditEvent]):
    """The audit log in sequence order; ``?after=SEQ`` continues from a known event."""

    serializer_class = AuditEventSerializer
    permission_classes = [HoldsRole]
    read_roles = OVERSIGHT

    def get_queryset(self) -> Any:
        events = AuditEvent.objects.order_by("seq")
        after = self.request.query_params.get("after")
        if after is not None:
            if not after.isdigit():
                raise serializers.ValidationError({"after": "a sequence number"})
            events = events.filter(seq__gt=int(after))
        return events


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
    actor = serializers.StringRelatedField()

    class Meta:
        model = AnomalyReview
        fields = ["at", "actor", "from_state", "to_state", "reason"]


class AnomalySerializer(serializers.ModelSerializer[Anomaly]):
    reviews = AnomalyReviewSerializer(many=True, read_only=True)

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


class AnomalyList(generics.ListAPIView[Anomaly]):
    """Anomalies, newest first; filter with ``?state=``, ``?severity=``, ``?detector=``."""

    serializer_class = AnomalySerializer
    permission_classes = [HoldsRole]
    read_roles = (*OVERSIGHT, Role.CHEF_DE_PARTIE)

    def get_queryset(self) -> Any:
        anomalies = Anomaly.objects.prefetch_related("reviews__actor")
        for field in ("state", "severity", "detector"):
            value = self.request.query_params.get(field)
            if value:
                anomalies = anomalies.filter(**{field: value})
        return anomalies


class AnomalyDetail(generics.RetrieveAPIView[Anomaly]):
    serializer_class = AnomalySerializer
    permission_classes = [HoldsRole]
    read_roles = (*OVERSIGHT, Role.CHEF_DE_PARTIE)
    queryset = Anomaly.objects.prefetch_related("reviews__actor")


class ReviewInput(StrictSerializer):
    to_state = serializers.ChoiceField(choices=AnomalyState.choices)
    reason = serializers.CharField(allow_blank=True)


class AnomalyReviewCreate(APIView):
    """Move an anomaly one step forward in its review (needs an ``Idempotency-Key``)."""

    @extend_schema(request=ReviewInput, responses=AnomalySerializer)
    @idempotent
    def post(self, request: Request, pk: int) -> Response:
        data = ReviewInput(data=request.data)
        data.is_valid(raise_exception=True)
        anomaly = anomaly_review(actor=request.user, anomaly_id=pk, **data.validated_data)
        return Response(AnomalySerializer(anomaly).data, status=201)
