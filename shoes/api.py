"""The card room over the API: the pack register (each pack with its history, its seal
verifications and its cards in the order they were laid) and the acts of its custody, each
idempotent; the commissioner's visas of the receipt register."""

from __future__ import annotations

import functools
from typing import Any

from django.db.models import Q
from django.urls import path
from django.utils.translation import gettext_lazy
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from casino.api.acts import record_act
from casino.api.idempotency import idempotent
from casino.api.permissions import CAGE_AND_PIT, FLOOR_READERS
from casino.api.resources import Collection, Filters, Item
from casino.api.serializers import Empty, StrictSerializer, reference
from casino.floor.models import Duty
from shoes import services
from shoes.models import (
    CardLaid,
    Pack,
    PackEvent,
    PackKind,
    PackState,
    Reconciliation,
    RegisterVisa,
    SealVerification,
    TalonCount,
)


class PackEventSerializer(serializers.ModelSerializer[PackEvent]):
    actor = serializers.CharField(source="actor.username")
    table = serializers.IntegerField(source="table.number", allow_null=True, default=None)

    class Meta:
        model = PackEvent
        fields = ["at", "kind", "actor", "table", "shift", "person", "details"]


class SealVerificationSerializer(serializers.ModelSerializer[SealVerification]):
    commissaire = serializers.CharField(source="commissaire.username")

    class Meta:
        model = SealVerification
        fields = ["at", "commissaire", "seal_number_read", "verdict", "remarks"]


class CardSerializer(serializers.ModelSerializer[CardLaid]):
    class Meta:
        model = CardLaid
        fields = ["seq", "taille", "card", "burned", "coup", "shift", "at"]


class ReconciliationSerializer(serializers.ModelSerializer[Reconciliation]):
    counted_by = serializers.CharField(source="counted_by.username")
    counted = serializers.DictField(child=serializers.IntegerField())
    missing = serializers.DictField(child=serializers.IntegerField())
    extra = serializers.DictField(child=serializers.IntegerField())

    class Meta:
        model = Reconciliation
        fields = ["at", "counted_by", "counted", "missing", "extra"]


class TalonCountSerializer(serializers.ModelSerializer[TalonCount]):
    counted_by = serializers.CharField(source="counted_by.username")
    cards = serializers.ListField(child=serializers.CharField())
    missing = serializers.DictField(child=serializers.IntegerField())
    extra = serializers.DictField(child=serializers.IntegerField())

    class Meta:
        model = TalonCount
        fields = [
            "taille",
            "at",
            "counted_by",
            "shift",
            "method",
            "cards",
            "expected",
            "missing",
            "extra",
        ]


class PackSerializer(serializers.ModelSerializer[Pack]):
    received_by = serializers.CharField(source="received_by.username")

    class Meta:
        model = Pack
        fields = [
            "id",
            "kind",
            "maker",
            "maker_pack_numbers",
            "seal_number",
            "sealing_authority",
            "received_at",
            "received_by",
            "store_location",
            "state",
        ]


class PackDetailSerializer(PackSerializer):
    verifications = SealVerificationSerializer(many=True, read_only=True)
    timeline = PackEventSerializer(source="events", many=True, read_only=True)
    cards = CardSerializer(source="cards_laid", many=True, read_only=True)
    reconciliation = ReconciliationSerializer(read_only=True, allow_null=True, default=None)

    class Meta(PackSerializer.Meta):
        fields = [
            *PackSerializer.Meta.fields,
            "verifications",
            "timeline",
            "cards",
            "reconciliation",
        ]


PACKS = Pack.objects.select_related("received_by")
PACK_DETAILS = PACKS.select_related("reconciliation__counted_by").prefetch_related(
    "verifications__commissaire",
    "events__actor",
    "events__table",
    "cards_laid",
    "talon_counts__counted_by",
)


