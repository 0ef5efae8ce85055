"""The police register over the API: the commissioner writes, the director follows up."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casino.api.idempotency import idempotent
from casino.api.permissions import OVERSIGHT, HoldsRole
from casino.api.serializers import StrictSerializer
from casino.police import services
from casino.police.models import Observation


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

    def get_follow_up(self, observation: Observation) -> dict[str, str] | None:
        follow_up = getattr(observation, "follow_up", None)
        if follow_up is None:
            return None
        return {
            "director": follow_up.director.username,
            "at": follow_up.at.isoformat(),
            "action": follow_up.action,
        }


class ObservationInput(StrictSerializer):
    visited_at = serializers.DateTimeField()
    checks = serializers.CharField()
    injunctions = serializers.CharField(required=False, allow_blank=True)
    table_number = serializers.IntegerField(required=False, allow_null=True, min_value=1)


class Observations(generics.ListAPIView[Observation]):
    """The register, newest visit first; the commissioner posts a new entry."""

    serializer_class = ObservationSerializer
    permission_classes = [HoldsRole]
    read_roles = OVERSIGHT
    queryset = Observation.objects.select_related("commissioner", "table", "follow_up__director")

    @extend_schema(request=ObservationInput, responses=ObservationSerializer)
    @idempotent
    def post(self, request: Request) -> Response:
        data = ObservationInput(data=request.data)
        data.is_valid(raise_exception=True)
        observation = services.observation_record(actor=request.user, **data.validated_data)
        return Response(ObservationSerializer(observation).data, status=201)

    def get_permissions(self) -> list[Any]:
        # The commissioner's role is checked by the service, which refuses anyone else with
        # ``role_required`` like every other act; the readers' list governs reading only.
        if self.request.method == "POST":
            return [IsAuthenticated()]
        return super().get_permissions()


class FollowUpInput(StrictSerializer):
    action = serializers.CharField()


class FollowUp(APIView):
    """The director records what was done about an observation."""

    @extend_schema(request=FollowUpInput, responses=ObservationSerializer)
    @idempotent
    def post(self, request: Request, pk: int) -> Response:
        data = FollowUpInput(data=request.data)
        data.is_valid(raise_exception=True)
        services.follow_up_record(actor=request.user, observation_id=pk, **data.validated_data)
        return Response(ObservationSerializer(Observation.objects.get(pk=pk)).data, status=201)
