"""The table terminals' API for the floor: one view per act, each idempotent; reads for
regulators."""

from __future__ import annotations

import datetime as dt
import functools
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import generics, serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casino.api.acts import record_act
from casino.api.idempotency import idempotent
from casino.api.permissions import OVERSIGHT, HoldsRole
from casino.api.serializers import Empty, StrictSerializer
from casino.errors import NotFound
from casino.floor import coups, services
from casino.floor.models import (
    Coup,
    Duty,
    FloatCount,
    Game,
    PostedReglement,
    Settlement,
    Shift,
    Stake,
    Table,
)
from casino.people.roles import Role
from shoes.errors import CardRefused
from shoes.models import PackState
from shoes.services import card_refusal_record, packs_at

FLOOR_READERS = (*OVERSIGHT, Role.CHEF_DE_PARTIE, Role.TAILLEUR, Role.CROUPIER, Role.CAISSIER)


def _user(username: str, where: str) -> User:
    try:
        return User.objects.get(username=username, is_active=True)
    except User.DoesNotExist:
        raise NotFound(f"no active user {username!r}", where=where) from None


class ReglementSerializer(serializers.ModelSerializer[PostedReglement]):
    approved_by = serializers.StringRelatedField()

    class Meta:
        model = PostedReglement
        fields = [
            "id",
            "name",
            "version",
            "effective_from",
            "approved_by",
            "approved_at",
            "supersedes",
            "articles",
            "parameters",
        ]


class ReglementList(generics.ListAPIView[PostedReglement]):
    """Every posted version of every règlement, newest version first."""

    serializer_class = ReglementSerializer
    permission_classes = [HoldsRole]
    read_roles = FLOOR_READERS
    queryset = PostedReglement.objects.all()


class ReglementInput(StrictSerializer):
    name = serializers.CharField(max_length=60)
    spec = serializers.JSONField(help_text="a preset name or {preset, overrides}")
    effective_from = serializers.DateField()
    articles = serializers.ListField(child=serializers.DictField(), required=False)
    correction_approval_threshold = serializers.IntegerField(
        min_value=1,
        required=False,
        help_text="minor units: a dispute's corrections moving more need a second approver",
    )


class ReglementPost(APIView):
    """The commissioner approves the posting of a new règlement version."""

    @extend_schema(request=ReglementInput, responses=ReglementSerializer)
    @idempotent
    def post(self, request: Request) -> Response:
        data = ReglementInput(data=request.data)
        data.is_valid(raise_exception=True)
        posted = services.reglement_post(actor=request.user, **data.validated_data)
        return Response(ReglementSerializer(posted).data, status=201)


class TableSerializer(serializers.ModelSerializer[Table]):
    reglement = serializers.StringRelatedField()
    reglement_id = serializers.IntegerField()

    class Meta:
        model = Table
        fields = ["number", "game", "reglement", "reglement_id", "min_stake", "max_stake"]


# A table's limits are PostgreSQL integers (PositiveIntegerField): a larger limit is refused here,
# not by the database as a server error.
MAX_TABLE_LIMIT = 2**31 - 1


class TableSettingsInput(StrictSerializer):
    reglement_id = serializers.IntegerField(min_value=1)
    min_stake = serializers.IntegerField(min_value=1, max_value=MAX_TABLE_LIMIT)
    max_stake = serializers.IntegerField(min_value=1, max_value=MAX_TABLE_LIMIT)


class TableInput(TableSettingsInput):
    number = serializers.IntegerField(min_value=1, max_value=32767)
    game = serializers.ChoiceField(choices=[g.value for g in Game])


class TableList(generics.ListCreateAPIView[Table]):
    """The tables, with the règlement and limits their next séance opens under. ``POST``: the
    director creates a table (its bank, layout and prison accounts with it)."""

    serializer_class = TableSerializer
    permission_classes = [HoldsRole]
    read_roles = FLOOR_READERS
    queryset = Table.objects.select_related("reglement")

    @extend_schema(request=TableInput, responses=TableSerializer)
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return self.create_table(request)

    @idempotent
    def create_table(self, request: Request) -> Response:
        data = TableInput(data=request.data)
        data.is_valid(raise_exception=True)
        table = services.table_create(actor=request.user, **data.validated_data)
        return Response(TableSerializer(table).data, status=201)

    def get_permissions(self) -> list[Any]:
        # Writes check the director's role in the service; reads follow the floor's readers.
        if self.request.method == "POST":
            return [IsAuthenticated()]
        return super().get_permissions()


