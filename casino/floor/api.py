"""The floor over the API: règlements, tables, séances, duties, counts, fills and credits, coups,
stakes, accounts and movements. Each is a collection (``GET`` a page, ``POST`` the act that makes
one) and items (``GET`` one by its reference, ``POST`` an act on it). Every write is idempotent."""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Iterator
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import OuterRef, Prefetch, Q, QuerySet, Subquery, Sum, Value
from django.db.models.functions import Coalesce
from django.urls import path
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casino.api.acts import record_act
from casino.api.idempotency import idempotent
from casino.api.permissions import CAGE_AND_PIT, DEALERS, FLOOR_READERS, PIT
from casino.api.resources import Collection, Filters, Item
from casino.api.serializers import Empty, StrictSerializer, amount, reference
from casino.errors import DomainError, NotFound
from casino.floor import coups, selectors, services
from casino.floor.models import (
    Account,
    CashTransfer,
    Coup,
    CoupPhase,
    Duty,
    FloatCount,
    Game,
    Movement,
    PostedReglement,
    Settlement,
    Shift,
    Stake,
    Table,
)
from shoes.errors import CardRefused
from shoes.models import PackState
from shoes.services import card_refusal_record, packs_at

USERNAME = serializers.RegexField(r"^[\w.@+-]{1,150}$", help_text="a person's username")


def _user(username: str, where: str) -> User:
    try:
        return User.objects.get(username=username, is_active=True)
    except User.DoesNotExist:
        raise NotFound(
            _("aucune personne active %(username)r") % {"username": username}, where=where
        ) from None


def _table(number: int, where: str = "table") -> Table:
    try:
        return Table.objects.get(number=number)
    except Table.DoesNotExist:
        raise NotFound(
            _("la table %(number)s n'existe pas") % {"number": number}, where=where
        ) from None


def _worked(user: Any) -> QuerySet[Duty]:
    """The séances a dealer has been on duty at (his table, then and now)."""
    return Duty.objects.filter(person=user).values("shift_id")


class Dealers:
    """The floor's scope: oversight, the pit and the cage see every record; a tailleur or a
    croupier the records of the séances he worked (``shift_path``: the lookup to the séance)."""

    sees_all = CAGE_AND_PIT
    shift_path = "shift"

    def scope(self, user: Any) -> Q:
        return Q(**{f"{self.shift_path}__in": _worked(user)})


# --- règlements --------------------------------------------------------------------------------


class ReglementSerializer(serializers.ModelSerializer[PostedReglement]):
    approved_by = serializers.CharField(source="approved_by.username")
    articles = serializers.ListField(child=serializers.DictField(child=serializers.CharField()))
    parameters = serializers.SerializerMethodField(
        help_text="the engine's parameters under RULES.md's names"
    )

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
            "correction_approval_threshold",
            "articles",
            "parameters",
        ]

    @extend_schema_field(serializers.DictField())
    def get_parameters(self, posted: PostedReglement) -> dict[str, Any]:
        parameters: dict[str, Any] = json.loads(posted.parameters)
        return parameters


class ArticleInput(StrictSerializer):
    number = serializers.CharField(max_length=10)
    fr = serializers.CharField(max_length=2000)
    en = serializers.CharField(max_length=2000)


class ReglementInput(StrictSerializer):
    name = serializers.CharField(max_length=60)
    spec = serializers.JSONField(
        help_text='a preset name ("baden-1854") or {"preset": …, "overrides": {…}} in RULES.md\'s names'
    )
    effective_from = serializers.DateField()
    articles = ArticleInput(many=True, required=False)
    correction_approval_threshold = amount(
        10**12,
        required=False,
        help_text="minor units: a dispute's corrections moving more need a second approver",
    )


class ReglementFilters(Filters):
    name = serializers.CharField(max_length=60, required=False)


class ReglementList(Collection):
    """Every posted version of every règlement. ``POST``: the commissioner approves the posting of
    a new version."""

    serializer_class = ReglementSerializer
    read_roles = FLOOR_READERS
    sees_all = FLOOR_READERS  # posted in the room: everyone reads it
    queryset = PostedReglement.objects.select_related("approved_by")
    filters = ReglementFilters

    @extend_schema(request=ReglementInput, responses=ReglementSerializer)
    @idempotent
    def post(self, request: Request) -> Response:
        data = ReglementInput(data=request.data)
        data.is_valid(raise_exception=True)
        posted = services.reglement_post(actor=request.user, **data.validated_data)
        return Response(ReglementSerializer(posted).data, status=201)


class ReglementDetail(Item):
    serializer_class = ReglementSerializer
    read_roles = FLOOR_READERS
    sees_all = FLOOR_READERS
    queryset = ReglementList.queryset
    noun = gettext_lazy("le règlement")


# --- tables ------------------------------------------------------------------------------------


class TableSerializer(serializers.ModelSerializer[Table]):
    class Meta:
        model = Table
        fields = ["number", "game", "reglement", "min_stake", "max_stake"]


