from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casino.people.services import roles_of


class MeSerializer(serializers.Serializer[Any]):
    username = serializers.CharField()
    full_name = serializers.CharField()
    roles = serializers.ListField(child=serializers.CharField())


class Me(APIView):
    """Who the token belongs to, and the roles it acts with."""

    @extend_schema(responses=MeSerializer)
    def get(self, request: Request) -> Response:
        profile = getattr(request.user, "staff_profile", None)
        return Response(
            MeSerializer(
                {
                    "username": request.user.username,
                    "full_name": profile.full_name if profile else request.user.get_username(),
                    "roles": sorted(r.value for r in roles_of(request.user)),
                }
            ).data
        )