class TableSettings(APIView):
    """The director moves a table to another posted règlement or other limits, effective at its
    next séance."""

    @extend_schema(request=TableSettingsInput, responses=TableSerializer)
    @idempotent
    def post(self, request: Request, number: int) -> Response:
        data = TableSettingsInput(data=request.data)
        data.is_valid(raise_exception=True)
        table = _table(number)
        services.table_configure(actor=request.user, table_id=table.pk, **data.validated_data)
        return Response(TableSerializer(_table(number)).data, status=201)


class RundownSerializer(serializers.Serializer[Any]):
    opening = serializers.IntegerField()
    fills = serializers.IntegerField()
    credits = serializers.IntegerField()
    result = serializers.IntegerField()
    expected = serializers.IntegerField()
    closing = serializers.IntegerField(allow_null=True)
    variance = serializers.IntegerField(allow_null=True)


class DutySerializer(serializers.ModelSerializer[Duty]):
    person = serializers.CharField(source="person.username")
    assigned_by = serializers.CharField(source="assigned_by.username")
    ended_at = serializers.DateTimeField(source="end.at", allow_null=True, default=None)
    end_reason = serializers.CharField(source="end.reason", allow_null=True, default=None)

    class Meta:
        model = Duty
        fields = ["id", "person", "post", "started_at", "assigned_by", "ended_at", "end_reason"]


class ShiftSerializer(serializers.ModelSerializer[Shift]):
    table = serializers.IntegerField(source="table.number")
    staff = serializers.SerializerMethodField()
    rundown = serializers.SerializerMethodField()

    class Meta:
        model = Shift
        fields = ["id", "table", "opened_at", "closed_at", "staff", "rundown"]

    @extend_schema_field(DutySerializer(many=True))
    def get_staff(self, shift: Shift) -> list[dict[str, Any]]:
        duties = shift.duties.select_related("person", "assigned_by", "end")
        return list(DutySerializer(duties, many=True).data)

    def get_rundown(self, shift: Shift) -> dict[str, Any]:
        return dict(RundownSerializer(services.rundown(shift)).data)


class CountInput(StrictSerializer):
    table = serializers.IntegerField(min_value=1, help_text="table number")
    moment = serializers.ChoiceField(choices=["opening", "closing"])
    chips = serializers.DictField(
        child=serializers.IntegerField(min_value=0, max_value=1_000_000),
        help_text='{"10000": 20, "500": 100}: chips by denomination in minor units',
    )


class CountSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    table = serializers.IntegerField(source="table.number")
    moment = serializers.CharField()
    chips = serializers.DictField(child=serializers.IntegerField())
    total = serializers.IntegerField()
    counted_by = serializers.CharField(source="counted_by.username")
    countersigned_by = serializers.CharField(
        source="countersignature.by.username", allow_null=True, default=None
    )


def _table(number: int) -> Table:
    try:
        return Table.objects.get(number=number)
    except Table.DoesNotExist:
        raise NotFound(f"table {number} does not exist", where="table") from None


