"""The police register over the API: the commissioner writes, the director follows up."""

from __future__ import annotations

from typing import Any

from django.urls import path
from django.utils.translation import gettext_lazy
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from casino.api.acts import record_act
from casino.api.idempotency import idempotent
from casino.api.permissions import OVERSIGHT
from casino.api.resources import Collection, Filters, Item
from casino.api.serializers import StrictSerializer
from casino.police import services
from casino.police.models import Observation


class FollowUpSerializer(serializers.Serializer[Any]):
    director = serializers.CharField(source="director.username")
    at = serializers.DateTimeField()
    action = serializers.CharField()


class ObservationSerializer(serializers.ModelSerializer[Observation]):
    commissioner = serializers.CharField(source="commissioner.username")
    table = serializers.IntegerField(source="table.number", allow_null=True, default=None)
    follow_up = serializers.SerializerMethodField()

    class Meta:
        model = Observation
        fields = [
            "id",
            "commissioner",
            "visited_at",
            "recorded_at",
            "table",
            "checks",
            "injunctions",
            "follow_up_due",
            "follow_up",
        ]

    @extend_schema_field(FollowUpSerializer(allow_null=True))
    def get_follow_up(self, observation: Observation) -> dict[str, Any] | None:
        follow_up = getattr(observation, "follow_up", None)
        return None if follow_up is None else dict(FollowUpSerializer(follow_up).data)


class ObservationInput(StrictSerializer):
    visited_at = serializers.DateTimeField()
    checks = serializers.CharField(max_length=10000)
    injunctions = serializers.CharField(required=False, allow_blank=True, max_length=10000)
    table = serializers.IntegerField(
        source="table_number", required=False, allow_null=True, min_value=1, max_value=32767
    )


class ObservationFilters(Filters):
    table = serializers.IntegerField(min_value=1, max_value=32767, required=False)
    followed_up = serializers.BooleanField(required=False)
    lookups = {"table": "table__number", "followed_up": "follow_up__isnull"}

    def apply(self, queryset: Any) -> Any:
        followed = self.validated_data.pop("followed_up", None)
        queryset = super().apply(queryset)
        if followed is not None:
            queryset = queryset.filter(follow_up__isnull=not followed)
        return queryset


OBSERVATIONS = Observation.objects.select_related("commissioner", "table", "follow_up__director")


class ObservationList(Collection):
    """The register, oldest visit first. ``POST``: the commissioner records a visit, the checks
    made and any injunction."""

    serializer_class = ObservationSerializer
    read_roles = OVERSIGHT
    sees_all = OVERSIGHT
    queryset = OBSERVATIONS
    filters = ObservationFilters

    @extend_schema(request=ObservationInput, responses=ObservationSerializer)
    @idempotent
    def post(self, request: Request) -> Response:
        data = ObservationInput(data=request.data)
        data.is_valid(raise_exception=True)
        observation = services.observation_record(actor=request.user, **data.validated_data)
        return Response(ObservationSerializer(observation).data, status=201)


class ObservationDetail(Item):
    serializer_class = ObservationSerializer
    read_roles = OVERSIGHT
    sees_all = OVERSIGHT
    queryset = OBSERVATIONS
    noun = gettext_lazy("l'observation")


class FollowUpInput(StrictSerializer):
    action = serializers.CharField(max_length=10000)


FollowUp = record_act(
    "FollowUp",
    services.follow_up_record,
    FollowUpInput,
    "The director records what was done about an observation.",
    record_id="observation_id",
    answer=lambda pk: ObservationSerializer(OBSERVATIONS.get(pk=pk)).data,
    response=ObservationSerializer,
)

routes = [
    path("police/observations", ObservationList.as_view(), name="observations"),
    path("police/observations/<ref:id>", ObservationDetail.as_view(), name="observation"),
    path(
        "police/observations/<ref:id>/follow-up", FollowUp.as_view(), name="observation-follow-up"
    ),
]
