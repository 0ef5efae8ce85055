"""Trente-et-Quarante over the API: coups and their acts (faites vos jeux, le jeu est fait, each
card, the settlement, a cancellation), a coup transcribed from paper, stakes and their withdrawal.
Each is a collection (``GET`` a page, ``POST`` the act that makes one) and items (``GET`` one by its
reference, ``POST`` an act on it). Every write is idempotent."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from typing import Any

from django.db import transaction
from django.db.models import Prefetch, Q, QuerySet
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
from casino.api.permissions import DEALERS, PIT
from casino.api.resources import Collection, Filters, Item, on_day
from casino.api.serializers import (
    Answer,
    Empty,
    FieldsOnce,
    StrictSerializer,
    amount,
    reference,
)
from casino.errors import DomainError
from casino.floor import services
from casino.floor.api import Dealers, PrisonerSerializer
from casino.floor.models import Shift
from casino.floor.play.trente_et_quarante import coups, selectors
from casino.floor.play.trente_et_quarante.models import (
    Coup,
    CoupPhase,
    Settlement,
    Stake,
)
from casino.prepared import PreparedTree
from shoes.errors import CardRefused
from shoes.models import CardLaid, PackState
from shoes.services import card_refusal_record, packs_at


class SettlementSerializer(FieldsOnce, serializers.ModelSerializer[Settlement]):
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


class StakeSerializer(FieldsOnce, serializers.ModelSerializer[Stake]):
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


_OUTCOME = Answer(OutcomeSerializer)


class CancellationSerializer(serializers.Serializer[Any]):
    by = serializers.CharField(source="by.username")
    at = serializers.DateTimeField()
    reason = serializers.CharField()


class CoupSerializer(FieldsOnce, serializers.ModelSerializer[Coup]):
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
        return _OUTCOME(self._outcome(result))

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


# A coup in four queries whatever it holds: itself, its stakes (with their holders), its
# settlements and its cards (a terminal reads the open coup at every restart).
_COUP = Coup.objects.select_related(
    "shift__table", "opened_by", "outcome__settled_by", "cancellation__by"
)
_STAKES = Stake.objects.select_related("holder", "placed_by", "withdrawal")
COUPS = _COUP.prefetch_related(Prefetch("stakes", queryset=_STAKES), "settlements", "cards")
# The same reads prepared once, for the answer to each act on a coup (casino/prepared.py).
_COUP_ANSWERED = PreparedTree(
    _COUP,
    stakes=_STAKES,
    settlements=Settlement.objects.all(),
    cards=CardLaid.objects.all(),
)


_COUP_ANSWER = Answer(CoupSerializer)


def _coup(pk: int) -> Any:
    return _COUP_ANSWER(_COUP_ANSWERED.get(pk))


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
        "date": on_day("opened_at", Coup),
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


_LAID_ANSWER = Answer(LaidSerializer)


class CoupCard(APIView):
    """Lay the next card; the answer says which row it went to and what comes next. A card the
    pack cannot hold is refused and recorded (``foreign_card``)."""

    @extend_schema(request=CardInput, responses=LaidSerializer)
    @idempotent
    def post(self, request: Request, id: int) -> Response:
        data = CardInput(data=request.data)
        data.is_valid(raise_exception=True)
        laid = coups.coup_lay_card(actor=request.user, coup_id=id, **data.validated_data)
        return Response(_LAID_ANSWER(laid), status=201)


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


STAKES = _STAKES.prefetch_related("settlements")
# The same read prepared once, for the answer to each act on a stake (casino/prepared.py).
_STAKE_ANSWERED = PreparedTree(_STAKES, settlements=Settlement.objects.all())


_STAKE_ANSWER = Answer(StakeDetailSerializer)


def _stake(pk: int) -> Any:
    return _STAKE_ANSWER(_STAKE_ANSWERED.get(pk))


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
        return Response(_stake(stake.pk), status=201)


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
    answer=_stake,
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


routes = [
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
]