class CountRecord(APIView):
    """The counting croupier records the float, chips by denomination (the carnet d'avances)."""

    @extend_schema(request=CountInput, responses=CountSerializer)
    @idempotent
    def post(self, request: Request) -> Response:
        data = CountInput(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        count = services.count_record(
            actor=request.user, table_id=_table(v["table"]).pk, moment=v["moment"], chips=v["chips"]
        )
        return Response(CountSerializer(count).data, status=201)


class CountCountersign(APIView):
    """The director or a comité member countersigns a count, in their own act."""

    @extend_schema(request=None, responses=CountSerializer)
    @idempotent
    def post(self, request: Request, pk: int) -> Response:
        services.count_countersign(actor=request.user, count_id=pk)
        return Response(CountSerializer(FloatCount.objects.get(pk=pk)).data, status=201)


class ShiftOpenInput(StrictSerializer):
    table = serializers.IntegerField(min_value=1, help_text="table number")
    count = serializers.IntegerField(min_value=1, help_text="the countersigned opening count")
    tailleur = serializers.CharField(max_length=150, help_text="username of the tailleur")
    croupiers = serializers.ListField(
        child=serializers.CharField(max_length=150),
        min_length=1,
        max_length=12,
        help_text="usernames of the croupiers",
    )


class ShiftOpen(APIView):
    """Open a séance with its countersigned opening count and its staff on duty."""

    @extend_schema(request=ShiftOpenInput, responses=ShiftSerializer)
    @idempotent
    def post(self, request: Request) -> Response:
        data = ShiftOpenInput(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        shift = services.shift_open(
            actor=request.user,
            table=_table(v["table"]),
            count_id=v["count"],
            tailleur=_user(v["tailleur"], "tailleur"),
            croupiers=[_user(name, f"croupiers[{i}]") for i, name in enumerate(v["croupiers"])],
        )
        return Response(ShiftSerializer(shift).data, status=201)


class DutyInput(StrictSerializer):
    person = serializers.CharField(help_text="username")
    post = serializers.ChoiceField(choices=Duty.Post.choices)


class DutyAssign(APIView):
    """The chef de partie puts a tailleur (relieving the one dealing) or a croupier on duty."""

    @extend_schema(request=DutyInput, responses=ShiftSerializer)
    @idempotent
    def post(self, request: Request, pk: int) -> Response:
        data = DutyInput(data=request.data)
        data.is_valid(raise_exception=True)
        services.duty_assign(
            actor=request.user,
            shift_id=pk,
            person=_user(data.validated_data["person"], "person"),
            post=data.validated_data["post"],
        )
        return Response(ShiftSerializer(Shift.objects.get(pk=pk)).data, status=201)


class DutyEndInput(StrictSerializer):
    reason = serializers.CharField(max_length=40)


class DutyOff(APIView):
    """The chef de partie takes someone off duty."""

    @extend_schema(request=DutyEndInput, responses=ShiftSerializer)
    @idempotent
    def post(self, request: Request, pk: int) -> Response:
        data = DutyEndInput(data=request.data)
        data.is_valid(raise_exception=True)
        end = services.duty_end(actor=request.user, duty_id=pk, **data.validated_data)
        return Response(ShiftSerializer(end.duty.shift).data, status=201)


class CloseInput(StrictSerializer):
    count = serializers.IntegerField(min_value=1, help_text="the countersigned closing count")


class ShiftClose(APIView):
    """Close the séance with its countersigned closing count; a variance raises an anomaly."""

    @extend_schema(request=CloseInput, responses=ShiftSerializer)
    @idempotent
    def post(self, request: Request, pk: int) -> Response:
        data = CloseInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            shift = Shift.objects.get(pk=pk)
        except Shift.DoesNotExist:
            raise NotFound(f"séance {pk} does not exist", where="shift") from None
        services.shift_close(actor=request.user, shift=shift, count_id=data.validated_data["count"])
        return Response(ShiftSerializer(Shift.objects.get(pk=pk)).data, status=201)


class TransferInput(StrictSerializer):
    amount = serializers.IntegerField(min_value=1, max_value=services.MAX_AMOUNT)


class TransferSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    shift = serializers.IntegerField(source="shift_id")
    kind = serializers.CharField()
    amount = serializers.IntegerField()
    recorded_by = serializers.CharField(source="recorded_by.username")
    countersigned_by = serializers.CharField(
        source="countersignature.by.username", allow_null=True, default=None
    )
    signed = serializers.BooleanField(
        source="countersignature.signed", allow_null=True, default=None
    )


class _Transfer(APIView):
    kind = ""

    @idempotent
    def post(self, request: Request, pk: int) -> Response:
        data = TransferInput(data=request.data)
        data.is_valid(raise_exception=True)
        transfer = services.transfer_record(
            actor=request.user, shift_id=pk, kind=self.kind, amount=data.validated_data["amount"]
        )
        return Response(TransferSerializer(transfer).data, status=201)


class ShiftFill(_Transfer):
    """A fill (cage → table), recorded by one side; it moves when the other side signs."""

    kind = "fill"
    post = extend_schema(request=TransferInput, responses=TransferSerializer)(_Transfer.post)


class ShiftCredit(_Transfer):
    """A credit (table → cage), recorded by one side; it moves when the other side signs."""

    kind = "credit"
    post = extend_schema(request=TransferInput, responses=TransferSerializer)(_Transfer.post)


class SignInput(StrictSerializer):
    signed = serializers.BooleanField(required=False, default=True)
    remark = serializers.CharField(required=False, allow_blank=True, max_length=200)


class TransferCountersign(APIView):
    """The other side (cashier or chef de partie on duty) signs the fill or credit, or declines."""

    @extend_schema(request=SignInput, responses=TransferSerializer)
    @idempotent
    def post(self, request: Request, pk: int) -> Response:
        data = SignInput(data=request.data)
        data.is_valid(raise_exception=True)
        signature = services.transfer_countersign(
            actor=request.user, transfer_id=pk, **data.validated_data
        )
        return Response(TransferSerializer(signature.transfer).data, status=201)


class ShiftDetail(generics.RetrieveAPIView[Shift]):
    serializer_class = ShiftSerializer
    permission_classes = [HoldsRole]
    read_roles = FLOOR_READERS
    queryset = Shift.objects.select_related("table")


class SettlementSerializer(serializers.ModelSerializer[Settlement]):
    stake = serializers.CharField(source="stake.ref")

    class Meta:
        model = Settlement
        fields = ["stake", "outcome", "paid", "returned", "to_bank", "premium", "held", "level"]


class StakeSerializer(serializers.ModelSerializer[Stake]):
    holder = serializers.CharField(source="holder.code")
    withdrawn = serializers.SerializerMethodField()

    class Meta:
        model = Stake
        fields = ["id", "ref", "holder", "chance", "amount", "insured", "on_refait", "withdrawn"]

    def get_withdrawn(self, stake: Stake) -> bool:
        return hasattr(stake, "withdrawal")


class CoupSerializer(serializers.ModelSerializer[Coup]):
    table = serializers.IntegerField(source="shift.table.number")
    pack = serializers.CharField(source="pack.seal_number")
    reglement = serializers.StringRelatedField()
    cards = serializers.SerializerMethodField()
    stakes = StakeSerializer(many=True, read_only=True)
    outcome = serializers.SerializerMethodField()
    settlements = serializers.SerializerMethodField()

    class Meta:
        model = Coup
        fields = [
            "id",
            "table",
            "pack",
            "number",
            "reglement",
            "phase",
            "cards",
            "stakes",
            "outcome",
            "settlements",
        ]

    def get_cards(self, coup: Coup) -> list[str]:
        return list(coup.cards.order_by("seq").values_list("card", flat=True))

    def get_outcome(self, coup: Coup) -> dict[str, Any] | None:
        result = getattr(coup, "outcome", None)
        if result is None:
            return None
        return {
            "noir": {"cards": result.noir_cards, "total": result.noir_total},
            "rouge": {"cards": result.rouge_cards, "total": result.rouge_total},
            "result": result.result,
            "couleur": result.couleur or None,
            "void": result.void,
            "last": result.last,
            "announcement": result.announcement,
            "prison_after": result.prison_after,
        }

    def get_settlements(self, coup: Coup) -> list[dict[str, Any]]:
        return list(SettlementSerializer(coup.settlements.select_related("stake"), many=True).data)


def _coup(pk: int) -> Any:
    return CoupSerializer(
        Coup.objects.select_related("shift__table", "pack", "reglement").get(pk=pk)
    ).data


_coup_act = functools.partial(
    record_act, record_id="coup_id", answer=_coup, response=CoupSerializer
)


def _coup_response(coup_id: int, status: int = 201) -> Response:
    return Response(_coup(coup_id), status=status)


class CoupList(generics.ListAPIView[Coup]):
    """Coups for regulators and the pit: ``?shift=ID``, ``?table=N``, ``?date=YYYY-MM-DD``,
    ``?result=noir|rouge|apres|refait|incomplete``; oldest first."""

    serializer_class = CoupSerializer
    permission_classes = [HoldsRole]
    read_roles = FLOOR_READERS

    def get_queryset(self) -> Any:
        found = Coup.objects.select_related("shift__table", "pack", "reglement").order_by(
            "opened_at", "id"
        )
        params = self.request.query_params
        for name, lookup in (
            ("shift", "shift_id"),
            ("table", "shift__table__number"),
            ("date", "opened_at__date"),
            ("result", "outcome__result"),
        ):
            value = params.get(name)
            if value:
                if name in ("shift", "table") and not (value.isdigit() and len(value) < 10):
                    raise serializers.ValidationError({name: "a number"})
                if name == "date":
                    try:
                        value = dt.date.fromisoformat(value)
                    except ValueError:
                        raise serializers.ValidationError({name: "a date, YYYY-MM-DD"}) from None
                found = found.filter(**{lookup: value})
        return found


class CoupDetail(generics.RetrieveAPIView[Coup]):
    """A coup: its cards, stakes, outcome and settlements."""

    serializer_class = CoupSerializer
    permission_classes = [HoldsRole]
    read_roles = FLOOR_READERS
    queryset = Coup.objects.select_related("shift__table", "pack", "reglement")


class CoupOpenInput(StrictSerializer):
    shift_id = serializers.IntegerField(min_value=1)


class CoupOpen(APIView):
    """ "Faites vos jeux": a new coup at the séance's table."""

    @extend_schema(request=CoupOpenInput, responses=CoupSerializer)
    @idempotent
    def post(self, request: Request) -> Response:
        data = CoupOpenInput(data=request.data)
        data.is_valid(raise_exception=True)
        coup = coups.coup_open(actor=request.user, **data.validated_data)
        return _coup_response(coup.pk)


class StakeInput(StrictSerializer):
    ref = serializers.CharField(max_length=60)
    holder = serializers.CharField(max_length=40, help_text="seat number, or patron:<id>")
    chance = serializers.ChoiceField(choices=["rouge", "noir", "couleur", "inverse"])
    amount = serializers.IntegerField(min_value=1)
    insured = serializers.BooleanField(required=False, default=False)
    on_refait = serializers.CharField(required=False, allow_blank=True, max_length=20)


StakePlace = _coup_act(
    "StakePlace",
    coups.stake_place,
    StakeInput,
    "A stake while betting is open; after the first card it is refused and recorded.",
)


class StakeWithdraw(APIView):
    """Take a stake back before the first card."""

    @extend_schema(request=None, responses=CoupSerializer)
    @idempotent
    def post(self, request: Request, pk: int) -> Response:
        withdrawal = coups.stake_withdraw(actor=request.user, stake_id=pk)
        return _coup_response(withdrawal.stake.coup_id)


CoupCloseBetting = _coup_act(
    "CoupCloseBetting", coups.coup_close_betting, Empty, '"Le jeu est fait".'
)


class CardInput(StrictSerializer):
    code = serializers.CharField(max_length=3)


class LaidSerializer(serializers.Serializer[Any]):
    row = serializers.CharField()
    value = serializers.IntegerField()
    row_total = serializers.IntegerField()
    row_closed = serializers.BooleanField()
    coup_complete = serializers.BooleanField()
    next_row = serializers.CharField(allow_null=True)


class CoupCard(APIView):
    """Lay the next card; the answer says which row it went to and what comes next."""

    @extend_schema(request=CardInput, responses=LaidSerializer)
    @idempotent
    def post(self, request: Request, pk: int) -> Response:
        data = CardInput(data=request.data)
        data.is_valid(raise_exception=True)
        laid = coups.coup_lay_card(actor=request.user, coup_id=pk, **data.validated_data)
        return Response(LaidSerializer(laid).data, status=201)


class SettleInput(StrictSerializer):
    spoken = serializers.CharField(required=False, allow_blank=True, max_length=120)
    cut_card = serializers.BooleanField(required=False, default=False)


CoupSettle = _coup_act(
    "CoupSettle",
    coups.coup_settle,
    SettleInput,
    "Settle: losers collected, then winners paid; the tailleur's announcement may be given.",
)


class BatchInput(StrictSerializer):
    shift_id = serializers.IntegerField(min_value=1)
    stakes = StakeInput(many=True, required=False)
    cards = serializers.ListField(child=serializers.CharField(max_length=3))
    spoken = serializers.CharField(required=False, allow_blank=True, max_length=120)


class CoupBatch(APIView):
    """A whole coup from a paper record: the same acts, through the same services, in one
    transaction (all or nothing). Cards beyond the coup's end are refused."""

    @extend_schema(request=BatchInput, responses=CoupSerializer)
    @idempotent
    def post(self, request: Request) -> Response:
        data = BatchInput(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        try:
            return self._transcribe(request, v)
        except CardRefused as refused:
            # The whole coup is rolled back, but a foreign card is evidence: record it again.
            shift = Shift.objects.get(pk=v["shift_id"])
            pack = packs_at(shift.table_id, PackState.IN_PLAY).first()
            card = refused.card
            raise card_refusal_record(
                actor=request.user, pack_id=pack.pk, code=card, shift=shift
            ) from None

    def _transcribe(self, request: Request, v: dict[str, Any]) -> Response:
        with transaction.atomic():
            coup = coups.coup_open(actor=request.user, shift_id=v["shift_id"])
            for stake in v.get("stakes", []):
                coups.stake_place(actor=request.user, coup_id=coup.pk, **stake)
            coups.coup_close_betting(actor=request.user, coup_id=coup.pk)
            for index, code in enumerate(v["cards"]):
                if Coup.objects.get(pk=coup.pk).phase == "complete":
                    raise serializers.ValidationError(
                        {f"cards[{index}]": "the coup is complete before this card"}
                    )
                coups.coup_lay_card(actor=request.user, coup_id=coup.pk, code=code)
            coups.coup_settle(actor=request.user, coup_id=coup.pk, spoken=v.get("spoken", ""))
        return _coup_response(coup.pk)
