"""Disputes over the API: staff raise and follow them, the deciders rule, regulators read."""

from __future__ import annotations

import functools
from typing import Any

from django.db.models import Q
from django.urls import path
from django.utils.translation import gettext_lazy
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casino.api.acts import record_act
from casino.api.idempotency import idempotent
from casino.api.permissions import FLOOR_READERS, PIT
from casino.api.resources import Collection, Filters, Item
from casino.api.serializers import StrictSerializer, amount, reference
from casino.api.uploads import limited_multipart
from casino.disputes import services
from casino.disputes.models import (
    SUBJECTS,
    Decision,
    DecisionApproval,
    Dispute,
    DisputeState,
    DisputeStep,
    Evidence,
)
from casino.disputes.recompute import Recomputation
from casino.floor.api import SettlementSerializer
from casino.floor.play.pharao.models import RANKS
from casino.floor.services import MAX_AMOUNT
from casino.games.alliance import Call


class StepSerializer(serializers.ModelSerializer[DisputeStep]):
    actor = serializers.CharField(source="actor.username")

    class Meta:
        model = DisputeStep
        fields = ["at", "actor", "from_state", "to_state", "note"]


class EvidenceSerializer(serializers.ModelSerializer[Evidence]):
    added_by = serializers.CharField(source="added_by.username")

    class Meta:
        model = Evidence
        fields = ["id", "name", "content_type", "size", "sha256", "added_by", "added_at"]


class ApprovalSerializer(serializers.ModelSerializer[DecisionApproval]):
    by = serializers.CharField(source="by.username")

    class Meta:
        model = DecisionApproval
        fields = ["approved", "by", "at", "note"]


class CorrectionSerializer(serializers.Serializer[Any]):
    credit = serializers.CharField(help_text="the account the money leaves")
    debit = serializers.CharField(help_text="the account it enters")
    amount = serializers.IntegerField()


def _corrections(rows: list[Any]) -> list[dict[str, Any]]:
    return [{"credit": a, "debit": b, "amount": n} for a, b, n in rows]


class RecomputationSerializer(serializers.Serializer[Any]):
    recorded = SettlementSerializer(many=True, help_text="the settlement as recorded")
    computed = SettlementSerializer(many=True, help_text="the engine's, with the stakes as found")
    corrections = CorrectionSerializer(many=True)
    touches_prison = serializers.BooleanField()


def recomputation_json(shown: Recomputation | dict[str, Any]) -> dict[str, Any]:
    """A recomputation (or one stored with a decision) with its corrections as objects."""
    as_json = shown.as_json() if isinstance(shown, Recomputation) else dict(shown)
    if not as_json:
        return {}
    return {**as_json, "corrections": _corrections(as_json["corrections"])}


class FindingSerializer(serializers.Serializer[Any]):
    stake = serializers.IntegerField(required=False)
    chance = serializers.CharField(required=False)
    amount = serializers.IntegerField(required=False)
    insured = serializers.BooleanField(required=False)
    on_refait = serializers.CharField(required=False)
    rank = serializers.CharField(required=False)
    draw = serializers.IntegerField(required=False)
    bank = serializers.CharField(required=False)
    players = serializers.CharField(required=False)
    trick = serializers.IntegerField(required=False)
    place = serializers.IntegerField(required=False)
    card = serializers.CharField(required=False)
    auction = serializers.ListField(child=serializers.CharField(), required=False)
    contract = serializers.DictField(required=False)


class DecisionSerializer(serializers.ModelSerializer[Decision]):
    decided_by = serializers.CharField(source="decided_by.username")
    articles = serializers.ListField(child=serializers.CharField())
    findings = FindingSerializer(many=True)
    computed = serializers.SerializerMethodField()
    corrections = serializers.SerializerMethodField()
    approval = ApprovalSerializer(read_only=True, allow_null=True)

    class Meta:
        model = Decision
        fields = [
            "id",
            "instance",
            "decided_by",
            "decided_at",
            "articles",
            "reasoning",
            "findings",
            "computed",
            "corrections",
            "override_reason",
            "attempt",
            "approval_grounds",
            "approval",
        ]

    @extend_schema_field(RecomputationSerializer(allow_null=True))
    def get_computed(self, decision: Decision) -> dict[str, Any] | None:
        return recomputation_json(decision.computed) or None

    @extend_schema_field(CorrectionSerializer(many=True))
    def get_corrections(self, decision: Decision) -> list[dict[str, Any]]:
        return _corrections(decision.corrections)


