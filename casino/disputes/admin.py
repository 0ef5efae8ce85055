"""The dispute queue and the dispute page: the subject as it was played, the engine's settlement
beside the recorded one, and one form per act, each calling its service."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import path, re_path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from casino import clock, shown
from casino.admin_base import RecordAdmin, RecordInline
from casino.disputes import services
from casino.disputes.decide_form import DecideForm
from casino.disputes.games import game_disputes
from casino.disputes.models import (
    SUBJECT_WORDS,
    SUBJECTS,
    Decision,
    Dispute,
    DisputeState,
    DisputeStep,
    Evidence,
)
from casino.floor.models import Stake
from casino.floor.selectors import row_html
from casino.pit.table_view import OUTCOME_WORDS
from casino.readable import readable, recorded_words, transfer

AWAITING = (DisputeState.AWAITING_APPROVAL, DisputeState.AWAITING_APPROVAL_APPEAL)


class AgeFilter(admin.SimpleListFilter):
    title = gettext_lazy("âge")
    parameter_name = "age"
    BANDS = {"day": (0, 1), "week": (1, 8), "older": (8, 100_000)}

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [
            ("day", _("moins d'un jour")),
            ("week", _("de 1 à 8 jours")),
            ("older", _("plus de 8 jours")),
        ]

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

    @admin.display(description=gettext_lazy("fichier"))
    def download(self, evidence: Evidence) -> str:
        url = reverse("admin:disputes_evidence_file", args=[evidence.pk])
        return format_html('<a href="{}">{}</a>', url, evidence.name)


class DecisionInline(RecordInline):
    model = Decision
    fields = [
        "instance",
        "decided_by",
        "decided_at",
        "article_numbers",
        "reasoning",
        "found",
        "ordered",
        "second_approval",
    ]

    @admin.display(description=gettext_lazy("articles"))
    def article_numbers(self, decision: Decision) -> str:
        return ", ".join(map(str, decision.articles)) or "–"

    @admin.display(description=gettext_lazy("faits constatés"))
    def found(self, decision: Decision) -> str:
        return readable(decision.findings)

    @admin.display(description=gettext_lazy("seconde approbation"))
    def second_approval(self, decision: Decision) -> str:
        if not decision.approval_grounds:
            return _("non requise")
        approval = getattr(decision, "approval", None)
        grounds = recorded_words(decision.approval_grounds)
        if approval is None:
            return _("en attente (%(grounds)s)") % {"grounds": grounds}
        return f"{approval} — {approval.note} ({grounds})"

    @admin.display(description=gettext_lazy("corrections ordonnées"))
    def ordered(self, decision: Decision) -> str:
        moves = corrections_text(decision.corrections)
        if not decision.override_reason:
            return moves
        return _("%(moves)s — motif de l'écart : %(reason)s") % {
            "moves": moves,
            "reason": decision.override_reason,
        }


def corrections_text(corrections: list[Any]) -> str:
    """``T1:bank → T1:seat:3 : 20,00; …``, or "none"."""
    return "; ".join(transfer(a, b, n) for a, b, n in corrections) or _("aucune")


def rule_table(dispute: Dispute, recomputed: dict[str, Any]) -> str:
    """The recomputation as the page shows it: as the contested round's game writes it, or
    stake by stake."""
    game = game_disputes(dispute.subject_name())
    written = game.beside(recomputed) if game is not None else None
    return written if written is not None else _settlement_table(recomputed)


def _settlement_table(recomputed: dict[str, Any]) -> str:
    """Recorded and computed settlements side by side, stake by stake."""
    recorded = {r["stake"]: r for r in recomputed["recorded"]}
    computed = {r["stake"]: r for r in recomputed["computed"]}
    stakes = Stake.objects.filter(pk__in=[*recorded, *computed]).select_related("holder")
    named = {s.pk: f"{s.ref} · {s.holder.code}" for s in stakes}
    amounts = {
        "paid": gettext_lazy("payé"),
        "returned": gettext_lazy("rendu"),
        "to_bank": gettext_lazy("à la banque"),
        "premium": gettext_lazy("prime"),
        "held": gettext_lazy("en prison"),
    }

    def cell(r: dict[str, Any] | None) -> str:
        if r is None:
            return "–"
        money = ", ".join(f"{word} {shown.money(r[k])}" for k, word in amounts.items() if r.get(k))
        return f"{OUTCOME_WORDS.get(r['outcome'], r['outcome'])} ({money or shown.money(0)})"

    rows = format_html_join(
        "",
        "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
        (
            (named.get(pk, pk), cell(recorded.get(pk)), cell(computed.get(pk)))
            for pk in dict.fromkeys([*recorded, *computed])
        ),
    )
    return format_html(
        "<table><tr><th>{}</th><th>{}</th><th>{}</th></tr>{}</table><p>{} {}</p>",
        _("mise"),
        _("enregistré"),
        _("selon la règle"),
        rows,
        _("différence :"),
        corrections_text(recomputed["corrections"]),
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
        "review": ((DisputeState.OPEN,), gettext_lazy("Examiner")),
        "decide": ((DisputeState.UNDER_REVIEW, DisputeState.APPEALED), gettext_lazy("Décider")),
        "approve": (AWAITING, gettext_lazy("Approuver la décision")),
        "refuse": (AWAITING, gettext_lazy("Refuser la décision")),
        "appeal": ((DisputeState.DECIDED,), gettext_lazy("Faire appel")),
        "withdraw": ((DisputeState.OPEN, DisputeState.UNDER_REVIEW), gettext_lazy("Retirer")),
    }

    @admin.display(description=gettext_lazy("âge"))
    def age(self, dispute: Dispute) -> str:
        days = (clock.now() - dispute.raised_at).days
        return _("%(days)s j") % {"days": days}

    @admin.display(description=gettext_lazy("objet contesté"))
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

    @admin.display(description=gettext_lazy("la règle à côté de l'enregistrement"))
    def rule_beside_record(self, dispute: Dispute) -> str:
        shown = services.recomputation(dispute)
        return "–" if shown is None else rule_table(dispute, shown.as_json())

    @admin.display(description=gettext_lazy("actes"))
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
            raise PermissionDenied
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
            return _("%(dispute)s enregistrée") % {"dispute": dispute}, messages.SUCCESS

        return self.act_view(
            request,
            form=form,
            act=act,
            done_url=reverse("admin:disputes_dispute_changelist"),
            template="admin/act.html",
            title=_("Contester"),
        )

    def act_on(self, request: HttpRequest, pk: int, act: str) -> HttpResponse:
        dispute = get_object_or_404(Dispute, pk=pk)
        if act not in self.ACTS or not self.has_view_permission(request, dispute):
            raise Http404
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
            return _("Enregistré"), messages.SUCCESS

        shown = services.recomputation(dispute)
        return self.act_view(
            request,
            form=form,
            act=run,
            done_url=reverse("admin:disputes_dispute_change", args=[pk]),
            template="admin/act.html",
            title=_("%(act)s : %(dispute)s") % {"act": self.ACTS[act][1], "dispute": dispute},
            dispute=dispute,
            subject=self.subject_played(dispute),
            rule=rule_table(dispute, shown.as_json()) if shown else "",
        )


class RaiseForm(forms.Form):
    subject = forms.ChoiceField(
        label=gettext_lazy("objet"), choices=[(s, SUBJECT_WORDS[s]) for s in SUBJECTS]
    )
    subject_id = forms.IntegerField(label=gettext_lazy("n° de l'enregistrement"), min_value=1)
    claim = forms.CharField(
        label=gettext_lazy("réclamation"), widget=forms.Textarea(attrs={"rows": 3})
    )
    on_behalf_of = forms.CharField(label=gettext_lazy("pour"), required=False, max_length=120)
    statement = forms.CharField(
        label=gettext_lazy("déclaration du joueur"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
    )
    evidence = forms.FileField(label=gettext_lazy("pièce (photo, scan)"), required=False)


class NoteForm(forms.Form):
    note = forms.CharField(label=gettext_lazy("motif"), widget=forms.Textarea(attrs={"rows": 3}))


@admin.register(Evidence)
class EvidenceAdmin(RecordAdmin):
    list_display = ["name", "dispute", "sha256", "added_by", "added_at"]
