"""Pharao over the API: tailles (opened with the bottom card shown) and their cards, stakes on ranks
and the acts on them between draws (raise, mark, collect, and reduce or withdraw with the banker's
approval), the banker's approvals. Each is a collection (``GET`` a page, ``POST`` the act that
makes one) and items (``GET`` one by its reference, ``POST`` an act on it). Every write is
idempotent."""

from __future__ import annotations

from typing import Any

from django.urls import path
from django.utils.translation import gettext_lazy
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casino.api.acts import record_act
from casino.api.idempotency import idempotent
from casino.api.permissions import DEALERS, PIT
from casino.api.resources import Collection, Filters, Item
from casino.api.serializers import (
    Answer,
    Empty,
    FieldsOnce,
    StrictSerializer,
    amount,
    reference,
)
from casino.floor import services
from casino.floor.api import Dealers
from casino.floor.play.pharao import selectors, tailles
from casino.floor.play.pharao.models import (
    RANKS,
    PharaoApproval,
    PharaoDraw,
    PharaoSettlement,
    PharaoStake,
    PharaoStakeAct,
    Taille,
    TaillePhase,
)
from casino.games import pharao as engine

READERS = (*PIT, *DEALERS)
SIDES = [side.value for side in engine.Side]


# --- what a draw did ---------------------------------------------------------------------------


class PharaoSettlementSerializer(FieldsOnce, serializers.ModelSerializer[PharaoSettlement]):
    class Meta:
        model = PharaoSettlement
        fields = ["stake", "outcome", "paid", "returned", "to_bank", "mark"]


class PharaoDrawSerializer(FieldsOnce, serializers.ModelSerializer[PharaoDraw]):
    settled_by = serializers.CharField(source="settled_by.username")
    settlements = PharaoSettlementSerializer(many=True, read_only=True)

    class Meta:
        model = PharaoDraw
        fields = [
            "number",
            "bank_card",
            "players_card",
            "plie",
            "settled_at",
            "settled_by",
            "settlements",
        ]


class StandingSerializer(serializers.Serializer[Any]):
    """A stake as it stands on the layout (the engine's reading of the records)."""

    id = serializers.IntegerField(help_text="the stake")
    rank = serializers.CharField()
    base = serializers.IntegerField(help_text="the original stake as it stands")
    mark = serializers.CharField(help_text="simple, appe, paroli, 6, 7, 12, 14, 15, 24, 28, 30")
    riding = serializers.IntegerField()
    protected = serializers.IntegerField()
    won_on = serializers.IntegerField(allow_null=True, help_text="the draw it last won")
    marked = serializers.BooleanField(help_text="a mark has used that win")


# --- tailles -------------------------------------------------------------------------------------


class TailleSerializer(FieldsOnce, serializers.ModelSerializer[Taille]):
    table = serializers.IntegerField(source="shift.table.number")
    opened_by = serializers.CharField(source="opened_by.username")

    class Meta:
        model = Taille
        fields = [
            "id",
            "table",
            "shift",
            "pack",
            "pack_taille",
            "number",
            "reglement",
            "min_stake",
            "max_stake",
            "bottom_card",
            "opened_at",
            "opened_by",
            "phase",
        ]


