from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.db.models import Q
from django.urls import path
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casino.api.permissions import EVERYONE, OVERSIGHT
from casino.api.resources import Collection, Filters, Item, OutOfScope
from casino.errors import Conflict, RoleRequired
from casino.people.login import client_ip, login_check
from casino.people.models import ApiToken
from casino.people.roles import Role
from casino.people.tokens import token_issue, token_revoke


class PersonSerializer(serializers.ModelSerializer[User]):
    full_name = serializers.SerializerMethodField()
    licence_number = serializers.CharField(
        source="staff_profile.licence_number", allow_null=True, default=None
    )
    employer = serializers.CharField(source="staff_profile.employer", allow_null=True, default=None)
    roles = serializers.SerializerMethodField()
    active = serializers.BooleanField(source="is_active")

    class Meta:
        model = User
        fields = ["username", "full_name", "licence_number", "employer", "roles", "active"]

    def get_full_name(self, user: User) -> str:
        profile = getattr(user, "staff_profile", None)
        return profile.full_name if profile else user.get_username()

    @extend_schema_field(
        serializers.ListField(child=serializers.ChoiceField(choices=[r.value for r in Role]))
    )
    def get_roles(self, user: User) -> list[str]:
        return sorted(group.name for group in user.groups.all() if group.name in ROLE_NAMES)


class PersonFilters(Filters):
    role = serializers.ChoiceField(choices=[r.value for r in Role], required=False)
    active = serializers.BooleanField(required=False)
    lookups = {"role": "groups__name", "active": "is_active"}


ROLE_NAMES = frozenset(r.value for r in Role)
PEOPLE = User.objects.select_related("staff_profile").prefetch_related("groups")


class Yourself:
    """Everyone reads their own record; oversight (the director among them) reads the staff."""

    sees_all = OVERSIGHT

    def scope(self, user: Any) -> Q:
        return Q(pk=user.pk)


class PersonList(Yourself, Collection):
    """People: oneself, or everyone for oversight; ordered by username."""

    serializer_class = PersonSerializer
    read_roles = EVERYONE
    queryset = PEOPLE.filter(is_superuser=False)
    ordering = "username"
    filters = PersonFilters


class PersonDetail(Yourself, Item):
    serializer_class = PersonSerializer
    read_roles = EVERYONE
    queryset = PersonList.queryset
    lookup_field = lookup_url_kwarg = "username"
    noun = gettext_lazy("la personne")

    def get_object(self) -> Any:
        try:
            return super().get_object()
        except OutOfScope:
            raise RoleRequired(
                _("seule la direction lit le dossier d'une autre personne"), where="username"
            ) from None


class Me(APIView):
    """Who the token belongs to, and the roles it acts with."""

    @extend_schema(responses=PersonSerializer)
    def get(self, request: Request) -> Response:
        return Response(PersonSerializer(PEOPLE.get(pk=request.user.pk)).data)


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
    answers_200 = True  # a login, not a record made

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
            raise Conflict(
                _("se déconnecter avec le jeton lui-même (une session se ferme dans l'admin)"),
                where="Authorization",
            )
        token_revoke(user=request.user, token=request.auth)
        return Response(status=204)


class TokenList(Collection):
    """The caller's own tokens, oldest first (never the key, never anyone else's)."""

    serializer_class = TokenSerializer
    permission_classes = [IsAuthenticated]  # any signed-in person: their own tokens only
    queryset = ApiToken.objects.all()

    def scope(self, user: Any) -> Q:
        return Q(user=user)


routes = [
    path("token", TokenObtain.as_view(), name="api-token"),
    path("logout", Logout.as_view(), name="api-logout"),
    path("tokens", TokenList.as_view(), name="api-tokens"),
    path("me", Me.as_view(), name="me"),
    path("people", PersonList.as_view(), name="people"),
    path("people/<code:username>", PersonDetail.as_view(), name="person"),
]