class PrisonerSerializer(serializers.Serializer[Any]):
    stake = serializers.IntegerField()
    chance = serializers.CharField()
    held = serializers.IntegerField()
    level = serializers.IntegerField()


class BalancesSerializer(serializers.Serializer[Any]):
    bank = serializers.IntegerField(help_text="what came into the bank in this séance, less out")
    layout = serializers.IntegerField(help_text="stakes on the layout now")
    prison = serializers.IntegerField(help_text="what the prison took in this séance, less out")


class TableStateSerializer(TableSerializer):
    """A table as a terminal finds it when it starts: its séance, the coup in progress, the prison
    and the séance's balances."""

    seance = serializers.IntegerField(allow_null=True, help_text="the séance open here")
    open_coup = serializers.IntegerField(allow_null=True, help_text="the coup in progress")
    pack = serializers.IntegerField(allow_null=True, help_text="the pack in play")
    prison = PrisonerSerializer(many=True)
    balances = BalancesSerializer(allow_null=True)

    class Meta(TableSerializer.Meta):
        fields = [
            *TableSerializer.Meta.fields,
            "seance",
            "open_coup",
            "pack",
            "prison",
            "balances",
        ]

    def to_representation(self, table: Table) -> Any:
        state = selectors.table_state(table)
        return super().to_representation(state)


# A table's limits are PostgreSQL integers (PositiveIntegerField): a larger limit is refused here,
# not by the database as a server error.
MAX_TABLE_LIMIT = 2**31 - 1


class TableSettingsInput(StrictSerializer):
    reglement = reference(help_text="the posted règlement version")
    min_stake = amount(MAX_TABLE_LIMIT)
    max_stake = amount(MAX_TABLE_LIMIT)


class TableInput(TableSettingsInput):
    number = serializers.IntegerField(min_value=1, max_value=32767)
    game = serializers.ChoiceField(choices=Game.choices)


class TableFilters(Filters):
    game = serializers.ChoiceField(choices=Game.choices, required=False)


