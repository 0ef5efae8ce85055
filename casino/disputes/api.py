"""Disputes over the API: staff raise and follow them, the deciders rule, regulators read."""

from __future__ import annotations

import functools
from typing import Any

from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import generics, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casino.api.acts import record_act
from casino.api.idempotency import idempotent
from casino.api.permissions import OVERSIGHT, HoldsRole
from casino.api.serializers import StrictSerializer
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
from casino.floor.api import FLOOR_READERS

DISPUTE_READERS = tuple(dict.fromkeys((*FLOOR_READERS, *OVERSIGHT)))


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


class DecisionSerializer(serializers.ModelSerializer[Decision]):
    decided_by = serializers.CharField(source="decided_by.username")
    approval = ApprovalSerializer(read_only=True, allow_null=True)

    class Meta:
        model = Decision
        fields = [
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


class DisputeSerializer(serializers.ModelSerializer[Dispute]):
    raised_by = serializers.CharField(source="raised_by.username")
    subject = serializers.CharField(source="subject_name")
    subject_id = serializers.SerializerMethodField()
    reglement = serializers.StringRelatedField()
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
        return int(dispute.subject().pk)

    @extend_schema_field(serializers.DictField(allow_null=True))
    def get_recomputation(self, dispute: Dispute) -> dict[str, Any] | None:
        """The engine's settlement of the contested coup beside the recorded one (as recorded)."""
        shown = services.recomputation(dispute)
        return shown.as_json() if shown else None


class DisputeList(generics.ListAPIView[Dispute]):
    """The dispute queue: ``?state=open|under_review|…``, oldest first."""

    serializer_class = DisputeSerializer
    permission_classes = [HoldsRole]
    read_roles = DISPUTE_READERS

    def get_queryset(self) -> Any:
        found = Dispute.objects.select_related("raised_by", "reglement").order_by("raised_at")
        state = self.request.query_params.get("state")
        if state:
            if state not in DisputeState.values:
                raise serializers.ValidationError({"state": f"one of {DisputeState.values}"})
            found = found.filter(state=state)
        return found


class DisputeDetail(generics.RetrieveAPIView[Dispute]):
    serializer_class = DisputeSerializer
    permission_classes = [HoldsRole]
    read_roles = DISPUTE_READERS
    queryset = Dispute.objects.all()


class RaiseInput(StrictSerializer):
    subject = serializers.ChoiceField(choices=SUBJECTS)
    subject_id = serializers.IntegerField(min_value=1)
    claim = serializers.CharField()
    on_behalf_of = serializers.CharField(required=False, allow_blank=True, max_length=120)
    statement = serializers.CharField(required=False, allow_blank=True)


class DisputeRaise(APIView):
    """Raise a dispute about a recorded coup, stake, movement (a payment), pack or card."""

    @extend_schema(request=RaiseInput, responses=DisputeSerializer)
    @idempotent
    def post(self, request: Request) -> Response:
        data = RaiseInput(data=request.data)
        data.is_valid(raise_exception=True)
        dispute = services.dispute_raise(actor=request.user, **data.validated_data)
        return Response(DisputeSerializer(dispute).data, status=201)


class NoteInput(StrictSerializer):
    note = serializers.CharField()


class DecideInput(StrictSerializer):
    articles = serializers.ListField(
        child=serializers.CharField(), help_text="article numbers of the dispute's règlement"
    )
    reasoning = serializers.CharField()
    findings = serializers.DictField(
        required=False,
        help_text='stakes as found, by reference: {"a": {"chance": "noir"}} '
        "(chance, amount, insured, on_refait)",
    )
    corrections = serializers.ListField(
        child=serializers.ListField(),
        required=False,
        help_text="[[from account, to account, amount]]: instead of the engine's, with a reason",
    )
    override_reason = serializers.CharField(required=False, allow_blank=True)


def _dispute(pk: int) -> Any:
    return DisputeSerializer(Dispute.objects.get(pk=pk)).data


_act = functools.partial(
    record_act, record_id="dispute_id", answer=_dispute, response=DisputeSerializer
)


DisputeReview = _act(
    "DisputeReview", services.dispute_review, NoteInput, "The chef de partie takes it up."
)
DisputeDecide = _act(
    "DisputeDecide",
    services.dispute_decide,
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
    def post(self, request: Request, pk: int) -> Response:
        data = EvidenceInput(data=request.data)
        data.is_valid(raise_exception=True)
        upload = data.validated_data["file"]
        evidence = services.evidence_add(
            actor=request.user,
            dispute_id=pk,
            name=upload.name,
            content=upload,  # streamed: hashed and stored a chunk at a time
            content_type=upload.content_type or "",
        )
        return Response(EvidenceSerializer(evidence).data, status=201)
