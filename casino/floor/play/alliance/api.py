"""Alliance over the API: the seats the players take and leave at the cercle table, each deal act
by act (opened with the dealer's shuffle and his left's cut, its cards, each call, the contract,
each card played) and a whole deal from its paper sheet. Each is a collection (``GET`` a page,
``POST`` the act that makes one) and items (``GET`` one by its reference, ``POST`` an act on
it). Every write is idempotent; a deal's acts answer the deal as it now stands, as a terminal
reads it (whose call or card is next, and which are legal)."""

from __future__ import annotations

import re
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
from casino.api.serializers import Answer, FieldsOnce, StrictSerializer, reference
from casino.errors import DomainError
from casino.floor.api import Dealers
from casino.floor.play.alliance import deals, seats
from casino.floor.play.alliance.models import SEATS, CercleSeat, Deal, DealCall, DealPhase
from casino.games import alliance as engine

READERS = (*PIT, *DEALERS)
CALLS = [c.value for c in engine.Call]


def player(**kwargs: Any) -> serializers.CharField:
    kwargs.setdefault("help_text", "the player's account: patron:<id>")
    return serializers.CharField(max_length=60, **kwargs)


def card_list(**kwargs: Any) -> serializers.ListField:
    """A list of card codes, as the engine writes them (``KS``, ``TH``)."""
    return serializers.ListField(child=serializers.CharField(), **kwargs)


# --- seats -----------------------------------------------------------------------------------------


class CercleSeatSerializer(FieldsOnce, serializers.ModelSerializer[CercleSeat]):
    table = serializers.IntegerField(source="shift.table.number")
    patron = serializers.CharField(source="patron.code", help_text="the player's account")
    by = serializers.CharField(source="by.username")
    left_at = serializers.DateTimeField(source="end.at", allow_null=True, default=None)
    left_by = serializers.CharField(source="end.by.username", allow_null=True, default=None)
    reason = serializers.CharField(source="end.reason", allow_null=True, default=None)

    class Meta:
        model = CercleSeat
        fields = [
            "id",
            "table",
            "shift",
            "seat",
            "patron",
            "at",
            "by",
            "left_at",
            "left_by",
            "reason",
        ]


SEATINGS = CercleSeat.objects.select_related("shift__table", "patron", "by", "end__by")


def _seating(pk: int) -> Any:
    return CercleSeatSerializer(SEATINGS.get(pk=pk)).data


class SeatInput(StrictSerializer):
    shift = reference(help_text="the séance, at a cercle table, between deals")
    seat = serializers.IntegerField(
        min_value=1, max_value=SEATS, help_text="its place round the table"
    )
    patron = serializers.CharField(
        max_length=48, help_text="patron:<id> (or <id>), bought in at the cage"
    )


class SeatFilters(Filters):
    shift = reference(required=False)
    table = serializers.IntegerField(min_value=1, max_value=32767, required=False)
    patron = serializers.CharField(max_length=60, required=False, help_text="patron:<id>")
    seated = serializers.BooleanField(required=False, help_text="true: not left yet")
    lookups = {"table": "shift__table__number", "patron": "patron__code", "seated": "end__isnull"}