class PackFilters(Filters):
    state = serializers.ChoiceField(choices=PackState.choices, required=False)
    kind = serializers.ChoiceField(choices=PackKind.choices, required=False)
    table = serializers.IntegerField(
        min_value=1, max_value=32767, required=False, help_text="opened at this table"
    )
    received = serializers.DateField(required=False, help_text="received on this day")
    lookups = {"received": "received_at__date"}

    def apply(self, queryset: Any) -> Any:
        table = self.validated_data.pop("table", None)
        queryset = super().apply(queryset)
        if table is not None:
            opened = PackEvent.objects.filter(kind=PackEvent.Kind.OPENED, table__number=table)
            queryset = queryset.filter(pk__in=opened.values("pack_id"))
        return queryset


class ReceiveInput(StrictSerializer):
    kind = serializers.ChoiceField(choices=PackKind.choices)
    maker = serializers.CharField(max_length=120)
    maker_pack_numbers = serializers.CharField(max_length=200)
    seal_number = serializers.CharField(max_length=60)
    sealing_authority = serializers.CharField(max_length=120)
    store_location = serializers.CharField(max_length=120)


class DealersPacks:
    """Oversight, the pit and the cage read the whole register; a dealer the packs of the séances
    he worked."""

    sees_all = CAGE_AND_PIT

    def scope(self, user: Any) -> Q:
        worked = Duty.objects.filter(person=user).values("shift_id")
        return Q(pk__in=PackEvent.objects.filter(shift__in=worked).values("pack_id"))


class PackList(DealersPacks, Collection):
    """The pack register, in the order received. ``POST``: the cashier enters a delivered sealed
    pack in the receipt register."""

    serializer_class = PackSerializer
    read_roles = FLOOR_READERS
    queryset = PACKS
    filters = PackFilters

    @extend_schema(request=ReceiveInput, responses=PackDetailSerializer)
    @idempotent
    def post(self, request: Request) -> Response:
        data = ReceiveInput(data=request.data)
        data.is_valid(raise_exception=True)
        pack = services.pack_receive(actor=request.user, **data.validated_data)
        return Response(_pack(pack.pk), status=201)


class PackDetail(DealersPacks, Item):
    """One pack with its whole history: seal verifications, every act oldest first, every card in
    the order laid (burned ones marked), its reconciliation."""

    serializer_class = PackDetailSerializer
    read_roles = FLOOR_READERS
    queryset = PACK_DETAILS
    noun = gettext_lazy("le jeu")


class VerifyInput(StrictSerializer):
    seal_number_read = serializers.CharField(max_length=60)
    verdict = serializers.ChoiceField(choices=SealVerification.Verdict.choices)
    remarks = serializers.CharField(required=False, allow_blank=True, max_length=2000)


class OpenInput(StrictSerializer):
    shift = reference(source="shift_id", help_text="the séance it is opened for")


class ShuffleInput(StrictSerializer):
    player = serializers.CharField(required=False, allow_blank=True, max_length=120)


class CutInput(StrictSerializer):
    cut_by = serializers.CharField(max_length=120)
    burn = serializers.ListField(
        child=serializers.CharField(max_length=3), required=False, max_length=10
    )


class ReplacementInput(StrictSerializer):
    demanded_by = serializers.CharField(max_length=120)
    side = serializers.ChoiceField(choices=[("players", "players"), ("bank", "bank")])


class RetireInput(StrictSerializer):
    counted = serializers.DictField(
        child=serializers.IntegerField(min_value=0, max_value=10_000),
        help_text='the cards counted back, by code: {"KS": 5, "TH": 6}',
    )


class PassInput(StrictSerializer):
    undealt = serializers.ListField(
        child=serializers.CharField(max_length=3, trim_whitespace=False),
        max_length=312,
        allow_empty=True,
        help_text="the undealt cards of the talon, the next card to deal first",
    )
    method = serializers.ChoiceField(
        choices=TalonCount.Method.choices,
        required=False,
        help_text="scanned in the order they lie, or counted by hand and listed (the default)",
    )


class DestroyInput(StrictSerializer):
    remarks = serializers.CharField(required=False, allow_blank=True, max_length=2000)


def _pack(pk: int) -> Any:
    return PackDetailSerializer(PACK_DETAILS.get(pk=pk)).data


_act = functools.partial(
    record_act, record_id="pack_id", answer=_pack, response=PackDetailSerializer
)