class DisputeSerializer(serializers.ModelSerializer[Dispute]):
    raised_by = serializers.CharField(source="raised_by.username")
    subject = serializers.CharField(source="subject_name", help_text="the kind of record contested")
    subject_id = serializers.SerializerMethodField(help_text="the contested record's reference")
    steps = StepSerializer(many=True, read_only=True)
    evidence = EvidenceSerializer(many=True, read_only=True)
    decisions = DecisionSerializer(many=True, read_only=True)
    recomputation = serializers.SerializerMethodField()

    class Meta:
        model = Dispute
        fields = [
            "id",
            "state",
            "raised_at",
            "raised_by",
            "on_behalf_of",
            "subject",
            "subject_id",
            "reglement",
            "claim",
            "statement",
            "steps",
            "evidence",
            "decisions",
            "recomputation",
        ]

    def get_subject_id(self, dispute: Dispute) -> int:
        return int(getattr(dispute, f"{dispute.subject_name()}_id"))

    @extend_schema_field(RecomputationSerializer(allow_null=True))
    def get_recomputation(self, dispute: Dispute) -> dict[str, Any] | None:
        """The engine's settlement of the contested coup beside the recorded one (as recorded)."""
        shown = services.recomputation(dispute)
        return recomputation_json(shown) if shown else None


class DisputeFilters(Filters):
    state = serializers.ChoiceField(choices=DisputeState.choices, required=False)
    subject = serializers.ChoiceField(choices=SUBJECTS, required=False)
    raised_by = serializers.CharField(max_length=150, required=False, help_text="username")
    lookups = {"raised_by": "raised_by__username"}

    def apply(self, queryset: Any) -> Any:
        subject = self.validated_data.pop("subject", None)
        queryset = super().apply(queryset)
        if subject is not None:
            queryset = queryset.filter(**{f"{subject}__isnull": False})
        return queryset


class RaiseInput(StrictSerializer):
    subject = serializers.ChoiceField(choices=SUBJECTS)
    subject_id = reference(help_text="the contested record's reference")
    claim = serializers.CharField(max_length=2000)
    on_behalf_of = serializers.CharField(required=False, allow_blank=True, max_length=120)
    statement = serializers.CharField(required=False, allow_blank=True, max_length=10000)


DISPUTES = Dispute.objects.select_related("raised_by").prefetch_related(
    "steps__actor", "evidence__added_by", "decisions__decided_by", "decisions__approval__by"
)


class Raisers:
    """The pit and oversight read every dispute; anyone else the disputes they raised."""

    sees_all = PIT

    def scope(self, user: Any) -> Q:
        return Q(raised_by=user)


class DisputeList(Raisers, Collection):
    """The dispute queue, oldest first. ``POST``: raise a dispute about a recorded coup, stake,
    movement (a payment), pack or card."""

    serializer_class = DisputeSerializer
    read_roles = FLOOR_READERS
    queryset = DISPUTES
    filters = DisputeFilters

    @extend_schema(request=RaiseInput, responses=DisputeSerializer)
    @idempotent
    def post(self, request: Request) -> Response:
        data = RaiseInput(data=request.data)
        data.is_valid(raise_exception=True)
        dispute = services.dispute_raise(actor=request.user, **data.validated_data)
        return Response(_dispute(dispute.pk), status=201)


class DisputeDetail(Raisers, Item):
    serializer_class = DisputeSerializer
    read_roles = FLOOR_READERS
    queryset = DISPUTES
    noun = gettext_lazy("la contestation")


class NoteInput(StrictSerializer):
    note = serializers.CharField(max_length=2000)


class FindingInput(StrictSerializer):
    """A stake as found (a coup's: chance, amount, insurance, choice at a refait; a Pharao
    taille's: rank, amount), at Pharao a draw's cards as found, at Alliance a card as found at
    its place in a trick or the calls as found (the auction in full, the contract). Which fields
    go with which record is the recomputation's to say (``invalid_finding`` with the field)."""

    stake = reference(required=False, help_text="the stake as found")
    chance = serializers.ChoiceField(
        choices=["rouge", "noir", "couleur", "inverse"], required=False
    )
    amount = amount(MAX_AMOUNT, required=False)
    insured = serializers.BooleanField(required=False)
    on_refait = serializers.CharField(required=False, allow_blank=True, max_length=20)
    rank = serializers.ChoiceField(
        choices=[r for r, _label in RANKS],
        required=False,
        help_text="Pharao: the rank the stake was on",
    )
    draw = serializers.IntegerField(
        min_value=1, max_value=26, required=False, help_text="Pharao: the draw as found"
    )
    bank = serializers.CharField(
        max_length=3, required=False, help_text="Pharao: the draw's left card (the bank's)"
    )
    players = serializers.CharField(
        max_length=3, required=False, help_text="Pharao: the draw's right card (the players')"
    )
    trick = serializers.IntegerField(
        min_value=1, max_value=12, required=False, help_text="Alliance: the trick (1 the first)"
    )
    place = serializers.IntegerField(
        min_value=1,
        max_value=6,
        required=False,
        help_text="Alliance: the card's place in the trick, in the order played (1 the leader's)",
    )
    card = serializers.CharField(
        max_length=3, required=False, help_text="Alliance: the card actually played there"
    )
    auction = serializers.ListField(
        child=serializers.ChoiceField(choices=[c.value for c in Call]),
        max_length=60,
        required=False,
        help_text="Alliance: every call as found, in turn from the Vorhand",
    )
    contract = serializers.DictField(
        required=False,
        help_text='Alliance: the contract as found, as REPLAY.md writes it ({"trumps": "H", '
        '"called": "KS"}, {"turn": 2, "take": false, "called": "KS"}, {"trumps": "S", '
        '"resistance": null}), when the calls as found change it',
    )