class SeatList(Dealers, Collection):
    """The seats taken at the cercle tables, in the order they were taken. ``POST``: the croupier
    or the chef de partie on duty seats a patron who bought in, between deals."""

    serializer_class = CercleSeatSerializer
    read_roles = READERS
    sees_all = PIT
    queryset = SEATINGS
    filters = SeatFilters

    @extend_schema(request=SeatInput, responses=CercleSeatSerializer)
    @idempotent
    def post(self, request: Request) -> Response:
        data = SeatInput(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        seating = seats.seat_take(
            actor=request.user, shift_id=v["shift"], seat=v["seat"], patron=v["patron"]
        )
        return Response(_seating(seating.pk), status=201)


class SeatDetail(Dealers, Item):
    serializer_class = CercleSeatSerializer
    read_roles = READERS
    sees_all = PIT
    queryset = SEATINGS
    noun = gettext_lazy("la place")


class LeaveInput(StrictSerializer):
    reason = serializers.CharField(
        max_length=60, required=False, allow_blank=True, help_text="why (by default: left)"
    )


SeatLeave = record_act(
    "SeatLeave",
    seats.seating_leave,
    LeaveInput,
    "The player leaves his seat, between deals: the croupier's or the chef de partie's act.",
    record_id="seating_id",
    answer=_seating,
    response=CercleSeatSerializer,
)


# --- a deal as a terminal reads it -----------------------------------------------------------------


class DealSerializer(FieldsOnce, serializers.ModelSerializer[Deal]):
    table = serializers.IntegerField(source="shift.table.number")
    players = serializers.ListField(
        child=serializers.CharField(),
        help_text="in dealing order: the Vorhand first, the dealer last",
    )
    opened_by = serializers.CharField(source="opened_by.username")

    class Meta:
        model = Deal
        fields = [
            "id",
            "table",
            "shift",
            "number",
            "pack",
            "pack_taille",
            "reglement",
            "mark_value",
            "players",
            "dealer",
            "cut_by",
            "opened_at",
            "opened_by",
            "phase",
        ]


class TableCardsSerializer(serializers.Serializer[Any]):
    up = serializers.CharField(help_text="face up: its suit is the couleur")
    down = serializers.ListField(child=serializers.CharField(), help_text="in dealing order")


class DealCallSerializer(FieldsOnce, serializers.ModelSerializer[DealCall]):
    by = serializers.CharField(source="by.username")

    class Meta:
        model = DealCall
        fields = ["index", "player", "call", "at", "by"]


class PlayedCardSerializer(serializers.Serializer[Any]):
    player = serializers.CharField()
    card = serializers.CharField()


class OutcomeTrickSerializer(serializers.Serializer[Any]):
    number = serializers.IntegerField()
    leader = serializers.CharField()
    cards = card_list()
    winner = serializers.CharField()


class DealTrickSerializer(OutcomeTrickSerializer):
    players = serializers.ListField(child=serializers.CharField(), help_text="who played each card")


class AlliancePaymentSerializer(serializers.Serializer[Any]):
    """A payment in marks (``from`` pays ``to``), after the couleur doubling."""

    to = serializers.CharField()
    marks = serializers.IntegerField()

    def get_fields(self) -> dict[str, Any]:
        fields: dict[str, Any] = super().get_fields()
        # "from" and "for" are Python keywords: REPLAY.md's names, declared here.
        fields["from"] = serializers.CharField()
        fields["for"] = serializers.ChoiceField(choices=list(engine.KINDS))
        return fields


class AllianceOutcomeSerializer(serializers.Serializer[Any]):
    """What the deal settled: the replay's output document (REPLAY.md, Alliance)."""

    hands = serializers.DictField(child=card_list(), help_text="as dealt, before any lever take")
    table = TableCardsSerializer()
    couleur = serializers.CharField()
    declarer = serializers.CharField()
    game = serializers.ChoiceField(choices=[g.value for g in engine.Game])
    forced = serializers.BooleanField()
    trumps = serializers.CharField()
    fahne = serializers.CharField()
    called = serializers.CharField(allow_null=True)
    ally = serializers.CharField(allow_null=True)
    resister = serializers.CharField(allow_null=True)
    neutrals = serializers.ListField(child=serializers.CharField())
    tricks = OutcomeTrickSerializer(many=True)
    taken = serializers.DictField(child=serializers.IntegerField())
    fahne_with = serializers.CharField(allow_null=True)
    winners = serializers.ListField(child=serializers.CharField())
    payments = AlliancePaymentSerializer(many=True)
    marks = serializers.DictField(child=serializers.IntegerField())
    fee = serializers.IntegerField(help_text="the house's fee per player, minor units")
    money = serializers.DictField(child=serializers.IntegerField(), help_text="minor units")


class DealDetailSerializer(DealSerializer):
    """A deal as a terminal reads it, from its records through the engine: the cards dealt, the
    calls and whose call is next with the calls he may make, the contract, the tricks with their
    winners and whose card is next with the cards he may play, and what the deal settled."""

    cards = serializers.SerializerMethodField(help_text="the 52 in dealing order, once dealt")
    couleur = serializers.SerializerMethodField()
    hands = serializers.SerializerMethodField(help_text="as dealt, in dealing order")
    in_hand = serializers.SerializerMethodField(help_text="what each player holds now")
    table_cards = serializers.SerializerMethodField()
    calls = DealCallSerializer(many=True, read_only=True)
    next_caller = serializers.SerializerMethodField()
    legal_calls = serializers.SerializerMethodField(help_text="what the next caller may call")
    declarer = serializers.SerializerMethodField(help_text="the highest caller so far")
    game = serializers.SerializerMethodField(help_text="the highest game called so far")
    forced = serializers.SerializerMethodField(help_text="a forced lever (all passed)")
    contract = serializers.SerializerMethodField(help_text="as REPLAY.md writes it")
    trumps = serializers.SerializerMethodField()
    tricks = serializers.SerializerMethodField(help_text="the tricks played out")
    current_trick = serializers.SerializerMethodField(help_text="the trick being played")
    next_player = serializers.SerializerMethodField()
    legal_cards = serializers.SerializerMethodField(help_text="what the next player may play")
    settlement = serializers.SerializerMethodField(help_text="once the last card is played")

    class Meta(DealSerializer.Meta):
        fields = [
            *DealSerializer.Meta.fields,
            "cards",
            "couleur",
            "hands",
            "in_hand",
            "table_cards",
            "calls",
            "next_caller",
            "legal_calls",
            "declarer",
            "game",
            "forced",
            "contract",
            "trumps",
            "tricks",
            "current_trick",
            "next_player",
            "legal_cards",
            "settlement",
        ]

    def _state(self, deal: Deal) -> engine.AllianceDeal:
        cached = getattr(deal, "_engine", None)
        if cached is None:
            cached = deal._engine = deals.deal_of(deal)  # type: ignore[attr-defined]
        return cached

    def _dealt(self, deal: Deal) -> bool:
        return self._state(deal).phase is not engine.Phase.DEALING

    @extend_schema_field(card_list())
    def get_cards(self, deal: Deal) -> list[str]:
        return [str(c) for c in self._state(deal).received]

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_couleur(self, deal: Deal) -> str | None:
        couleur = self._state(deal).couleur
        return couleur.value if couleur else None

    @extend_schema_field(serializers.DictField(child=card_list(), allow_null=True))
    def get_hands(self, deal: Deal) -> dict[str, list[str]] | None:
        if not self._dealt(deal):
            return None
        state = self._state(deal)
        hands, _table = engine.deal(state.received, state.n)
        return {p: [str(c) for c in h] for p, h in zip(state.players, hands, strict=True)}

    @extend_schema_field(serializers.DictField(child=card_list(), allow_null=True))
    def get_in_hand(self, deal: Deal) -> dict[str, list[str]] | None:
        if not self._dealt(deal):
            return None
        state = self._state(deal)
        return {p: [str(c) for c in h] for p, h in zip(state.players, state.hands, strict=True)}

    @extend_schema_field(TableCardsSerializer(allow_null=True))
    def get_table_cards(self, deal: Deal) -> dict[str, Any] | None:
        table = self._state(deal).table
        if table is None:
            return None
        return {"up": str(table.up), "down": [str(c) for c in table.down]}

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_next_caller(self, deal: Deal) -> str | None:
        return self._state(deal).next_caller

    @extend_schema_field(serializers.ListField(child=serializers.ChoiceField(choices=CALLS)))
    def get_legal_calls(self, deal: Deal) -> list[str]:
        return [c.value for c in self._state(deal).legal_calls()]

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_declarer(self, deal: Deal) -> str | None:
        return self._state(deal).declarer

    @extend_schema_field(
        serializers.ChoiceField(choices=[g.value for g in engine.Game], allow_null=True)
    )
    def get_game(self, deal: Deal) -> str | None:
        game = self._state(deal).game
        return game.value if game else None

    @extend_schema_field(serializers.BooleanField())
    def get_forced(self, deal: Deal) -> bool:
        return self._state(deal).forced

    @extend_schema_field(serializers.DictField(allow_null=True))
    def get_contract(self, deal: Deal) -> dict[str, Any] | None:
        contract = self._state(deal).contract
        return None if contract is None else engine.contract_dict(contract)

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_trumps(self, deal: Deal) -> str | None:
        trumps = self._state(deal).trumps
        return trumps.value if trumps else None

    @extend_schema_field(DealTrickSerializer(many=True))
    def get_tricks(self, deal: Deal) -> list[dict[str, Any]]:
        return [
            {
                "number": t.number,
                "leader": t.leader,
                "cards": [str(c) for c in t.cards],
                "players": list(t.players),
                "winner": t.winner,
            }
            for t in self._state(deal).tricks
        ]

    @extend_schema_field(PlayedCardSerializer(many=True))
    def get_current_trick(self, deal: Deal) -> list[dict[str, str]]:
        state = self._state(deal)
        done = len(state.tricks) * state.n
        return [{"player": p.player, "card": p.card} for p in deal.plays.all()][done:]

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_next_player(self, deal: Deal) -> str | None:
        return self._state(deal).next_player

    @extend_schema_field(card_list())
    def get_legal_cards(self, deal: Deal) -> list[str]:
        return [str(c) for c in self._state(deal).legal_cards()]

    @extend_schema_field(AllianceOutcomeSerializer(allow_null=True))
    def get_settlement(self, deal: Deal) -> dict[str, Any] | None:
        settled = getattr(deal, "settlement", None)
        return None if settled is None else dict(settled.outcome)


DEALS = Deal.objects.select_related("shift__table", "opened_by", "reglement")


_DEAL_ANSWER = Answer(DealDetailSerializer)


def _deal(pk: int) -> Any:
    found = DEALS.prefetch_related("calls__by", "plays").select_related("settlement").get(pk=pk)
    return _DEAL_ANSWER(found)


class DealOpenInput(StrictSerializer):
    shift = reference(help_text="the séance, at a cercle table, between deals")
    dealer = player()
    cut_by = player(help_text="the player on the dealer's left (served last before him)")


class DealFilters(Filters):
    shift = reference(required=False)
    table = serializers.IntegerField(min_value=1, max_value=32767, required=False)
    phase = serializers.ChoiceField(choices=DealPhase.choices, required=False)
    lookups = {"table": "shift__table__number"}


class DealList(Dealers, Collection):
    """Deals in the order they were opened. ``POST``: the croupier on duty records a new deal
    between deals: the dealer (a seated player) shuffles the pack, the player on his left cuts."""

    serializer_class = DealSerializer
    read_roles = READERS
    sees_all = PIT
    queryset = DEALS
    filters = DealFilters

    @extend_schema(request=DealOpenInput, responses=DealDetailSerializer)
    @idempotent
    def post(self, request: Request) -> Response:
        data = DealOpenInput(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        deal = deals.deal_open(
            actor=request.user, shift_id=v["shift"], dealer=v["dealer"], cut_by=v["cut_by"]
        )
        return Response(_deal(deal.pk), status=201)


class DealDetail(Dealers, Item):
    """A deal: its cards, calls, contract, tricks, whose turn it is and what he may do, and what
    it settled."""

    serializer_class = DealDetailSerializer
    read_roles = READERS
    sees_all = PIT
    queryset = DEALS.prefetch_related("calls__by", "plays").select_related("settlement")
    noun = gettext_lazy("la donne")


# --- the acts of a deal ----------------------------------------------------------------------------


class TableCardsInput(StrictSerializer):
    up = serializers.CharField(max_length=3, help_text="the face-up card")
    down = serializers.ListField(
        child=serializers.CharField(max_length=3), max_length=6, help_text="in dealing order"
    )


class DealCardsInput(StrictSerializer):
    cards = serializers.ListField(
        child=serializers.CharField(max_length=3),
        max_length=60,
        required=False,
        help_text="the 52 cards in dealing order; or hands and table",
    )
    hands = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField(max_length=3), max_length=20),
        required=False,
        help_text='each player\'s cards as received: {"patron:ana": ["7H", …], …}',
    )
    table = TableCardsInput(required=False, help_text="the table cards as dealt")


