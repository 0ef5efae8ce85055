"""The dispute queue and the dispute page: the subject as it was played, the engine's settlement
beside the recorded one, and one form per act, each calling its service."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.http import FileResponse, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import path, re_path, reverse
from django.utils.html import format_html, format_html_join

from casino import clock
from casino.admin_base import RecordAdmin, RecordInline
from casino.disputes import services
from casino.disputes.models import SUBJECTS, Decision, Dispute, DisputeState, DisputeStep, Evidence
from casino.floor.selectors import row_html

AWAITING = (DisputeState.AWAITING_APPROVAL, DisputeState.AWAITING_APPROVAL_APPEAL)


class AgeFilter(admin.SimpleListFilter):
    title = "âge / age"
    parameter_name = "age"
    BANDS = {"day": (0, 1), "week": (1, 8), "older": (8, 100_000)}

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("day", "< 1 jour / day"), ("week", "1–8 jours / days"), ("older", "> 8 jours")]

    def queryset(self, request: HttpRequest, queryset: Any) -> Any:
        if self.value() not in self.BANDS:
            return queryset
        low, high = self.BANDS[self.value()]  # type: ignore[index]
        now = clock.now()
        return queryset.filter(
            raised_at__lte=now - dt.timedelta(days=low), raised_at__gt=now - dt.timedelta(days=high)
        )


class StepInline(RecordInline):
    model = DisputeStep
    fields = ["at", "actor", "from_state", "to_state", "note"]


class EvidenceInline(RecordInline):
    model = Evidence
    fields = ["download", "content_type", "size", "sha256", "added_by", "added_at"]

    @admin.display(description="fichier / file")
    def download(self, evidence: Evidence) -> str:
        url = reverse("admin:disputes_evidence_file", args=[evidence.pk])
        return format_html('<a href="{}">{}</a>', url, evidence.name)


class DecisionInline(RecordInline):
    model = Decision
    fields = [
        "instance",
        "decided_by",
        "decided_at",
        "articles",
        "reasoning",
        "ordered",
        "second_approval",
    ]

    @admin.display(description="second approbateur / second approval")
    def second_approval(self, decision: Decision) -> str:
        if not decision.approval_grounds:
            return "non requise / not required"
        approval = getattr(decision, "approval", None)
        if approval is None:
            return f"en attente / awaiting ({decision.approval_grounds})"
        verdict = "approuvée / approved" if approval.approved else "refusée / refused"
        return f"{verdict}: {approval.by} — {approval.note} ({decision.approval_grounds})"

    @admin.display(description="corrections ordonnées / corrections ordered")
    def ordered(self, decision: Decision) -> str:
        reason = (
            f" — écart / override: {decision.override_reason}" if decision.override_reason else ""
        )
        moves = "; ".join(f"{a} → {b}: {n}" for a, b, n in decision.corrections) or "aucune / none"
        return moves + reason


def _settlement_table(recomputed: dict[str, Any]) -> str:
    """Recorded and computed settlements side by side, stake by stake."""
    recorded = {r["stake"]: r for r in recomputed["recorded"]}
    computed = {r["stake"]: r for r in recomputed["computed"]}

    def cell(r: dict[str, Any] | None) -> str:
        if r is None:
            return "–"
        money = ", ".join(f"{k} {r[k]}" for k in ("paid", "returned", "to_bank", "premium") if r[k])
        return f"{r['outcome']} ({money or '0'})"

    rows = format_html_join(
        "",
        "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
        (
            (ref, cell(recorded.get(ref)), cell(computed.get(ref)))
            for ref in dict.fromkeys([*recorded, *computed])
        ),
    )
    moves = "; ".join(f"{a} → {b}: {n}" for a, b, n in recomputed["corrections"]) or "aucune / none"
    return format_html(
        "<table><tr><th>mise / stake</th><th>enregistré / recorded</th>"
        "<th>selon la règle / the rule's answer</th></tr>{}</table>"
        "<p>différence / difference: {}</p>",
        rows,
        moves,
    )


@admin.register(Dispute)
class DisputeAdmin(RecordAdmin):
    """The queue: by state and age, oldest first. Each act is a form that calls its service."""

    list_display = ["__str__", "state", "age", "raised_by", "on_behalf_of", "raised_at"]
    list_filter = ["state", AgeFilter]
    ordering = ["raised_at"]
    search_fields = ["claim", "on_behalf_of"]
    inlines = [StepInline, EvidenceInline, DecisionInline]
    readonly_fields = [
        "state",
        "raised_by",
        "raised_at",
        "on_behalf_of",
        "reglement",
        "claim",
        "statement",
        "subject_played",
        "rule_beside_record",
        "acts",
    ]
    fields = readonly_fields
    ACTS = {
        "review": ((DisputeState.OPEN,), "Examiner / Review"),
        "decide": ((DisputeState.UNDER_REVIEW, DisputeState.APPEALED), "Décider / Decide"),
        "approve": (AWAITING, "Approuver la décision / Approve the decision"),
        "refuse": (AWAITING, "Refuser la décision / Refuse the decision"),
        "appeal": ((DisputeState.DECIDED,), "Faire appel / Appeal"),
        "withdraw": ((DisputeState.OPEN, DisputeState.UNDER_REVIEW), "Retirer / Withdraw"),
    }

    @admin.display(description="âge / age")
    def age(self, dispute: Dispute) -> str:
        days = (clock.now() - dispute.raised_at).days
        return f"{days} j"

    @admin.display(description="objet contesté / contested record")
    def subject_played(self, dispute: Dispute) -> str:
        coup = services.contested_coup_of(dispute.subject_name(), dispute.subject())
        label = format_html("<p>{}</p>", dispute.subject_label())
        result = getattr(coup, "outcome", None) if coup is not None else None
        if result is None:
            return label
        url = reverse("admin:floor_coup_change", args=[coup.pk])  # type: ignore[union-attr]
        return format_html(
            '{}<p><a href="{}">{}</a></p>{}{}',
            label,
            url,
            coup,
            row_html(result.noir_cards, result.noir_total, result.announcement["noir"]),
            row_html(result.rouge_cards, result.rouge_total, result.announcement["rouge"]),
        )

    @admin.display(description="la règle et l'enregistrement / the rule beside the record")
    def rule_beside_record(self, dispute: Dispute) -> str:
        shown = services.recomputation(dispute)
        return "–" if shown is None else _settlement_table(shown.as_json())

    @admin.display(description="actes / acts")
    def acts(self, dispute: Dispute) -> str:
        buttons = [
            (reverse("admin:disputes_dispute_act", args=[dispute.pk, name]), label)
            for name, (states, label) in self.ACTS.items()
            if dispute.state in states
        ]
        return format_html_join(" ", '<a class="button" href="{}">{}</a>', buttons) or "–"

    def get_urls(self) -> list[Any]:
        return [
            path(
                "raise/",
                self.admin_site.admin_view(self.raise_view),
                name="disputes_dispute_raise",
            ),
            path(
                "evidence/<int:pk>/",
                self.admin_site.admin_view(self.evidence_file),
                name="disputes_evidence_file",
            ),
            re_path(
                rf"^(?P<pk>\d+)/(?P<act>{'|'.join(self.ACTS)})/$",
                self.admin_site.admin_view(self.act_on),
                name="disputes_dispute_act",
            ),
            *super().get_urls(),
        ]

    def evidence_file(self, request: HttpRequest, pk: int) -> HttpResponse:
        """Evidence is served to those who may see the dispute, never as a public file."""
        evidence = get_object_or_404(Evidence, pk=pk)
        if not self.has_view_permission(request, evidence.dispute):
            return HttpResponse(status=403)
        return FileResponse(
            evidence.file.open("rb"),
            as_attachment=True,
            filename=evidence.name,
            content_type=evidence.content_type,
        )

    def raise_view(self, request: HttpRequest) -> HttpResponse:
        form = RaiseForm(request.POST or None, request.FILES or None, initial=request.GET.dict())

        def act(data: dict[str, Any]) -> tuple[str, int]:
            upload = data.pop("evidence")
            dispute = services.dispute_raise(actor=request.user, **data)
            if upload:
                services.evidence_add(
                    actor=request.user,
                    dispute_id=dispute.pk,
                    name=upload.name,
                    content=upload.read(),
                    content_type=upload.content_type or "",
                )
            return f"{dispute} enregistrée / recorded", messages.SUCCESS

        return self.act_view(
            request,
            form=form,
            act=act,
            done_url=reverse("admin:disputes_dispute_changelist"),
            template="admin/act.html",
            title="Contester / Raise a dispute",
        )

    def act_on(self, request: HttpRequest, pk: int, act: str) -> HttpResponse:
        dispute = get_object_or_404(Dispute, pk=pk)
        if act not in self.ACTS or not self.has_view_permission(request, dispute):
            return HttpResponse(status=404)
        form: forms.Form
        if act == "decide":
            form = DecideForm(request.POST or None, dispute=dispute)
        else:
            form = NoteForm(request.POST or None)
        service = {
            "review": services.dispute_review,
            "decide": services.dispute_decide,
            "approve": services.decision_approve,
            "refuse": services.decision_refuse,
            "appeal": services.dispute_appeal,
            "withdraw": services.dispute_withdraw,
        }[act]

        def run(data: dict[str, Any]) -> tuple[str, int]:
            service(actor=request.user, dispute_id=dispute.pk, **data)
            return "Enregistré / Recorded", messages.SUCCESS

        shown = services.recomputation(dispute)
        return self.act_view(
            request,
            form=form,
            act=run,
            done_url=reverse("admin:disputes_dispute_change", args=[pk]),
            template="admin/act.html",
            title=f"{self.ACTS[act][1]}: {dispute}",
            dispute=dispute,
            subject=self.subject_played(dispute),
            rule=_settlement_table(shown.as_json()) if shown else "",
        )


class RaiseForm(forms.Form):
    subject = forms.ChoiceField(label="objet / subject", choices=[(s, s) for s in SUBJECTS])
    subject_id = forms.IntegerField(label="numéro / record id", min_value=1)
    claim = forms.CharField(label="réclamation / claim", widget=forms.Textarea(attrs={"rows": 3}))
    on_behalf_of = forms.CharField(label="pour / on behalf of", required=False, max_length=120)
    statement = forms.CharField(
        label="déclaration du joueur / patron's statement",
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
    )
    evidence = forms.FileField(label="pièce / evidence (photo, scan)", required=False)


class NoteForm(forms.Form):
    note = forms.CharField(label="note / motif", widget=forms.Textarea(attrs={"rows": 3}))


class DecideForm(forms.Form):
    articles = forms.MultipleChoiceField(
        label="articles appliqués / articles applied", widget=forms.CheckboxSelectMultiple
    )
    reasoning = forms.CharField(
        label="motifs / reasoning", widget=forms.Textarea(attrs={"rows": 4})
    )
    findings = forms.JSONField(
        label="faits constatés / findings",
        required=False,
        help_text='stakes as found, each by its reference: [{"stake": 12, "chance": "noir"}]',
    )
    corrections = forms.JSONField(
        label="corrections (si autres que la règle / if not the rule's)",
        required=False,
        help_text='[["T1:bank", "T1:seat:3", 2000]]',
    )
    override_reason = forms.CharField(
        label="motif de l'écart / override reason", required=False, widget=forms.Textarea
    )

    def __init__(self, *args: Any, dispute: Dispute, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["articles"].choices = [
            (a["number"], f"{a['number']}. {a['fr']} / {a['en']}")
            for a in dispute.reglement.articles
        ]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        data["findings"] = data.get("findings") or []
        if data.get("corrections") in (None, ""):
            data["corrections"] = None
        return data


@admin.register(Evidence)
class EvidenceAdmin(RecordAdmin):
    list_display = ["name", "dispute", "sha256", "added_by", "added_at"]