class CorrectionInput(StrictSerializer):
    credit = serializers.CharField(max_length=60, help_text="the account the money leaves")
    debit = serializers.CharField(max_length=60, help_text="the account it enters")
    amount = amount(MAX_AMOUNT)


class DecideInput(StrictSerializer):
    articles = serializers.ListField(
        child=serializers.CharField(max_length=10),
        max_length=50,
        help_text="article numbers of the dispute's règlement",
    )
    reasoning = serializers.CharField(max_length=10000)
    findings = FindingInput(
        many=True,
        required=False,
        help_text="the stakes, cards or calls as found: what the record got wrong",
    )
    corrections = CorrectionInput(
        many=True,
        required=False,
        help_text="instead of the engine's corrections, with an override_reason",
    )
    override_reason = serializers.CharField(required=False, allow_blank=True, max_length=2000)


def _decide(*, actor: Any, dispute_id: int, **given: Any) -> Any:
    """The decision as the service takes it: corrections as [from, to, amount]."""
    if "corrections" in given:
        given["corrections"] = [
            [c["credit"], c["debit"], c["amount"]] for c in given["corrections"]
        ]
    if "findings" in given:
        given["findings"] = [dict(f) for f in given["findings"]]
    return services.dispute_decide(actor=actor, dispute_id=dispute_id, **given)


def _dispute(pk: int) -> Any:
    return DisputeSerializer(DISPUTES.get(pk=pk)).data


_act = functools.partial(
    record_act, record_id="dispute_id", answer=_dispute, response=DisputeSerializer
)


DisputeReview = _act(
    "DisputeReview", services.dispute_review, NoteInput, "The chef de partie takes it up."
)
DisputeDecide = _act(
    "DisputeDecide",
    _decide,
    DecideInput,
    "Rule: the chef de partie first, the commissioner on appeal. Corrections are movements, "
    "posted at once or, beyond the engine's computation or the règlement's threshold, once a "
    "second approver approves.",
)
DecisionApprove = _act(
    "DecisionApprove",
    services.decision_approve,
    NoteInput,
    "The second approver (director or commissioner) approves the decision: its corrections move.",
)
DecisionRefuse = _act(
    "DecisionRefuse",
    services.decision_refuse,
    NoteInput,
    "The second approver refuses the decision: nothing moves; it is decided again.",
)
DisputeAppeal = _act(
    "DisputeAppeal", services.dispute_appeal, NoteInput, "Appeal to the police commissioner."
)
DisputeWithdraw = _act(
    "DisputeWithdraw", services.dispute_withdraw, NoteInput, "Withdraw a dispute not yet decided."
)


class EvidenceInput(StrictSerializer):
    file = serializers.FileField()


class EvidenceAdd(APIView):
    """Attach a photo or a scan (multipart ``file``); its SHA-256 enters the audit chain."""

    # A body too large for a file the service accepts is refused unread.
    parser_classes = [limited_multipart(services.MAX_EVIDENCE_BYTES)]

    @extend_schema(request={"multipart/form-data": EvidenceInput}, responses=EvidenceSerializer)
    @idempotent
    def post(self, request: Request, id: int) -> Response:
        data = EvidenceInput(data=request.data)
        data.is_valid(raise_exception=True)
        upload = data.validated_data["file"]
        evidence = services.evidence_add(
            actor=request.user,
            dispute_id=id,
            name=upload.name,
            content=upload,  # streamed: hashed and stored a chunk at a time
            content_type=upload.content_type or "",
        )
        return Response(EvidenceSerializer(evidence).data, status=201)


routes = [
    path("disputes", DisputeList.as_view(), name="disputes"),
    path("disputes/<ref:id>", DisputeDetail.as_view(), name="dispute"),
    path("disputes/<ref:id>/evidence", EvidenceAdd.as_view(), name="dispute-evidence"),
    path("disputes/<ref:id>/review", DisputeReview.as_view(), name="dispute-review"),
    path("disputes/<ref:id>/decide", DisputeDecide.as_view(), name="dispute-decide"),
    path("disputes/<ref:id>/approve", DecisionApprove.as_view(), name="dispute-approve"),
    path("disputes/<ref:id>/refuse", DecisionRefuse.as_view(), name="dispute-refuse"),
    path("disputes/<ref:id>/appeal", DisputeAppeal.as_view(), name="dispute-appeal"),
    path("disputes/<ref:id>/withdraw", DisputeWithdraw.as_view(), name="dispute-withdraw"),
]