class DealCallInput(StrictSerializer):
    player = player()
    call = serializers.ChoiceField(choices=CALLS)


class DealContractInput(StrictSerializer):
    contract = serializers.DictField(
        help_text='alliance {"trumps": "H", "called": "KS"}; lever {"turn": 1, "take": true, '
        '"discard": […], "called": "KS"}; solo {"trumps": "S", "resistance": null}'
    )


class DealPlayInput(StrictSerializer):
    player = player()
    code = serializers.CharField(max_length=3, help_text="KS, TH or 10H…")


def _deal_act(name: str, service: Any, input_: Any, doc: str) -> type[APIView]:
    return record_act(
        name,
        service,
        input_,
        doc,
        record_id="deal_id",
        answer=_deal,
        response=DealDetailSerializer,
    )


DealCards = _deal_act(
    "DealCards",
    deals.deal_cards,
    DealCardsInput,
    "The croupier records the 52 cards as dealt, in dealing order (or each hand and the table "
    "cards as received); a card twice in the deal is refused and recorded (foreign_card).",
)
DealCallAct = _deal_act(
    "DealCallAct",
    deals.deal_call,
    DealCallInput,
    "A call of the auction by the player whose turn it is; a call out of turn or one the auction "
    "does not allow is refused and recorded.",
)
DealDeclare = _deal_act(
    "DealDeclare",
    deals.deal_declare,
    DealContractInput,
    "The declarer's contract, for the game he called: trumps, the card called, a lever's turn "
    "and take, a solo's résistance.",
)
DealPlay = _deal_act(
    "DealPlay",
    deals.deal_play,
    DealPlayInput,
    "A card played by the player whose turn it is; one not in his hand, not following suit or "
    "out of turn is refused and recorded. The last card settles the deal.",
)