class TableList(Collection):
    """The tables, with the règlement and limits their next séance opens under. ``POST``: the
    director creates a table (its bank, layout and prison accounts with it)."""

    serializer_class = TableSerializer
    read_roles = FLOOR_READERS
    sees_all = FLOOR_READERS
    queryset = Table.objects.all()
    ordering = "number"
    filters = TableFilters

    @extend_schema(request=TableInput, responses=TableSerializer)
    @idempotent
    def post(self, request: Request) -> Response:
        data = TableInput(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        table = services.table_create(
            actor=request.user,
            number=v["number"],
            game=v["game"],
            reglement_id=v["reglement"],
            min_stake=v["min_stake"],
            max_stake=v["max_stake"],
        )
        return Response(TableSerializer(table).data, status=201)


class TableDetail(Item):
    """A table as it stands: the séance open there, the coup in progress, the pack in play, the
    prison and the séance's balances (what a terminal reads when it starts)."""

    serializer_class = TableStateSerializer
    read_roles = FLOOR_READERS
    sees_all = FLOOR_READERS
    queryset = Table.objects.all()
    lookup_field = lookup_url_kwarg = "number"
    noun = gettext_lazy("la table")


class TableSettings(APIView):
    """The director moves a table to another posted règlement or other limits, effective at its
    next séance."""

    @extend_schema(request=TableSettingsInput, responses=TableSerializer)
    @idempotent
    def post(self, request: Request, number: int) -> Response:
        data = TableSettingsInput(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        services.table_configure(
            actor=request.user,
            table_id=_table(number, where="number").pk,
            reglement_id=v["reglement"],
            min_stake=v["min_stake"],
            max_stake=v["max_stake"],
        )
        return Response(TableSerializer(_table(number)).data, status=201)


# --- séances and who is on duty ----------------------------------------------------------------


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
        fields = [
            "id",
            "shift",
            "person",
            "post",
            "started_at",
            "assigned_by",
            "ended_at",
            "end_reason",
        ]


class ShiftSerializer(serializers.ModelSerializer[Shift]):
    table = serializers.IntegerField(source="table.number")
    opened_by = serializers.CharField(source="opened_by.username")
    staff = serializers.SerializerMethodField()
    rundown = serializers.SerializerMethodField()

    class Meta:
        model = Shift
        fields = [
            "id",
            "table",
            "reglement",
            "min_stake",
            "max_stake",
            "opening_count",
            "opened_at",
            "opened_by",
            "closed_at",
            "staff",
            "rundown",
        ]

    @extend_schema_field(DutySerializer(many=True))
    def get_staff(self, shift: Shift) -> list[dict[str, Any]]:
        duties = shift.duties.select_related("person", "assigned_by", "end")
        return list(DutySerializer(duties, many=True).data)

    @extend_schema_field(RundownSerializer)
    def get_rundown(self, shift: Shift) -> dict[str, Any]:
        return dict(RundownSerializer(services.rundown(shift)).data)


class ShiftOpenInput(StrictSerializer):
    table = serializers.IntegerField(min_value=1, max_value=32767, help_text="table number")
    count = reference(help_text="the countersigned opening count")
    tailleur = serializers.CharField(max_length=150, help_text="username of the tailleur")
    croupiers = serializers.ListField(
        child=serializers.CharField(max_length=150),
        min_length=1,
        max_length=12,
        help_text="usernames of the croupiers",
    )


class ShiftFilters(Filters):
    table = serializers.IntegerField(min_value=1, max_value=32767, required=False)
    date = serializers.DateField(required=False, help_text="opened on this day (the casino's)")
    open = serializers.BooleanField(required=False, help_text="true: not closed yet")
    lookups = {"table": "table__number", "date": "opened_at__date", "open": "closed_at__isnull"}


class ShiftList(Dealers, Collection):
    """The séances. ``POST``: the chef de partie opens one with its countersigned opening count and
    its staff on duty."""

    serializer_class = ShiftSerializer
    read_roles = FLOOR_READERS
    queryset = Shift.objects.select_related("table", "opened_by")
    filters = ShiftFilters
    shift_path = "pk"

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


class ShiftDetail(Dealers, Item):
    serializer_class = ShiftSerializer
    read_roles = FLOOR_READERS
    queryset = ShiftList.queryset
    shift_path = "pk"
    noun = gettext_lazy("la séance")


class CloseInput(StrictSerializer):
    count = reference(help_text="the countersigned closing count")


class ShiftClose(APIView):
    """Close the séance with its countersigned closing count; a variance raises an anomaly."""

    @extend_schema(request=CloseInput, responses=ShiftSerializer)
    @idempotent
    def post(self, request: Request, id: int) -> Response:
        data = CloseInput(data=request.data)
        data.is_valid(raise_exception=True)
        shift = Shift.objects.filter(pk=id).first()
        if shift is None:
            raise NotFound(_("la séance %(id)s n'existe pas") % {"id": id}, where="id")
        services.shift_close(actor=request.user, shift=shift, count_id=data.validated_data["count"])
        return Response(ShiftSerializer(Shift.objects.get(pk=id)).data, status=201)


class DutyInput(StrictSerializer):
    shift = reference(help_text="the séance")
    person = serializers.CharField(max_length=150, help_text="username")
    post = serializers.ChoiceField(choices=Duty.Post.choices)


class DutyFilters(Filters):
    shift = reference(required=False)
    person = serializers.CharField(max_length=150, required=False, help_text="username")
    post = serializers.ChoiceField(choices=Duty.Post.choices, required=False)
    open = serializers.BooleanField(required=False, help_text="true: still on duty")
    lookups = {"person": "person__username", "open": "end__isnull"}


class DutyList(Dealers, Collection):
    """Who worked each séance, as what, from when to when. ``POST``: the chef de partie on duty
    puts a tailleur (relieving the one dealing), a croupier or another chef de partie on duty."""

    serializer_class = DutySerializer
    read_roles = FLOOR_READERS
    queryset = Duty.objects.select_related("person", "assigned_by", "end")
    filters = DutyFilters

    @extend_schema(request=DutyInput, responses=DutySerializer)
    @idempotent
    def post(self, request: Request) -> Response:
        data = DutyInput(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        duty = services.duty_assign(
            actor=request.user,
            shift_id=v["shift"],
            person=_user(v["person"], "person"),
            post=v["post"],
        )
        return Response(DutySerializer(DutyList.queryset.get(pk=duty.pk)).data, status=201)


class DutyDetail(Dealers, Item):
    serializer_class = DutySerializer
    read_roles = FLOOR_READERS
    queryset = DutyList.queryset
    noun = gettext_lazy("le service")


class DutyEndInput(StrictSerializer):
    reason = serializers.CharField(max_length=40)


DutyEnd = record_act(
    "DutyEnd",
    services.duty_end,
    DutyEndInput,
    "The chef de partie on duty takes someone off duty.",
    record_id="duty_id",
    answer=lambda pk: DutySerializer(DutyList.queryset.get(pk=pk)).data,
    response=DutySerializer,
)


# --- the carnet d'avances: counts, fills and credits -------------------------------------------


class CountSerializer(serializers.ModelSerializer[FloatCount]):
    table = serializers.IntegerField(source="table.number")
    seance = serializers.SerializerMethodField(help_text="the séance it opens or closes")
    counted_by = serializers.CharField(source="counted_by.username")
    chips = serializers.DictField(child=serializers.IntegerField())
    countersigned_by = serializers.CharField(
        source="countersignature.by.username", allow_null=True, default=None
    )
    countersigned_at = serializers.DateTimeField(
        source="countersignature.at", allow_null=True, default=None
    )

    class Meta:
        model = FloatCount
        fields = [
            "id",
            "table",
            "seance",
            "moment",
            "chips",
            "total",
            "counted_by",
            "at",
            "countersigned_by",
            "countersigned_at",
        ]

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_seance(self, count: FloatCount) -> int | None:
        if count.shift_id is not None:
            return count.shift_id
        opened = getattr(count, "opened", None)
        return opened.pk if opened is not None else None


class CountInput(StrictSerializer):
    table = serializers.IntegerField(min_value=1, max_value=32767, help_text="table number")
    moment = serializers.ChoiceField(choices=FloatCount.Moment.choices)
    chips = serializers.DictField(
        child=serializers.IntegerField(min_value=0, max_value=1_000_000),
        help_text='{"10000": 20, "500": 100}: chips by denomination in minor units',
    )


class CountFilters(Filters):
    table = serializers.IntegerField(min_value=1, max_value=32767, required=False)
    moment = serializers.ChoiceField(choices=FloatCount.Moment.choices, required=False)
    signed = serializers.BooleanField(required=False, help_text="true: countersigned")
    lookups = {"table": "table__number", "signed": "countersignature__isnull"}

    def apply(self, queryset: QuerySet[Any]) -> QuerySet[Any]:
        signed = self.validated_data.pop("signed", None)
        queryset = super().apply(queryset)
        if signed is not None:
            queryset = queryset.filter(countersignature__isnull=not signed)
        return queryset


class CountList(Collection):
    """The carnet d'avances: the float counted by denomination at each opening and closing.
    ``POST``: the counting croupier records a count (it counts once countersigned)."""

    serializer_class = CountSerializer
    read_roles = FLOOR_READERS
    sees_all = CAGE_AND_PIT
    queryset = FloatCount.objects.select_related(
        "table", "counted_by", "countersignature__by", "opened"
    )
    filters = CountFilters

    def scope(self, user: Any) -> Q:
        worked = _worked(user)
        return Q(counted_by=user) | Q(shift__in=worked) | Q(opened__in=worked)

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


class CountDetail(Item):
    serializer_class = CountSerializer
    read_roles = FLOOR_READERS
    sees_all = CAGE_AND_PIT
    queryset = CountList.queryset
    scope = CountList.scope
    noun = gettext_lazy("le compte")


CountCountersign = record_act(
    "CountCountersign",
    services.count_countersign,
    Empty,
    "The director or a comité member countersigns a count, in their own act.",
    record_id="count_id",
    answer=lambda pk: CountSerializer(CountList.queryset.get(pk=pk)).data,
    response=CountSerializer,
)


class TransferSerializer(serializers.ModelSerializer[CashTransfer]):
    recorded_by = serializers.CharField(source="recorded_by.username")
    countersigned_by = serializers.CharField(
        source="countersignature.by.username", allow_null=True, default=None
    )
    signed = serializers.BooleanField(
        source="countersignature.signed",
        allow_null=True,
        default=None,
        help_text="null: waiting for the other side; false: declined, nothing moved",
    )
    remark = serializers.CharField(source="countersignature.remark", allow_null=True, default=None)

    class Meta:
        model = CashTransfer
        fields = [
            "id",
            "shift",
            "kind",
            "amount",
            "recorded_by",
            "at",
            "countersigned_by",
            "signed",
            "remark",
        ]


class TransferInput(StrictSerializer):
    shift = reference(help_text="the séance")
    kind = serializers.ChoiceField(choices=CashTransfer.Kind.choices)
    amount = amount(services.MAX_AMOUNT)


class TransferFilters(Filters):
    shift = reference(required=False)
    kind = serializers.ChoiceField(choices=CashTransfer.Kind.choices, required=False)
    pending = serializers.BooleanField(required=False, help_text="true: waiting for a signature")
    lookups = {"pending": "countersignature__isnull"}


class TransferList(Dealers, Collection):
    """Fills (cage → table) and credits (table → cage). ``POST``: one side records it (the cashier,
    or the chef de partie on duty); it moves when the other side signs."""

    serializer_class = TransferSerializer
    read_roles = FLOOR_READERS
    queryset = CashTransfer.objects.select_related("recorded_by", "countersignature__by")
    filters = TransferFilters

    @extend_schema(request=TransferInput, responses=TransferSerializer)
    @idempotent
    def post(self, request: Request) -> Response:
        data = TransferInput(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        transfer = services.transfer_record(
            actor=request.user, shift_id=v["shift"], kind=v["kind"], amount=v["amount"]
        )
        return Response(TransferSerializer(transfer).data, status=201)


class TransferDetail(Dealers, Item):
    serializer_class = TransferSerializer
    read_roles = FLOOR_READERS
    queryset = TransferList.queryset
    noun = gettext_lazy("le transfert")


class SignInput(StrictSerializer):
    signed = serializers.BooleanField(required=False, default=True)
    remark = serializers.CharField(required=False, allow_blank=True, max_length=200)


TransferCountersign = record_act(
    "TransferCountersign",
    services.transfer_countersign,
    SignInput,
    "The other side (cashier or chef de partie on duty) signs the fill or credit, or declines.",
    record_id="transfer_id",
    answer=lambda pk: TransferSerializer(TransferList.queryset.get(pk=pk)).data,
    response=TransferSerializer,
)


# --- coups and stakes --------------------------------------------------------------------------


class SettlementSerializer(serializers.ModelSerializer[Settlement]):
    class Meta:
        model = Settlement
        fields = [
            "stake",
            "coup",
            "outcome",
            "paid",
            "returned",
            "to_bank",
            "premium",
            "held",
            "level",
        ]


class StakeSerializer(serializers.ModelSerializer[Stake]):
    holder = serializers.CharField(source="holder.code", help_text="the account staked from")
    placed_by = serializers.CharField(source="placed_by.username")
    ref = serializers.CharField(
        help_text="the terminal's own label of the stake, unique in its coup"
    )
    withdrawn = serializers.SerializerMethodField()

    class Meta:
        model = Stake
        fields = [
            "id",
            "coup",
            "ref",
            "holder",
            "chance",
            "amount",
            "insured",
            "on_refait",
            "placed_at",
            "placed_by",
            "withdrawn",
        ]

    def get_withdrawn(self, stake: Stake) -> bool:
        return hasattr(stake, "withdrawal")


class StakeDetailSerializer(StakeSerializer):
    settlements = SettlementSerializer(many=True, read_only=True)

    class Meta(StakeSerializer.Meta):
        fields = [*StakeSerializer.Meta.fields, "settlements"]


class RowSerializer(serializers.Serializer[Any]):
    cards = serializers.ListField(child=serializers.CharField())
    total = serializers.IntegerField()


class AnnouncementSerializer(serializers.Serializer[Any]):
    noir = serializers.CharField(allow_null=True)
    rouge = serializers.CharField(allow_null=True)
    result = serializers.CharField(allow_null=True)


class OutcomeSerializer(serializers.Serializer[Any]):
    noir = RowSerializer()
    rouge = RowSerializer()
    result = serializers.CharField()
    couleur = serializers.CharField(allow_null=True)
    void = serializers.BooleanField()
    last = serializers.BooleanField()
    announcement = AnnouncementSerializer()
    spoken = serializers.CharField(allow_null=True, help_text="the tailleur's words, if recorded")
    prison_after = PrisonerSerializer(many=True)
    settled_at = serializers.DateTimeField()
    settled_by = serializers.CharField()


class CancellationSerializer(serializers.Serializer[Any]):
    by = serializers.CharField(source="by.username")
    at = serializers.DateTimeField()
    reason = serializers.CharField()


class CoupSerializer(serializers.ModelSerializer[Coup]):
    table = serializers.IntegerField(source="shift.table.number")
    opened_by = serializers.CharField(source="opened_by.username")
    cards = serializers.SerializerMethodField(help_text="the cards laid, in order")
    stakes = StakeSerializer(many=True, read_only=True)
    outcome = serializers.SerializerMethodField()
    settlements = SettlementSerializer(many=True, read_only=True)
    cancellation = CancellationSerializer(read_only=True, allow_null=True, default=None)

    class Meta:
        model = Coup
        fields = [
            "id",
            "table",
            "shift",
            "pack",
            "taille",
            "number",
            "reglement",
            "min_stake",
            "max_stake",
            "opened_at",
            "opened_by",
            "phase",
            "cards",
            "stakes",
            "outcome",
            "settlements",
            "cancellation",
        ]

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_cards(self, coup: Coup) -> list[str]:
        return [c.card for c in coup.cards.all()]

    @extend_schema_field(OutcomeSerializer(allow_null=True))
    def get_outcome(self, coup: Coup) -> dict[str, Any] | None:
        result = getattr(coup, "outcome", None)
        if result is None:
            return None
        return OutcomeSerializer(self._outcome(result)).data

    @staticmethod
    def _outcome(result: Any) -> dict[str, Any]:
        return {
            "noir": {"cards": result.noir_cards, "total": result.noir_total},
            "rouge": {"cards": result.rouge_cards, "total": result.rouge_total},
            "result": result.result,
            "couleur": result.couleur or None,
            "void": result.void,
            "last": result.last,
            "announcement": result.announcement,
            "spoken": result.spoken or None,
            "prison_after": selectors.prisoners(result.prison_after),
            "settled_at": result.settled_at,
            "settled_by": result.settled_by.username,
        }


# A coup in three queries whatever it holds: itself, its stakes (with their holders), its
# settlements and its cards (a terminal reads the open coup at every restart).
COUPS = Coup.objects.select_related(
    "shift__table", "opened_by", "outcome__settled_by", "cancellation__by"
).prefetch_related(
    Prefetch(
        "stakes",
        queryset=Stake.objects.select_related("holder", "placed_by", "withdrawal"),
    ),
    "settlements",
    "cards",
)


def _coup(pk: int) -> Any:
    return CoupSerializer(COUPS.get(pk=pk)).data


class CoupOpenInput(StrictSerializer):
    shift = reference(help_text="the séance")


class CoupFilters(Filters):
    shift = reference(required=False)
    table = serializers.IntegerField(min_value=1, max_value=32767, required=False)
    date = serializers.DateField(required=False, help_text="opened on this day")
    result = serializers.ChoiceField(
        choices=["noir", "rouge", "apres", "refait", "incomplete"], required=False
    )
    phase = serializers.ChoiceField(choices=CoupPhase.choices, required=False)
    open = serializers.BooleanField(required=False, help_text="true: in progress")
    lookups = {
        "table": "shift__table__number",
        "date": "opened_at__date",
        "result": "outcome__result",
    }

    def apply(self, queryset: QuerySet[Any]) -> QuerySet[Any]:
        in_progress = self.validated_data.pop("open", None)
        queryset = super().apply(queryset)
        if in_progress is not None:
            finished = Q(phase__in=coups.FINISHED)
            queryset = queryset.filter(~finished if in_progress else finished)
        return queryset


class CoupList(Dealers, Collection):
    """Coups in the order they were opened. ``POST``: "faites vos jeux", a new coup at the séance's
    table (the tailleur on duty)."""

    serializer_class = CoupSerializer
    read_roles = (*PIT, *DEALERS)
    sees_all = PIT
    queryset = COUPS
    filters = CoupFilters

    @extend_schema(request=CoupOpenInput, responses=CoupSerializer)
    @idempotent
    def post(self, request: Request) -> Response:
        data = CoupOpenInput(data=request.data)
        data.is_valid(raise_exception=True)
        coup = coups.coup_open(actor=request.user, shift_id=data.validated_data["shift"])
        return Response(_coup(coup.pk), status=201)


class CoupDetail(Dealers, Item):
    """A coup: its cards, stakes, outcome and settlements."""

    serializer_class = CoupSerializer
    read_roles = CoupList.read_roles
    sees_all = PIT
    queryset = COUPS
    noun = gettext_lazy("le coup")


_coup_act = functools.partial(
    record_act, record_id="coup_id", answer=_coup, response=CoupSerializer
)

CoupCloseBetting = _coup_act(
    "CoupCloseBetting", coups.coup_close_betting, Empty, '"Le jeu est fait".'
)


class CardInput(StrictSerializer):
    code = serializers.CharField(max_length=3, help_text="KS, TH or 10H, 2C…")


class LaidSerializer(serializers.Serializer[Any]):
    row = serializers.CharField()
    value = serializers.IntegerField()
    row_total = serializers.IntegerField()
    row_closed = serializers.BooleanField()
    coup_complete = serializers.BooleanField()
    next_row = serializers.CharField(allow_null=True)


class CoupCard(APIView):
    """Lay the next card; the answer says which row it went to and what comes next. A card the
    pack cannot hold is refused and recorded (``foreign_card``)."""

    @extend_schema(request=CardInput, responses=LaidSerializer)
    @idempotent
    def post(self, request: Request, id: int) -> Response:
        data = CardInput(data=request.data)
        data.is_valid(raise_exception=True)
        laid = coups.coup_lay_card(actor=request.user, coup_id=id, **data.validated_data)
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


class CancelInput(StrictSerializer):
    reason = serializers.CharField(max_length=300)


CoupCancel = _coup_act(
    "CoupCancel",
    coups.coup_cancel,
    CancelInput,
    "The chef de partie on duty cancels a coup that cannot go on: stakes returned, an anomaly.",
)


class StakeFields(StrictSerializer):
    ref = serializers.CharField(
        max_length=60, help_text="the terminal's own label of the stake, unique in its coup"
    )
    holder = serializers.CharField(max_length=40, help_text="seat number, or patron:<id>")
    chance = serializers.ChoiceField(choices=["rouge", "noir", "couleur", "inverse"])
    amount = amount(services.MAX_AMOUNT, help_text="minor units, within the table's limits")
    insured = serializers.BooleanField(required=False, default=False)
    on_refait = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=20,
        help_text="under refait_mode choice: prison, half or move:<chance>",
    )


class StakeInput(StakeFields):
    coup = reference(help_text="the coup, while betting is open")


class StakeFilters(Filters):
    coup = reference(required=False)
    shift = reference(required=False)
    holder = serializers.CharField(max_length=60, required=False, help_text="account code")
    lookups = {"shift": "coup__shift", "holder": "holder__code"}


STAKES = Stake.objects.select_related("holder", "placed_by", "withdrawal").prefetch_related(
    "settlements"
)


class StakeList(Dealers, Collection):
    """Stakes. ``POST``: a stake while betting is open; after the first card it is refused and the
    attempt recorded (``late_stake``)."""

    serializer_class = StakeSerializer
    read_roles = CoupList.read_roles
    sees_all = PIT
    queryset = STAKES
    filters = StakeFilters
    shift_path = "coup__shift"

    @extend_schema(request=StakeInput, responses=StakeDetailSerializer)
    @idempotent
    def post(self, request: Request) -> Response:
        data = StakeInput(data=request.data)
        data.is_valid(raise_exception=True)
        v = dict(data.validated_data)
        stake = coups.stake_place(actor=request.user, coup_id=v.pop("coup"), **v)
        return Response(StakeDetailSerializer(STAKES.get(pk=stake.pk)).data, status=201)


class StakeDetail(Dealers, Item):
    serializer_class = StakeDetailSerializer
    read_roles = CoupList.read_roles
    sees_all = PIT
    queryset = STAKES
    shift_path = "coup__shift"
    noun = gettext_lazy("la mise")


StakeWithdraw = record_act(
    "StakeWithdraw",
    coups.stake_withdraw,
    Empty,
    "Take a stake back before the first card (after it: refused and recorded).",
    record_id="stake_id",
    answer=lambda pk: StakeDetailSerializer(STAKES.get(pk=pk)).data,
    response=StakeDetailSerializer,
)


class BatchInput(StrictSerializer):
    shift = reference(help_text="the séance")
    stakes = StakeFields(many=True, required=False)
    cards = serializers.ListField(child=serializers.CharField(max_length=3), max_length=52)
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
            shift = Shift.objects.get(pk=v["shift"])
            pack = packs_at(shift.table_id, PackState.IN_PLAY).first()
            assert pack is not None, "a card was refused by the pack in play"
            recorded = card_refusal_record(
                actor=request.user, pack_id=pack.pk, code=refused.card, shift=shift
            )
            recorded.where = refused.where
            raise recorded from None

    def _transcribe(self, request: Request, v: dict[str, Any]) -> Response:
        with transaction.atomic():
            coup = coups.coup_open(actor=request.user, shift_id=v["shift"])
            for index, stake in enumerate(v.get("stakes", [])):
                with _within(f"stakes[{index}]"):
                    coups.stake_place(actor=request.user, coup_id=coup.pk, **stake)
            coups.coup_close_betting(actor=request.user, coup_id=coup.pk)
            for index, code in enumerate(v["cards"]):
                if Coup.objects.get(pk=coup.pk).phase == CoupPhase.COMPLETE:
                    raise serializers.ValidationError(
                        {f"cards[{index}]": _("le coup est complet avant cette carte")}
                    )
                with _within(f"cards[{index}]"):
                    coups.coup_lay_card(actor=request.user, coup_id=coup.pk, code=code)
            coups.coup_settle(actor=request.user, coup_id=coup.pk, spoken=v.get("spoken", ""))
        return Response(_coup(coup.pk), status=201)


@contextlib.contextmanager
def _within(item: str) -> Iterator[None]:
    """A refusal of one item of a batch names the item: ``stakes[2].amount``, ``cards[4]``."""
    try:
        yield
    except DomainError as refused:
        refused.where = f"{item}.{refused.where}" if refused.where else item
        if item.startswith("cards") and refused.where.endswith(".code"):
            refused.where = item
        raise


# --- the ledger --------------------------------------------------------------------------------


def _sum(column: str) -> Coalesce:
    return Coalesce(
        Subquery(
            Movement.objects.filter(**{column: OuterRef("pk")})
            .order_by()
            .values(column)
            .annotate(s=Sum("amount"))
            .values("s")
        ),
        Value(0),
    )


class AccountSerializer(serializers.ModelSerializer[Account]):
    table = serializers.IntegerField(source="table.number", allow_null=True, default=None)
    balance = serializers.IntegerField(help_text="what came in, less what went out (minor units)")

    class Meta:
        model = Account
        fields = ["code", "kind", "table", "name", "balance"]


class AccountFilters(Filters):
    kind = serializers.ChoiceField(choices=Account.Kind.choices, required=False)
    table = serializers.IntegerField(min_value=1, max_value=32767, required=False)
    lookups = {"table": "table__number"}


ACCOUNTS = Account.objects.select_related("table").annotate(balance=_sum("debit") - _sum("credit"))


class AccountList(Collection):
    """Accounts with their balances: patrons and seats, each table's bank, layout and prison, the
    cage, the outside world. The dealers read their tables' accounts."""

    serializer_class = AccountSerializer
    read_roles = FLOOR_READERS
    sees_all = CAGE_AND_PIT
    queryset = ACCOUNTS
    ordering = "code"
    filters = AccountFilters

    def scope(self, user: Any) -> Q:
        return Q(table__in=Shift.objects.filter(pk__in=_worked(user)).values("table_id"))


class AccountDetail(Item):
    serializer_class = AccountSerializer
    read_roles = FLOOR_READERS
    sees_all = CAGE_AND_PIT
    queryset = ACCOUNTS
    lookup_field = lookup_url_kwarg = "code"
    scope = AccountList.scope
    noun = gettext_lazy("le compte")


class RefersToSerializer(serializers.Serializer[Any]):
    coup = serializers.IntegerField(required=False)
    stake = serializers.IntegerField(required=False)
    shift = serializers.IntegerField(required=False)
    transfer = serializers.IntegerField(required=False)
    dispute = serializers.IntegerField(required=False)


class MovementSerializer(serializers.ModelSerializer[Movement]):
    debit = serializers.CharField(source="debit.code", help_text="the account money went to")
    credit = serializers.CharField(source="credit.code", help_text="the account it came from")
    actor = serializers.CharField(source="actor.username")
    refers_to = serializers.SerializerMethodField()

    class Meta:
        model = Movement
        fields = ["id", "at", "kind", "amount", "credit", "debit", "shift", "refers_to", "actor"]

    @extend_schema_field(RefersToSerializer)
    def get_refers_to(self, movement: Movement) -> dict[str, int]:
        return selectors.movement_refers_to(movement.reference)


class MovementFilters(Filters):
    shift = reference(required=False)
    account = serializers.CharField(max_length=60, required=False, help_text="on either side")
    kind = serializers.ChoiceField(choices=Movement.Kind.choices, required=False)
    date = serializers.DateField(required=False)
    coup = reference(required=False)
    dispute = reference(required=False)
    lookups = {"date": "at__date"}

    def apply(self, queryset: QuerySet[Any]) -> QuerySet[Any]:
        given = dict(self.validated_data)
        account = given.pop("account", None)
        coup = given.pop("coup", None)
        dispute = given.pop("dispute", None)
        for name, value in given.items():
            queryset = queryset.filter(**{self.lookups.get(name, name): value})
        if account is not None:
            queryset = queryset.filter(Q(debit__code=account) | Q(credit__code=account))
        if coup is not None:
            queryset = queryset.filter(reference__startswith=f"coup:{coup}:")
        if dispute is not None:
            queryset = queryset.filter(reference=f"dispute:{dispute}")
        return queryset


MOVEMENTS = Movement.objects.select_related("debit", "credit", "actor")


class MovementList(Dealers, Collection):
    """The ledger, movement by movement: ``amount`` leaves ``credit`` and enters ``debit``."""

    serializer_class = MovementSerializer
    read_roles = FLOOR_READERS
    queryset = MOVEMENTS
    filters = MovementFilters


class MovementDetail(Dealers, Item):
    serializer_class = MovementSerializer
    read_roles = FLOOR_READERS
    queryset = MOVEMENTS
    noun = gettext_lazy("le mouvement")


routes = [
    path("reglements", ReglementList.as_view(), name="reglements"),
    path("reglements/<ref:id>", ReglementDetail.as_view(), name="reglement"),
    path("tables", TableList.as_view(), name="tables"),
    path("tables/<table:number>", TableDetail.as_view(), name="table"),
    path("tables/<table:number>/settings", TableSettings.as_view(), name="table-settings"),
    path("counts", CountList.as_view(), name="counts"),
    path("counts/<ref:id>", CountDetail.as_view(), name="count"),
    path("counts/<ref:id>/countersign", CountCountersign.as_view(), name="count-sign"),
    path("shifts", ShiftList.as_view(), name="shifts"),
    path("shifts/<ref:id>", ShiftDetail.as_view(), name="shift"),
    path("shifts/<ref:id>/close", ShiftClose.as_view(), name="shift-close"),
    path("duties", DutyList.as_view(), name="duties"),
    path("duties/<ref:id>", DutyDetail.as_view(), name="duty"),
    path("duties/<ref:id>/end", DutyEnd.as_view(), name="duty-end"),
    path("transfers", TransferList.as_view(), name="transfers"),
    path("transfers/<ref:id>", TransferDetail.as_view(), name="transfer"),
    path("transfers/<ref:id>/countersign", TransferCountersign.as_view(), name="transfer-sign"),
    path("coups", CoupList.as_view(), name="coups"),
    path("coups/batch", CoupBatch.as_view(), name="coup-batch"),
    path("coups/<ref:id>", CoupDetail.as_view(), name="coup"),
    path("coups/<ref:id>/close-betting", CoupCloseBetting.as_view(), name="coup-close-betting"),
    path("coups/<ref:id>/cards", CoupCard.as_view(), name="coup-card"),
    path("coups/<ref:id>/settle", CoupSettle.as_view(), name="coup-settle"),
    path("coups/<ref:id>/cancel", CoupCancel.as_view(), name="coup-cancel"),
    path("stakes", StakeList.as_view(), name="stakes"),
    path("stakes/<ref:id>", StakeDetail.as_view(), name="stake"),
    path("stakes/<ref:id>/withdraw", StakeWithdraw.as_view(), name="stake-withdraw"),
    path("accounts", AccountList.as_view(), name="accounts"),
    path("accounts/<code:code>", AccountDetail.as_view(), name="account"),
    path("movements", MovementList.as_view(), name="movements"),
    path("movements/<ref:id>", MovementDetail.as_view(), name="movement"),
]
