"""The card room and table terminals over the API: one view per act, each idempotent."""

from __future__ import annotations

import functools
from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casino.api.acts import record_act
from casino.api.idempotency import idempotent
from casino.api.permissions import OVERSIGHT, HoldsRole
from casino.api.serializers import Empty, StrictSerializer
from casino.people.roles import Role
from shoes import services
from shoes.models import Pack, PackEvent, PackKind, RegisterVisa, SealVerification, TalonCount


class PackEventSerializer(serializers.ModelSerializer[PackEvent]):
    actor = serializers.StringRelatedField()
    table = serializers.IntegerField(source="table.number", allow_null=True, default=None)

    class Meta:
        model = PackEvent
        fields = ["at", "kind", "actor", "table", "shift", "person", "details"]


class PackSerializer(serializers.ModelSerializer[Pack]):
    received_by = serializers.StringRelatedField()
    cards_laid = serializers.IntegerField(source="cards_laid.count", read_only=True)

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
            "cards_laid",
        ]


class PackDetailSerializer(PackSerializer):
    timeline = PackEventSerializer(source="events", many=True, read_only=True)

    class Meta(PackSerializer.Meta):
        fields = [*PackSerializer.Meta.fields, "timeline"]


class PackList(generics.ListAPIView[Pack]):
    """The pack register; filter with ``?state=``, ``?kind=``, ``?table=``, ``?received=DATE``."""

    serializer_class = PackSerializer
    permission_classes = [HoldsRole]
    read_roles = (*OVERSIGHT, Role.CHEF_DE_PARTIE, Role.CAISSIER, Role.TAILLEUR)

    def get_queryset(self) -> Any:
        packs = Pack.objects.all()
        params = self.request.query_params
        if params.get("state"):
            packs = packs.filter(state=params["state"])
        if params.get("kind"):
            packs = packs.filter(kind=params["kind"])
        if params.get("table", "").isdigit():
            packs = packs.filter(
                events__kind=PackEvent.Kind.OPENED, events__table__number=int(params["table"])
            ).distinct()
        if params.get("received"):
            packs = packs.filter(received_at__date=params["received"])
        return packs


class PackDetail(generics.RetrieveAPIView[Pack]):
    """One pack with its whole history, oldest act first."""

    serializer_class = PackDetailSerializer
    permission_classes = [HoldsRole]
    read_roles = PackList.read_roles
    queryset = Pack.objects.prefetch_related("events__actor", "events__table")


class ReceiveInput(StrictSerializer):
    kind = serializers.ChoiceField(choices=PackKind.choices)
    maker = serializers.CharField(max_length=120)
    maker_pack_numbers = serializers.CharField(max_length=200)
    seal_number = serializers.CharField(max_length=60)
    sealing_authority = serializers.CharField(max_length=120)
    store_location = serializers.CharField(max_length=120)


class PackReceive(APIView):
    """Enter a delivered sealed pack in the receipt register."""

    @extend_schema(request=ReceiveInput, responses=PackDetailSerializer)
    @idempotent
    def post(self, request: Request) -> Response:
        data = ReceiveInput(data=request.data)
        data.is_valid(raise_exception=True)
        pack = services.pack_receive(actor=request.user, **data.validated_data)
        return Response(PackDetailSerializer(pack).data, status=201)


class VerifyInput(StrictSerializer):
    seal_number_read = serializers.CharField(max_length=60)
    verdict = serializers.ChoiceField(choices=SealVerification.Verdict.choices)
    remarks = serializers.CharField(required=False, allow_blank=True)


class OpenInput(StrictSerializer):
    shift_id = serializers.IntegerField(min_value=1)


class ShuffleInput(StrictSerializer):
    player = serializers.CharField(required=False, allow_blank=True, max_length=120)


class CutInput(StrictSerializer):
    cut_by = serializers.CharField(max_length=120)
    burn = serializers.ListField(child=serializers.CharField(max_length=3), required=False)


class ReplacementInput(StrictSerializer):
    demanded_by = serializers.CharField(max_length=120)
    side = serializers.ChoiceField(choices=[("players", "players"), ("bank", "bank")])


class RetireInput(StrictSerializer):
    counted = serializers.DictField(child=serializers.IntegerField(min_value=0))


class CardCodeList(serializers.ListField):
    """A JSON list of card codes (strings); a bad item is named by its index, ``undealt[3]``.
    Whether a string is a card code is the service's check, named the same way."""

    child = serializers.CharField(max_length=3, trim_whitespace=False)

    def to_internal_value(self, data: Any) -> list[str]:
        if not isinstance(data, list):
            self.fail("not_a_list", input_type=type(data).__name__)
        codes = []
        for index, item in enumerate(data):
            try:
                if not isinstance(item, str):
                    raise serializers.ValidationError(
                        f'{item!r} is not a card code (a string such as "TH")'
                    )
                codes.append(self.child.run_validation(item))
            except serializers.ValidationError as exc:
                # A list with the fault at its index: the error's ``where`` is undealt[index].
                raise serializers.ValidationError(
                    [*([] for _ in range(index)), exc.detail]
                ) from None
        return codes


class PassInput(StrictSerializer):
    undealt = CardCodeList(
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
    remarks = serializers.CharField(required=False, allow_blank=True)


def _pack(pk: int) -> Any:
    return PackDetailSerializer(Pack.objects.prefetch_related("events").get(pk=pk)).data


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
    remarks = serializers.CharField(required=False, allow_blank=True)


class VisaOutput(serializers.ModelSerializer[RegisterVisa]):
    commissaire = serializers.StringRelatedField()

    class Meta:
        model = RegisterVisa
        fields = ["day", "commissaire", "at", "packs_seen", "remarks"]


class RegisterVisaCreate(APIView):
    """The commissioner's visa on the receipt register's page of a day."""

    @extend_schema(request=VisaInput, responses=VisaOutput)
    @idempotent
    def post(self, request: Request) -> Response:
        data = VisaInput(data=request.data)
        data.is_valid(raise_exception=True)
        visa = services.register_visa(actor=request.user, **data.validated_data)
        return Response(VisaOutput(visa).data, status=201)