# --- a whole deal from its paper sheet -------------------------------------------------------------


class DealSheetInput(StrictSerializer):
    """The replay document of REPLAY.md (Alliance): its règlement, when given, is the séance's."""

    game = serializers.ChoiceField(choices=["alliance"], required=False)
    reglement = serializers.JSONField(
        required=False, help_text='a preset ("baden-1854") or {"preset", "overrides"}'
    )
    players = serializers.ListField(
        child=serializers.CharField(max_length=60),
        min_length=4,
        max_length=6,
        help_text="the players' accounts in dealing order, the dealer last",
    )
    mark_value = serializers.IntegerField(min_value=0, help_text="the séance's, minor units")
    cards = serializers.ListField(child=serializers.CharField(max_length=3), max_length=60)
    auction = serializers.ListField(child=serializers.CharField(max_length=10), max_length=60)
    contract = serializers.DictField()
    tricks = serializers.ListField(
        child=serializers.ListField(child=serializers.CharField(max_length=3), max_length=8),
        max_length=16,
    )


class DealSheetRecordInput(StrictSerializer):
    shift = reference(help_text="the séance, at a cercle table, between deals")
    sheet = DealSheetInput()


# The sheet's own fields: a fault there is named inside it, as the replay names it.
SHEET_FIELD = re.compile(r"(game|reglement|players|mark_value|cards|auction|contract|tricks)\b")