class TailleDetailSerializer(TailleSerializer):
    """A taille as a terminal reads it: its cards, whose card is next, what stands on the layout,
    every draw with what it settled, and the stakes returned when it ended."""

    cards = serializers.SerializerMethodField(help_text="the cards laid, in order")
    next_side = serializers.SerializerMethodField(help_text="bank (left), players (right), null")
    next_draw = serializers.SerializerMethodField(help_text="the draw in progress or to come")
    standing = serializers.SerializerMethodField()
    draws = PharaoDrawSerializer(many=True, read_only=True)
    returned = serializers.SerializerMethodField(help_text="the stakes returned at its end")

    class Meta(TailleSerializer.Meta):
        fields = [
            *TailleSerializer.Meta.fields,
            "cards",
            "next_side",
            "next_draw",
            "standing",
            "draws",
            "returned",
        ]

    def _deal(self, taille: Taille) -> engine.TailleDeal:
        cached = getattr(taille, "_deal", None)
        if cached is None:
            cached = taille._deal = tailles.deal_of(taille)  # type: ignore[attr-defined]
        return cached

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_cards(self, taille: Taille) -> list[str]:
        return [str(c) for c in self._deal(taille).laid]

    @extend_schema_field(serializers.ChoiceField(choices=SIDES, allow_null=True))
    def get_next_side(self, taille: Taille) -> str | None:
        side = self._deal(taille).next_side
        return side.value if side is not None else None

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_next_draw(self, taille: Taille) -> int | None:
        return self._deal(taille).number

    @extend_schema_field(StandingSerializer(many=True))
    def get_standing(self, taille: Taille) -> list[dict[str, Any]]:
        rows = [{**s.to_dict(), "id": int(s.id)} for s in self._deal(taille).standing.values()]
        return list(StandingSerializer(rows, many=True).data)

    @extend_schema_field(PharaoSettlementSerializer(many=True))
    def get_returned(self, taille: Taille) -> list[dict[str, Any]]:
        lines = taille.settlements.filter(draw__isnull=True).order_by("id")
        return list(PharaoSettlementSerializer(lines, many=True).data)


TAILLES = Taille.objects.select_related("shift__table", "opened_by")


_TAILLE_ANSWER = Answer(TailleDetailSerializer)


def _taille(pk: int) -> Any:
    found = TAILLES.prefetch_related("draws__settlements", "draws__settled_by").get(pk=pk)
    return _TAILLE_ANSWER(found)


class TailleOpenInput(StrictSerializer):
    shift = reference(help_text="the séance, at a Pharao table with a single pack in play")
    bottom_card = serializers.CharField(max_length=3, help_text="the card shown: KS, TH or 10H…")


class TailleFilters(Filters):
    shift = reference(required=False)
    table = serializers.IntegerField(min_value=1, max_value=32767, required=False)
    phase = serializers.ChoiceField(choices=TaillePhase.choices, required=False)
    lookups = {"table": "shift__table__number"}


