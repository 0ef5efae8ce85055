"""The audit log and the anomaly review queue in the admin."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from audit.models import (
    ANOMALY_TRANSITIONS,
    Anomaly,
    AnomalyReview,
    AnomalyState,
    AuditEvent,
    ChainVerification,
)
from audit.queue import (
    AGES,
    PENDING,
    age_filter,
    finding_of,
    is_finding,
    over_time_svg,
    queue_counts,
    raised_per_day,
)
from audit.services import BATCH_LIMIT, REVIEWERS, anomalies_review, anomaly_review
from casino import clock, shown
from casino.admin_base import IndexedHistoryAdmin, RecordAdmin, RecordInline, ValuesByIndex
from casino.detectors.svg import svg
from casino.errors import DomainError
from casino.i18n import either
from casino.people.services import roles_of
from casino.readable import readable, subject_link

# Where ``expected`` is money (a séance's rundown), not a number of cards (a talon's count).
RUNDOWNS = ("shift.closed", "cash_variance")


@admin.register(AuditEvent)
class AuditEventAdmin(IndexedHistoryAdmin):
    list_display = ["seq", "when", "actor_name", "action", "subject", "short_hash"]
    # Millions of events a month: their actions and kinds of subject found through their indexes,
    # and counted once (for the pages), not a second time for "n in all".
    list_filter = [("action", ValuesByIndex), ("subject_type", ValuesByIndex)]
    show_full_result_count = False
    search_fields = ["action", "subject_id", "actor_name", "hash"]
    date_hierarchy = "at"
    readonly_fields = [
        "seq",
        "when",
        "actor_name",
        "action",
        "subject",
        "payload_read",
        "prev_hash",
        "hash",
    ]
    fields = readonly_fields

    @admin.display(description=gettext_lazy("date"), ordering="at")
    def when(self, event: AuditEvent) -> str:
        return shown.moment(event.at, seconds=True)

    @admin.display(description=gettext_lazy("objet"))
    def subject(self, event: AuditEvent) -> str:
        return subject_link(event.subject_type, event.subject_id)

    @admin.display(description=gettext_lazy("empreinte"))
    def short_hash(self, event: AuditEvent) -> str:
        return event.hash[:16] + "…"

    @admin.display(description=gettext_lazy("contenu"))
    def payload_read(self, event: AuditEvent) -> str:
        money = {"expected"} if event.action in RUNDOWNS else set()
        return readable(event.payload, money=money)


@admin.register(ChainVerification)
class ChainVerificationAdmin(RecordAdmin):
    list_display = ["when", "ok", "events", "head_seq", "first_broken_seq", "seconds"]
    readonly_fields = [
        "when",
        "ok",
        "events",
        "head_seq",
        "head_hash",
        "first_broken_seq",
        "reason",
        "seconds",
    ]
    fields = readonly_fields

    @admin.display(description=gettext_lazy("date"), ordering="at")
    def when(self, verification: ChainVerification) -> str:
        return shown.moment(verification.at, seconds=True)

    list_filter = ["ok"]


class AnomalyReviewInline(RecordInline):
    model = AnomalyReview
    fields = ["at", "actor", "from_state", "to_state", "reason"]
    verbose_name_plural = gettext_lazy("historique de l'examen")


# Each review step as a verb on a button, and as a bulk action of the queue.
STEP_VERBS = {
    AnomalyState.ACKNOWLEDGED: gettext_lazy("Prendre en compte"),
    AnomalyState.DISMISSED: gettext_lazy("Classer"),
    AnomalyState.ESCALATED: gettext_lazy("Transmettre au commissaire"),
    AnomalyState.CONFIRMED: gettext_lazy("Confirmer"),
}


class ReviewForm(forms.Form):
    to_state = forms.ChoiceField(label=gettext_lazy("nouvel état"))
    reason = forms.CharField(label=gettext_lazy("motif"), widget=forms.Textarea(attrs={"rows": 3}))

    def __init__(self, *args: Any, anomaly: Anomaly, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        labels = dict(Anomaly._meta.get_field("state").choices or [])
        self.fields["to_state"].choices = [
            (b, labels[b]) for a, b in ANOMALY_TRANSITIONS if a == anomaly.state
        ]


class BulkReviewForm(forms.Form):
    reason = forms.CharField(
        label=gettext_lazy("motif, le même pour chacune"),
        widget=forms.Textarea(attrs={"rows": 3, "cols": 80}),
    )


class AgeFilter(admin.SimpleListFilter):
    """How long ago the anomaly was detected (the queue's age buckets)."""

    title = gettext_lazy("âge")
    parameter_name = "age"

    def lookups(self, request: HttpRequest, model_admin: Any) -> Any:
        return AGES

    def queryset(self, request: HttpRequest, queryset: QuerySet[Anomaly]) -> QuerySet[Anomaly]:
        if self.value() in dict(AGES):
            return queryset.filter(age_filter(str(self.value()), clock.now()))
        return queryset


@dataclass
class NextStep:
    """A step the anomaly may take from its state: who takes it, and whether this person may."""

    to_state: str
    verb: str
    roles: str
    allowed: bool
    why_not: str
    url: str


def next_steps(user: Any, anomaly: Anomaly) -> list[NextStep]:
    steps = []
    held = roles_of(user)
    for (a, b), roles in REVIEWERS.items():
        if a != anomaly.state:
            continue
        why_not = ""
        if not held & set(roles):
            why_not = str(
                _("il faut le rôle %(roles)s") % {"roles": either(r.label for r in roles)}
            )
        elif user.pk in anomaly.involved:
            why_not = str(_("vous êtes en cause dans cette anomalie"))
        url = reverse("admin:audit_anomaly_review", args=[anomaly.pk])
        steps.append(
            NextStep(
                to_state=b.value,
                verb=str(STEP_VERBS[b]),
                roles=", ".join(r.label for r in roles),
                allowed=not why_not,
                why_not=why_not,
                url=f"{url}?{urlencode({'to': b.value})}",
            )
        )
    return steps


@admin.register(Anomaly)
class AnomalyAdmin(RecordAdmin):
    """The review queue: counted by severity, detector and age, with a picture of the anomalies
    raised per day; each review step, one by one or in bulk, goes through the audit services."""

    list_display = ["detected_at", "severity", "detector", "state", "summary", "subject"]
    list_filter = ["state", "severity", AgeFilter, "detector"]
    search_fields = ["summary", "subject_id", "detector"]
    date_hierarchy = "detected_at"
    show_full_result_count = False  # the counts above say it, in one query
    inlines = [AnomalyReviewInline]
    actions = ["acknowledge_selected", "dismiss_selected", "escalate_selected", "confirm_selected"]
    change_list_template = "admin/audit/anomaly/change_list.html"
    change_form_template = "admin/audit/anomaly/change_form.html"
    readonly_fields = [
        "detector",
        "severity",
        "state",
        "summary",
        "subject",
        "detected_at",
        "evidence_read",
        "involved_people",
        "review_link",
    ]
    fields = readonly_fields

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        # A detector's finding is laid out above the fields (the template); a hard rule's
        # evidence is read here.
        if obj is not None and is_finding(obj.evidence):
            return [f for f in self.fields if f != "evidence_read"]
        return self.fields

    @admin.display(description=gettext_lazy("objet"))
    def subject(self, anomaly: Anomaly) -> str:
        return subject_link(anomaly.subject_type, anomaly.subject_id)

    @admin.display(description=gettext_lazy("éléments"))
    def evidence_read(self, anomaly: Anomaly) -> str:
        money = {"expected"} if anomaly.detector in RUNDOWNS else set()
        return readable(anomaly.evidence, money=money)

    @admin.display(description=gettext_lazy("personnes en cause"))
    def involved_people(self, anomaly: Anomaly) -> str:
        from django.contrib.auth.models import User

        people = User.objects.filter(pk__in=anomaly.involved).order_by("username")
        return (
            format_html_join(
                ", ",
                '<a href="{}">{}</a>',
                ((reverse("admin:auth_user_change", args=[p.pk]), _person(p)) for p in people),
            )
            or "–"
        )

    @admin.display(description=gettext_lazy("examen"))
    def review_link(self, anomaly: Anomaly) -> str:
        if not any(a == anomaly.state for a, _b in ANOMALY_TRANSITIONS):
            return "–"
        url = reverse("admin:audit_anomaly_review", args=[anomaly.pk])
        return format_html('<a class="button" href="{}">{}</a>', url, _("Examiner"))

    # The queue.

    def changelist_view(self, request: HttpRequest, extra_context: Any = None) -> Any:
        changelist = reverse("admin:audit_anomaly_changelist")
        counts = queue_counts(clock.now())
        # "o" counts the checkbox column when the person has actions.
        column = self.get_list_display(request).index("detected_at")
        column += 1 if self.get_actions(request) else 0
        oldest = {"state__exact": AnomalyState.OPEN.value, "o": str(column)}
        context = {
            "title": _("File des anomalies à examiner"),
            "counts": counts,
            "count_tables": [
                (title, id_, [(row.label, row.cells(changelist)) for row in rows])
                for title, id_, rows in (
                    (_("par gravité"), "by-severity", counts.by_severity),
                    (_("par détecteur"), "by-detector", counts.by_detector),
                    (_("par âge"), "by-age", counts.by_age),
                )
            ],
            "pending_states": [AnomalyState(s).label for s in PENDING],
            "changelist_url": changelist,
            "oldest_open_url": f"{changelist}?{urlencode(oldest)}",
            "oldest_open": shown.moment(counts.oldest_open),
            "over_time": over_time_svg(raised_per_day(shown.today())),
            **(extra_context or {}),
        }
        return super().changelist_view(request, context)

    def has_review_permission(self, request: HttpRequest) -> bool:
        # Who may see the bulk acts; each step is still checked by the service (the role of the
        # step, the people in question).
        return bool(request.user.has_perm("audit.change_anomaly"))

    @admin.action(
        description=gettext_lazy("Prendre en compte les anomalies choisies"),
        permissions=["review"],
    )
    def acknowledge_selected(self, request: HttpRequest, queryset: QuerySet[Anomaly]) -> Any:
        return self._bulk_review(request, queryset, AnomalyState.ACKNOWLEDGED)

    @admin.action(
        description=gettext_lazy("Classer les anomalies choisies"), permissions=["review"]
    )
    def dismiss_selected(self, request: HttpRequest, queryset: QuerySet[Anomaly]) -> Any:
        return self._bulk_review(request, queryset, AnomalyState.DISMISSED)

    @admin.action(
        description=gettext_lazy("Transmettre au commissaire les anomalies choisies"),
        permissions=["review"],
    )
    def escalate_selected(self, request: HttpRequest, queryset: QuerySet[Anomaly]) -> Any:
        return self._bulk_review(request, queryset, AnomalyState.ESCALATED)

    @admin.action(
        description=gettext_lazy("Confirmer les anomalies choisies"), permissions=["review"]
    )
    def confirm_selected(self, request: HttpRequest, queryset: QuerySet[Anomaly]) -> Any:
        return self._bulk_review(request, queryset, AnomalyState.CONFIRMED)

    def _bulk_review(
        self, request: HttpRequest, queryset: QuerySet[Anomaly], to_state: AnomalyState
    ) -> HttpResponse | None:
        """The page asking one reason for the chosen anomalies, then the batch, all or nothing
        (``anomalies_review``). The batch is the anomalies listed on that page, by number: one
        that moved on meanwhile is refused by name, not silently left out."""
        confirmed = request.POST.get("post") == "yes"
        if confirmed:
            ids = sorted(
                {int(pk) for pk in request.POST.getlist(ACTION_CHECKBOX_NAME) if pk.isdigit()}
            )
        else:
            ids = list(queryset.order_by("pk").values_list("pk", flat=True)[: BATCH_LIMIT + 1])
        form = BulkReviewForm(request.POST if confirmed else None)
        if confirmed and form.is_valid():
            try:
                done = anomalies_review(
                    actor=request.user,
                    anomaly_ids=ids,
                    to_state=to_state,
                    reason=form.cleaned_data["reason"],
                )
            except DomainError as refused:
                form.add_error(None, refused.message)
            else:
                self.message_user(
                    request,
                    _("anomalies passées à « %(state)s » : %(count)d, motif : %(reason)s")
                    % {
                        "count": len(done),
                        "state": to_state.label,
                        "reason": form.cleaned_data["reason"],
                    },
                    messages.SUCCESS,
                )
                return None
        chosen = list(Anomaly.objects.filter(pk__in=ids[:BATCH_LIMIT]).order_by("detected_at"))
        too_many = len(ids) > BATCH_LIMIT
        legal = {a for a, b in ANOMALY_TRANSITIONS if b == to_state}
        rows = [
            (
                anomaly,
                anomaly.state not in legal,
                request.user.pk in anomaly.involved,
            )
            for anomaly in chosen
        ]
        verb = STEP_VERBS[to_state]
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": _("%(verb)s : %(count)s anomalies") % {"verb": verb, "count": len(chosen)},
            "verb": verb,
            "to_state": to_state,
            "form": form,
            "rows": rows,
            "refused_ahead": any(illegal or involved for _a, illegal, involved in rows),
            "too_many": too_many,
            "limit": BATCH_LIMIT,
            "action": request.POST.get("action", ""),
            "action_checkbox_name": ACTION_CHECKBOX_NAME,
        }
        return TemplateResponse(request, "admin/audit/anomaly/bulk_review.html", context)

    # One anomaly.

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: Any = None
    ) -> Any:
        anomaly = self.get_object(request, unquote(object_id))
        context: dict[str, Any] = {**(extra_context or {})}
        if anomaly is not None:
            if is_finding(anomaly.evidence):
                finding = finding_of(anomaly.evidence)
                context["finding"] = finding
                context["finding_chart"] = _chart(finding.chart)
                context["finding_extra"] = readable(finding.extra) if finding.extra else ""
            context["next_steps"] = next_steps(request.user, anomaly)
        return super().change_view(request, object_id, form_url, context)

    def get_urls(self) -> list[Any]:
        review = self.admin_site.admin_view(self.review_view)
        return [path("<int:pk>/review/", review, name="audit_anomaly_review"), *super().get_urls()]

    def review_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        anomaly = get_object_or_404(Anomaly, pk=pk)
        if not self.has_view_permission(request, anomaly):
            raise PermissionDenied

        def act(data: dict[str, Any]) -> tuple[str, int]:
            anomaly_review(actor=request.user, anomaly_id=anomaly.pk, **data)
            return _("Examen enregistré"), messages.SUCCESS

        return self.act_view(
            request,
            form=ReviewForm(
                request.POST or None, anomaly=anomaly, initial={"to_state": request.GET.get("to")}
            ),
            act=act,
            done_url=reverse("admin:audit_anomaly_change", args=[pk]),
            template="admin/audit/anomaly/review.html",
            anomaly=anomaly,
            next_steps=next_steps(request.user, anomaly),
            title=_("Examiner : %(anomaly)s") % {"anomaly": anomaly},
        )


def _person(user: Any) -> str:
    full = user.get_full_name()
    return f"{user.username} ({full})" if full and full != user.username else user.username


def _chart(data: Any) -> str:
    """The finding's chart as inline SVG; a chart the drawing cannot read is left out rather
    than breaking the page (the evidence table and figures say the same)."""
    if data is None:
        return ""
    try:
        return svg(data)
    except (TypeError, ValueError):
        return ""