class DealSheet(APIView):
    """A whole deal transcribed from its paper deal sheet, through the same acts in one
    transaction: the first fault refuses the sheet, named where the replay names it
    (``sheet.auction[3]``, ``sheet.tricks[4][2]``, ``sheet.contract.called``); a card the pack
    cannot hold is recorded all the same."""

    @extend_schema(request=DealSheetRecordInput, responses=DealDetailSerializer)
    @idempotent
    def post(self, request: Request) -> Response:
        data = DealSheetRecordInput(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        try:
            deal = deals.deal_record(actor=request.user, shift_id=v["shift"], sheet=v["sheet"])
        except DomainError as exc:
            if exc.where and SHEET_FIELD.match(exc.where):
                exc.where = f"sheet.{exc.where}"
            raise
        return Response(_deal(deal.pk), status=201)


routes = [
    path("alliance/seats", SeatList.as_view(), name="alliance-seats"),
    path("alliance/seats/<ref:id>", SeatDetail.as_view(), name="alliance-seat"),
    path("alliance/seats/<ref:id>/leave", SeatLeave.as_view(), name="alliance-seat-leave"),
    path("alliance/deals", DealList.as_view(), name="alliance-deals"),
    path("alliance/deals/<ref:id>", DealDetail.as_view(), name="alliance-deal"),
    path("alliance/deals/<ref:id>/cards", DealCards.as_view(), name="alliance-deal-cards"),
    path("alliance/deals/<ref:id>/calls", DealCallAct.as_view(), name="alliance-deal-calls"),
    path("alliance/deals/<ref:id>/contract", DealDeclare.as_view(), name="alliance-deal-contract"),
    path("alliance/deals/<ref:id>/plays", DealPlay.as_view(), name="alliance-deal-plays"),
    path("alliance/deal-sheets", DealSheet.as_view(), name="alliance-deal-sheets"),
]