PackStore = _act("PackStore", services.pack_store, Empty, "Put a received pack in the store.")
PackVerify = _act(
    "PackVerify",
    services.seal_verify,
    VerifyInput,
    "The commissioner's seal verification (commissaire only).",
)
PackOpen = _act(
    "PackOpen", services.pack_open, OpenInput, "Open a verified pack at a table, in a séance."
)
PackShuffle = _act(
    "PackShuffle",
    services.pack_shuffle,
    ShuffleInput,
    "Record a shuffle (croupiers, then the tailleur last).",
)
PackCut = _act(
    "PackCut",
    services.pack_cut,
    CutInput,
    "The cut by a member of the public, and the burned cards.",
)
PackPass = _act(
    "PackPass",
    services.cards_pass,
    PassInput,
    "Les cartes passent: the tailleur on duty records the undealt cards of the talon (on a "
    "pack in play, or on one the last coup's settlement passed); the timeline's event says how "
    "many were counted and names the cards missing or extra (each a critical anomaly).",
)
PackReplace = _act(
    "PackReplace",
    services.replacement_demand,
    ReplacementInput,
    "A new sealed pack demanded: the old one is withdrawn.",
)
PackRetire = _act(
    "PackRetire",
    services.pack_retire,
    RetireInput,
    "Retire the pack with the count of the cards left.",
)
PackDestroy = _act(
    "PackDestroy",
    services.pack_destroy,
    DestroyInput,
    "Destruction, witnessed by the commissioner.",
)


class VisaInput(StrictSerializer):
    day = serializers.DateField()
    remarks = serializers.CharField(required=False, allow_blank=True, max_length=2000)


class VisaSerializer(serializers.ModelSerializer[RegisterVisa]):
    commissaire = serializers.CharField(source="commissaire.username")

    class Meta:
        model = RegisterVisa
        fields = ["day", "commissaire", "at", "packs_seen", "remarks"]


class VisaList(Collection):
    """The commissioner's visas of the receipt register, a page (a day) each. ``POST``: the
    commissioner visas a day's page."""

    serializer_class = VisaSerializer
    read_roles = CAGE_AND_PIT
    sees_all = CAGE_AND_PIT
    queryset = RegisterVisa.objects.select_related("commissaire")
    ordering = "day"

    @extend_schema(request=VisaInput, responses=VisaSerializer)
    @idempotent
    def post(self, request: Request) -> Response:
        data = VisaInput(data=request.data)
        data.is_valid(raise_exception=True)
        visa = services.register_visa(actor=request.user, **data.validated_data)
        return Response(VisaSerializer(visa).data, status=201)


class VisaDetail(Item):
    serializer_class = VisaSerializer
    read_roles = CAGE_AND_PIT
    sees_all = CAGE_AND_PIT
    queryset = VisaList.queryset
    lookup_field = lookup_url_kwarg = "day"
    noun = gettext_lazy("le visa du")


routes = [
    path("packs", PackList.as_view(), name="packs"),
    path("packs/<ref:id>", PackDetail.as_view(), name="pack"),
    path("packs/<ref:id>/store", PackStore.as_view(), name="pack-store"),
    path("packs/<ref:id>/verification", PackVerify.as_view(), name="pack-verify"),
    path("packs/<ref:id>/open", PackOpen.as_view(), name="pack-open"),
    path("packs/<ref:id>/shuffles", PackShuffle.as_view(), name="pack-shuffle"),
    path("packs/<ref:id>/cut", PackCut.as_view(), name="pack-cut"),
    path("packs/<ref:id>/pass", PackPass.as_view(), name="pack-pass"),
    path("packs/<ref:id>/replacement", PackReplace.as_view(), name="pack-replace"),
    path("packs/<ref:id>/retire", PackRetire.as_view(), name="pack-retire"),
    path("packs/<ref:id>/destroy", PackDestroy.as_view(), name="pack-destroy"),
    path("register/visas", VisaList.as_view(), name="register-visas"),
    path("register/visas/<day:day>", VisaDetail.as_view(), name="register-visa"),
]