class TailleList(Dealers, Collection):
    """Tailles in the order they were opened. ``POST``: the tailleur on duty begins a taille on
    the single pack in play (shuffled and cut), showing its bottom card."""

    serializer_class = TailleSerializer
    read_roles = READERS
    sees_all = PIT
    queryset = TAILLES
    filters = TailleFilters

    @extend_schema(request=TailleOpenInput, responses=TailleDetailSerializer)
    @idempotent
    def post(self, request: Request) -> Response:
        data = TailleOpenInput(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        taille = tailles.taille_open(
            actor=request.user, shift_id=v["shift"], bottom_card=v["bottom_card"]
        )
        return Response(_taille(taille.pk), status=201)


class TailleDetail(Dealers, Item):
    """A taille: its cards, the next side, what stands, each draw and what it settled."""

    serializer_class = TailleDetailSerializer
    read_roles = READERS
    sees_all = PIT
    queryset = TAILLES
    noun = gettext_lazy("la taille")


class PharaoCardInput(StrictSerializer):
    code = serializers.CharField(max_length=3, help_text="KS, TH or 10H…")
    side = serializers.ChoiceField(
        choices=SIDES, required=False, help_text="checked when given: bank (left), players (right)"
    )


class PharaoLineSerializer(serializers.Serializer[Any]):
    stake = serializers.IntegerField()
    outcome = serializers.CharField()
    paid = serializers.IntegerField()
    returned = serializers.IntegerField()
    to_bank = serializers.IntegerField()
    mark = serializers.CharField()


class PharaoSettledSerializer(serializers.Serializer[Any]):
    number = serializers.IntegerField()
    bank = serializers.CharField()
    players = serializers.CharField()
    plie = serializers.BooleanField()
    settlements = PharaoLineSerializer(many=True)


class PharaoLaidSerializer(serializers.Serializer[Any]):
    card = serializers.CharField()
    side = serializers.ChoiceField(choices=SIDES)
    draw = serializers.IntegerField()
    next_side = serializers.ChoiceField(choices=SIDES, allow_null=True)
    settled = PharaoSettledSerializer(allow_null=True, help_text="the draw this card completed")
    end = PharaoLineSerializer(many=True, allow_null=True, help_text="the stakes returned")


def _line(s: engine.Settlement) -> dict[str, Any]:
    return {**engine.settlement_dict(s), "stake": int(s.stake)}


def _laid(laid: engine.Laid) -> dict[str, Any]:
    settled = laid.settled
    return {
        "card": str(laid.card),
        "side": laid.side.value,
        "draw": laid.draw,
        "next_side": laid.next_side.value if laid.next_side is not None else None,
        "settled": None
        if settled is None
        else {
            "number": settled.number,
            "bank": str(settled.bank),
            "players": str(settled.players),
            "plie": settled.plie,
            "settlements": [
                _line(s) for s in settled.settlements if s.outcome not in tailles.ACT_OUTCOMES
            ],
        },
        "end": None if laid.end is None else [_line(s) for s in laid.end],
    }


_LAID_ANSWER = Answer(PharaoLaidSerializer)


class TailleCard(APIView):
    """Lay the next card: left for the bank, then right for the players; the second settles the
    draw, the 52nd (the bottom card) ends the taille. A card the pack cannot hold is refused and
    recorded (``foreign_card``), the bottom card out of its place too (``bottom_card``)."""

    @extend_schema(request=PharaoCardInput, responses=PharaoLaidSerializer)
    @idempotent
    def post(self, request: Request, id: int) -> Response:
        data = PharaoCardInput(data=request.data)
        data.is_valid(raise_exception=True)
        laid = tailles.taille_lay_card(actor=request.user, taille_id=id, **data.validated_data)
        return Response(_LAID_ANSWER(_laid(laid)), status=201)


# --- stakes and the acts on them ------------------------------------------------------------------


class PharaoStakeActSerializer(FieldsOnce, serializers.ModelSerializer[PharaoStakeAct]):
    by = serializers.CharField(source="by.username")
    approved_by = serializers.CharField(
        source="approval.approved_by.username", allow_null=True, default=None
    )

    class Meta:
        model = PharaoStakeAct
        fields = [
            "id",
            "act",
            "amount",
            "draw",
            "approval",
            "approved_by",
            "by",
            "at",
            "mark",
            "put",
            "returned",
        ]


class PharaoStakeSerializer(FieldsOnce, serializers.ModelSerializer[PharaoStake]):
    holder = serializers.CharField(source="holder.code", help_text="the account staked from")
    placed_by = serializers.CharField(source="placed_by.username")
    draw = serializers.IntegerField(help_text="it stands from this draw on")

    class Meta:
        model = PharaoStake
        fields = [
            "id",
            "taille",
            "ref",
            "holder",
            "rank",
            "amount",
            "draw",
            "placed_at",
            "placed_by",
        ]


class PharaoStakeDetailSerializer(PharaoStakeSerializer):
    """A stake with its acts, its settlements and how it stands on the layout (null: it ended)."""

    acts = PharaoStakeActSerializer(many=True, read_only=True)
    settlements = PharaoSettlementSerializer(many=True, read_only=True)
    standing = serializers.SerializerMethodField()

    class Meta(PharaoStakeSerializer.Meta):
        fields = [*PharaoStakeSerializer.Meta.fields, "acts", "settlements", "standing"]

    @extend_schema_field(StandingSerializer(allow_null=True))
    def get_standing(self, stake: PharaoStake) -> dict[str, Any] | None:
        found = selectors.standing(stake.taille).get(stake.pk)
        return None if found is None else dict(StandingSerializer(found).data)


STAKES = PharaoStake.objects.select_related("holder", "placed_by", "taille")


_STAKE_ANSWER = Answer(PharaoStakeDetailSerializer)


def _stake(pk: int) -> Any:
    found = STAKES.prefetch_related("acts__by", "acts__approval__approved_by", "settlements").get(
        pk=pk
    )
    return _STAKE_ANSWER(found)


class PharaoStakeInput(StrictSerializer):
    taille = reference(help_text="the taille, between draws")
    ref = serializers.CharField(
        max_length=60, help_text="the terminal's own label of the stake, unique in its taille"
    )
    holder = serializers.CharField(max_length=40, help_text="seat number, or patron:<id>")
    rank = serializers.ChoiceField(choices=[r for r, _label in RANKS])
    amount = amount(services.MAX_AMOUNT, help_text="minor units, within the table's limits")


class PharaoStakeFilters(Filters):
    taille = reference(required=False)
    shift = reference(required=False)
    holder = serializers.CharField(max_length=60, required=False, help_text="account code")
    rank = serializers.ChoiceField(choices=[r for r, _label in RANKS], required=False)
    lookups = {"shift": "taille__shift", "holder": "holder__code"}


class PharaoStakeList(Dealers, Collection):
    """Stakes on ranks. ``POST``: a croupier on duty places one between draws; while a draw is
    being dealt it is refused and recorded (``late_stake``)."""

    serializer_class = PharaoStakeSerializer
    read_roles = READERS
    sees_all = PIT
    queryset = STAKES
    filters = PharaoStakeFilters
    shift_path = "taille__shift"

    @extend_schema(request=PharaoStakeInput, responses=PharaoStakeDetailSerializer)
    @idempotent
    def post(self, request: Request) -> Response:
        data = PharaoStakeInput(data=request.data)
        data.is_valid(raise_exception=True)
        v = dict(data.validated_data)
        stake = tailles.pharao_stake_place(actor=request.user, taille_id=v.pop("taille"), **v)
        return Response(_stake(stake.pk), status=201)


class PharaoStakeDetail(Dealers, Item):
    serializer_class = PharaoStakeDetailSerializer
    read_roles = READERS
    sees_all = PIT
    queryset = STAKES
    shift_path = "taille__shift"
    noun = gettext_lazy("la mise")


class AmountInput(StrictSerializer):
    amount = amount(services.MAX_AMOUNT, help_text="minor units: what is added or taken off")


class MarkInput(StrictSerializer):
    move = serializers.ChoiceField(
        choices=["paroli", "appe"], help_text="paroli: everything rides; appe: the winnings ride"
    )


def _stake_act(name: str, service: Any, input_: Any, doc: str) -> type[APIView]:
    return record_act(
        name,
        service,
        input_,
        doc,
        record_id="stake_id",
        answer=_stake,
        response=PharaoStakeDetailSerializer,
    )


PharaoStakeRaise = _stake_act(
    "PharaoStakeRaise",
    tailles.pharao_stake_raise,
    AmountInput,
    "Raise an unmarked stake between draws, up to the table's maximum.",
)
PharaoStakeMark = _stake_act(
    "PharaoStakeMark",
    tailles.pharao_stake_mark,
    MarkInput,
    "Bend the card of a stake that won the draw just made (a false paroli is refused and "
    "recorded).",
)
PharaoStakeCollect = _stake_act(
    "PharaoStakeCollect",
    tailles.pharao_stake_collect,
    Empty,
    "The player takes back all that stands on a card right after it won.",
)
PharaoStakeReduce = _stake_act(
    "PharaoStakeReduce",
    tailles.pharao_stake_reduce,
    AmountInput,
    "Take an amount off an unmarked stake, with the approval the chef de partie gave for it.",
)
PharaoStakeWithdraw = _stake_act(
    "PharaoStakeWithdraw",
    tailles.pharao_stake_withdraw,
    Empty,
    "Take a stake off the layout, with the approval the chef de partie gave for it.",
)


# --- the banker's approvals -----------------------------------------------------------------------


class PharaoApprovalSerializer(FieldsOnce, serializers.ModelSerializer[PharaoApproval]):
    approved_by = serializers.CharField(source="approved_by.username")
    used = serializers.SerializerMethodField(help_text="an act has used it")

    class Meta:
        model = PharaoApproval
        fields = ["id", "stake", "act", "amount", "draw", "approved_by", "at", "used"]

    def get_used(self, approval: PharaoApproval) -> bool:
        return hasattr(approval, "used_by")


class PharaoApprovalInput(StrictSerializer):
    stake = reference(help_text="a standing stake the approver did not record")
    act = serializers.ChoiceField(choices=["reduce", "withdraw"])
    amount = amount(services.MAX_AMOUNT, required=False, help_text="what a reduction takes off")


class PharaoApprovalFilters(Filters):
    stake = reference(required=False)
    taille = reference(required=False)
    lookups = {"taille": "stake__taille"}


APPROVALS = PharaoApproval.objects.select_related("approved_by", "used_by")


class PharaoApprovalList(Dealers, Collection):
    """The banker's approvals. ``POST``: the chef de partie on duty approves, in his own act, a
    reduction or a withdrawal of a stake he did not record, before the next draw."""

    serializer_class = PharaoApprovalSerializer
    read_roles = READERS
    sees_all = PIT
    queryset = APPROVALS
    filters = PharaoApprovalFilters
    shift_path = "stake__taille__shift"

    @extend_schema(request=PharaoApprovalInput, responses=PharaoApprovalSerializer)
    @idempotent
    def post(self, request: Request) -> Response:
        data = PharaoApprovalInput(data=request.data)
        data.is_valid(raise_exception=True)
        v = dict(data.validated_data)
        approval = tailles.pharao_approval_give(actor=request.user, stake_id=v.pop("stake"), **v)
        return Response(PharaoApprovalSerializer(APPROVALS.get(pk=approval.pk)).data, status=201)


class PharaoApprovalDetail(Dealers, Item):
    serializer_class = PharaoApprovalSerializer
    read_roles = READERS
    sees_all = PIT
    queryset = APPROVALS
    shift_path = "stake__taille__shift"
    noun = gettext_lazy("l'approbation")


routes = [
    path("pharao/tailles", TailleList.as_view(), name="pharao-tailles"),
    path("pharao/tailles/<ref:id>", TailleDetail.as_view(), name="pharao-taille"),
    path("pharao/tailles/<ref:id>/cards", TailleCard.as_view(), name="pharao-taille-card"),
    path("pharao/stakes", PharaoStakeList.as_view(), name="pharao-stakes"),
    path("pharao/stakes/<ref:id>", PharaoStakeDetail.as_view(), name="pharao-stake"),
    path("pharao/stakes/<ref:id>/raise", PharaoStakeRaise.as_view(), name="pharao-stake-raise"),
    path("pharao/stakes/<ref:id>/mark", PharaoStakeMark.as_view(), name="pharao-stake-mark"),
    path(
        "pharao/stakes/<ref:id>/collect", PharaoStakeCollect.as_view(), name="pharao-stake-collect"
    ),
    path("pharao/stakes/<ref:id>/reduce", PharaoStakeReduce.as_view(), name="pharao-stake-reduce"),
    path(
        "pharao/stakes/<ref:id>/withdraw",
        PharaoStakeWithdraw.as_view(),
        name="pharao-stake-withdraw",
    ),
    path("pharao/approvals", PharaoApprovalList.as_view(), name="pharao-approvals"),
    path("pharao/approvals/<ref:id>", PharaoApprovalDetail.as_view(), name="pharao-approval"),
]
