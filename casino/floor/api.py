"""The floor over the API: règlements, tables, séances, duties, counts, fills and credits, accounts
and movements; each game's rounds are its own package's (``casino/floor/play/<game>/api.py``). Each
is a collection (``GET`` a page, ``POST`` the act that makes one) and items (``GET`` one by its
reference, ``POST`` an act on it). Every write is idempotent."""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth.models import User
from django.db.models import (
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    Sum,
    Value,
    prefetch_related_objects,
)
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
from casino.api.permissions import CAGE_AND_PIT, FLOOR_READERS
from casino.api.resources import Collection, Filters, Item, on_day
from casino.api.serializers import (
    Empty,
    PageOfRecords,
    ReadWithPage,
    StrictSerializer,
    amount,
    reference,
)
from casino.errors import NotFound
from casino.floor import selectors, services
from casino.floor.models import (
    Account,
    CashTransfer,
    Duty,
    FloatCount,
    Game,
    Movement,
    PostedReglement,
    Shift,
    Table,
)
from casino.floor.registry import moved_to

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
    open_deal = serializers.IntegerField(
        allow_null=True, help_text="the deal in progress (a cercle table)"
    )
    pack = serializers.IntegerField(allow_null=True, help_text="the pack in play")
    prison = PrisonerSerializer(many=True)
    balances = BalancesSerializer(allow_null=True)

    class Meta(TableSerializer.Meta):
        fields = [
            *TableSerializer.Meta.fields,
            "seance",
            "open_coup",
            "open_deal",
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


class ShiftSerializer(ReadWithPage, serializers.ModelSerializer[Shift]):
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
        list_serializer_class = PageOfRecords

    def read_with_page(self, records: list[Shift]) -> None:
        """The séances' staff (with the people named) and their rundowns: four queries."""
        prefetch_related_objects(
            records, Prefetch("duties", Duty.objects.select_related("person", "assigned_by", "end"))
        )
        self.rundowns = services.rundowns(records)

    @extend_schema_field(DutySerializer(many=True))
    def get_staff(self, shift: Shift) -> list[dict[str, Any]]:
        return list(DutySerializer(shift.duties.all(), many=True).data)

    @extend_schema_field(RundownSerializer)
    def get_rundown(self, shift: Shift) -> dict[str, Any]:
        return dict(RundownSerializer(self.rundowns[shift.pk]).data)


class ShiftOpenInput(StrictSerializer):
    table = serializers.IntegerField(min_value=1, max_value=32767, help_text="table number")
    count = reference(help_text="the countersigned opening count")
    tailleur = serializers.CharField(
        max_length=150,
        required=False,
        allow_null=True,
        help_text="username of the tailleur; none at a cercle table, where the players deal",
    )
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
    lookups = {"table": "table__number", "date": on_day("opened_at"), "open": "closed_at__isnull"}


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
            tailleur=_user(v["tailleur"], "tailleur") if v.get("tailleur") is not None else None,
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
    taille = serializers.IntegerField(required=False)
    pharao_stake = serializers.IntegerField(required=False)
    shift = serializers.IntegerField(required=False)
    transfer = serializers.IntegerField(required=False)
    dispute = serializers.IntegerField(required=False)
    deal = serializers.IntegerField(required=False)


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
    deal = reference(required=False, help_text="an Alliance deal's payments and fees")
    lookups = {
        "date": on_day("at", Movement),
        "account": lambda code: Q(debit__code=code) | Q(credit__code=code),
        "coup": lambda coup: Q(reference__startswith=f"coup:{coup}:"),
        "dispute": lambda dispute: Q(reference=f"dispute:{dispute}"),
        "deal": lambda deal: Q(reference=f"deal:{deal}"),
    }


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
    path("accounts", AccountList.as_view(), name="accounts"),
    path("accounts/<code:code>", AccountDetail.as_view(), name="account"),
    path("movements", MovementList.as_view(), name="movements"),
    path("movements/<ref:id>", MovementDetail.as_view(), name="movement"),
]


# Trente-et-Quarante's serializers and views, at their path before the floor served several games.
__getattr__ = moved_to(
    "casino.floor.play.trente_et_quarante.api",
    "CoupSerializer",
    "SettlementSerializer",
    "StakeDetailSerializer",
    "StakeSerializer",
)
