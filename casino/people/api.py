from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casino.errors import Conflict
from casino.people.login import client_ip, login_check
from casino.people.models import ApiToken
from casino.people.services import roles_of
from casino.people.tokens import token_issue, token_revoke, tokens_of


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


class TokenRequestSerializer(serializers.Serializer[Any]):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(max_length=128, trim_whitespace=False)
    otp = serializers.CharField(
        max_length=10, required=False, default="", allow_blank=True, help_text="TOTP code"
    )


class TokenIssuedSerializer(serializers.Serializer[Any]):
    token = serializers.CharField(help_text="shown once; send it as `Authorization: Token <key>`")
    prefix = serializers.CharField()
    expires_at = serializers.DateTimeField()


class TokenSerializer(serializers.Serializer[Any]):
    prefix = serializers.CharField()
    created_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField()
    revoked_at = serializers.DateTimeField(allow_null=True)
    revoked_reason = serializers.CharField()
    last_used_at = serializers.DateTimeField(allow_null=True)


class TokenObtain(APIView):
    """A token for one shift: username, password, and the TOTP code (``otp``) when the person's
    roles require one. Failed tries are counted per username and address (429 when locked)."""

    authentication_classes: list[Any] = []
    permission_classes: list[Any] = []

    @extend_schema(request=TokenRequestSerializer, responses=TokenIssuedSerializer)
    def post(self, request: Request) -> Response:
        data = TokenRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = login_check(
            username=data.validated_data["username"],
            password=data.validated_data["password"],
            otp=data.validated_data["otp"],
            ip=client_ip(request),
            where="api",
        )
        token, key = token_issue(user=user)
        return Response(
            TokenIssuedSerializer(
                {"token": key, "prefix": token.prefix, "expires_at": token.expires_at}
            ).data
        )


class Logout(APIView):
    """Revoke the token this request was made with."""

    @extend_schema(request=None, responses={204: None})
    def post(self, request: Request) -> Response:
        if not isinstance(request.auth, ApiToken):
            raise Conflict("log out with the token itself (a session is closed in the admin)")
        token_revoke(user=request.user, token=request.auth)
        return Response(status=204)


class TokenList(APIView):
    """The caller's own tokens (never the key, never anyone else's)."""

    @extend_schema(responses=TokenSerializer(many=True))
    def get(self, request: Request) -> Response:
        return Response(TokenSerializer(tokens_of(request.user), many=True).data)
