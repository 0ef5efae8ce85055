"""What the review queue reads: its counts, the anomalies raised per day, and a detector's finding
as the anomaly page shows it.

The queue page must stay quick with a month of a 20-table room in it (tens of thousands of
anomalies): every count here is one aggregate query, never a query per row.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from django.apps import apps
from django.db.models import Case, CharField, Count, Min, Q, Value, When
from django.db.models.functions import TruncDate
from django.urls import NoReverseMatch, reverse
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.functional import Promise
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext_lazy as _

from audit.models import Anomaly, AnomalyState, Severity

# The states that wait for someone: the queue's columns.
PENDING = (AnomalyState.OPEN, AnomalyState.ACKNOWLEDGED, AnomalyState.ESCALATED)

# Age buckets, by the time since detection.
DAY, WEEK = dt.timedelta(days=1), dt.timedelta(days=7)
AGES: tuple[tuple[str, Promise], ...] = (
    ("day", _("moins d'un jour")),
    ("week", _("de 1 à 7 jours")),
    ("older", _("plus de 7 jours")),
)


def age_filter(age: str, now: dt.datetime) -> Q:
    """The anomalies of one age bucket at ``now``."""
    if age == "day":
        return Q(detected_at__gt=now - DAY)
    if age == "week":
        return Q(detected_at__gt=now - WEEK, detected_at__lte=now - DAY)
    if age == "older":
        return Q(detected_at__lte=now - WEEK)
    raise ValueError(f"no age bucket {age!r}")


@dataclass
class CountRow:
    """One line of a count table: what it counts, and how many in each pending state."""

    label: str
    query: dict[str, str]  # the changelist's filter for this line
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def cells(self, changelist: str) -> list[tuple[int, str]]:
        """(count, link to those anomalies) per pending state, then the line's total."""
        cells = [
            (self.counts.get(state, 0), _url(changelist, {**self.query, "state__exact": state}))
            for state in PENDING
        ]
        pending = ",".join(PENDING)
        return [*cells, (self.total, _url(changelist, {**self.query, "state__in": pending}))]


@dataclass
class QueueCounts:
    by_severity: list[CountRow]
    by_detector: list[CountRow]
    by_age: list[CountRow]
    oldest_open: dt.datetime | None

    @property
    def pending(self) -> int:
        return sum(row.total for row in self.by_severity)


def _url(changelist: str, query: Mapping[str, str]) -> str:
    return f"{changelist}?{urlencode(query)}"


def queue_counts(now: dt.datetime) -> QueueCounts:
    """The pending anomalies counted by severity, by detector and by age, with the oldest open
    one's detection time: one aggregate query (at most a few hundred groups)."""
    age = Case(
        When(age_filter("day", now), then=Value("day")),
        When(age_filter("week", now), then=Value("week")),
        default=Value("older"),
        output_field=CharField(),
    )
    groups = (
        Anomaly.objects.filter(state__in=PENDING)
        .annotate(age=age)
        .values_list("severity", "detector", "state", "age")
        .annotate(n=Count("id"), oldest=Min("detected_at"))
        .order_by()
    )
    severities = {s.value: CountRow(str(s.label), {"severity__exact": s.value}) for s in Severity}
    detectors: dict[str, CountRow] = {}
    ages = {key: CountRow(str(label), {"age": key}) for key, label in AGES}
    oldest_open = None
    for severity, detector, state, bucket, n, oldest in groups:
        row = detectors.setdefault(detector, CountRow(detector, {"detector__exact": detector}))
        for line in (severities.get(severity), row, ages[bucket]):
            if line is not None:
                line.counts[state] = line.counts.get(state, 0) + n
        if state == AnomalyState.OPEN and (oldest_open is None or oldest < oldest_open):
            oldest_open = oldest
    return QueueCounts(
        # The gravest first; the busiest detectors first.
        by_severity=[severities[s] for s in (Severity.CRITICAL, Severity.WARNING, Severity.INFO)],
        by_detector=sorted(detectors.values(), key=lambda r: (-r.total, r.label)),
        by_age=list(ages.values()),
        oldest_open=oldest_open,
    )


def raised_per_day(today: dt.date, *, days: int = 30) -> list[tuple[dt.date, dict[str, int]]]:
    """The anomalies raised on each of the last ``days`` gaming days (the casino's days, today
    included), counted by severity: one query."""
    zone = timezone.get_current_timezone()
    first = today - dt.timedelta(days=days - 1)
    start = dt.datetime.combine(first, dt.time(), tzinfo=zone)
    counts: dict[dt.date, dict[str, int]] = defaultdict(dict)
    rows = (
        Anomaly.objects.filter(detected_at__gte=start)
        .annotate(day=TruncDate("detected_at", tzinfo=zone))
        .values_list("day", "severity")
        .annotate(n=Count("id"))
        .order_by()
    )
    for day, severity, n in rows:
        counts[day][severity] = n
    return [
        (first + dt.timedelta(days=i), counts.get(first + dt.timedelta(days=i), {}))
        for i in range(days)
    ]


# The gravest at the bottom of each bar, in the colours the eye reads as grave.
COLOURS = (
    (Severity.CRITICAL, "#c0392b"),
    (Severity.WARNING, "#e67e22"),
    (Severity.INFO, "#7f8c8d"),
)


def over_time_svg(
    series: Sequence[tuple[dt.date, Mapping[str, int]]], *, width: int = 760, height: int = 190
) -> SafeString:
    """Anomalies raised per day, stacked by severity, as inline SVG (no script, no outside
    resource). Every text in it is escaped."""
    left, right, top, bottom = 36, 12, 30, 30
    plot_w, plot_h = width - left - right, height - top - bottom
    highest = max((sum(c.values()) for _d, c in series), default=0) or 1
    step = plot_w / max(len(series), 1)
    title = escape(_("Anomalies levées par jour, par gravité (30 derniers jours)"))
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" class="chart" id="over-time" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}"><title>{title}</title>',
        f'<text x="{left}" y="14" font-size="12" font-weight="bold">{title}</text>',
    ]
    x = width - right
    for severity, colour in reversed(COLOURS):  # the legend, right-aligned
        text = escape(Severity(severity).label)
        x -= 14 + 6.5 * len(str(text))
        parts.append(
            f'<rect x="{x:.0f}" y="5" width="10" height="10" fill="{colour}"/>'
            f'<text x="{x + 13:.0f}" y="14" font-size="11">{text}</text>'
        )
    for i, (day, counts) in enumerate(series):
        x, base = left + i * step, top + plot_h
        shown_day = escape(date_format(day, "j b"))
        for severity, colour in COLOURS:
            n = counts.get(severity, 0)
            if not n:
                continue
            h = n / highest * plot_h
            base -= h
            parts.append(
                f'<rect x="{x + step * 0.15:.1f}" y="{base:.1f}" width="{step * 0.7:.1f}" '
                f'height="{h:.1f}" fill="{colour}"><title>{shown_day} : {n} '
                f"{escape(Severity(severity).label)}</title></rect>"
            )
        if i % 5 == 0 or i == len(series) - 1:
            parts.append(
                f'<text x="{x + step / 2:.1f}" y="{height - bottom + 14}" font-size="10" '
                f'text-anchor="middle">{shown_day}</text>'
            )
    axis = top + plot_h
    parts.append(
        f'<line x1="{left}" x2="{width - right}" y1="{axis}" y2="{axis}" stroke="#888"/>'
        f'<text x="{left - 4}" y="{top + 4}" font-size="10" text-anchor="end">{highest}</text>'
        f'<text x="{left - 4}" y="{axis + 4}" font-size="10" text-anchor="end">0</text></svg>'
    )
    return mark_safe("".join(parts))  # every text in it is escaped above


# A detector's finding (casino/detectors/frame.py, Finding.evidence): the keys it always has, and
# those it may have; anything else is the detector's ``extra``.
FINDING_KEYS = frozenset({"rule", "figures", "threshold", "p_value"})
FINDING_OPTIONAL = frozenset({"window", "table", "chart", "links"})
TABLE_ROWS_SHOWN = 500


@dataclass
class RecordLink:
    label: str
    url: str  # "" when the record has no page here


@dataclass
class FindingView:
    """A finding as the anomaly page shows it."""

    rule: str
    window: str
    figures: list[tuple[str, str]]
    threshold: str
    p_value: str
    columns: list[str]
    rows: list[list[str]]
    rows_left_out: int
    chart: Mapping[str, Any] | None
    links: list[tuple[str, list[RecordLink]]]  # (what they are, the records)
    extra: dict[str, Any]


def is_finding(evidence: Any) -> bool:
    return isinstance(evidence, Mapping) and set(evidence) >= FINDING_KEYS


def finding_of(evidence: Mapping[str, Any]) -> FindingView:
    """A statistical detector's evidence laid out for the page: figures as a table, the
    evidence's table, its chart's data and its links grouped by kind of record."""
    table = evidence.get("table") or {}
    rows = [[str(cell) for cell in row] for row in table.get("rows", [])]
    groups: dict[str, list[RecordLink]] = {}
    for link in evidence.get("links") or []:
        kind, pk = str(link.get("type", "")), str(link.get("id", ""))
        groups.setdefault(kind, []).append(
            RecordLink(str(link.get("label") or pk), record_url(kind, pk))
        )
    chart = evidence.get("chart")
    return FindingView(
        rule=str(evidence["rule"]),
        window=str(evidence.get("window") or ""),
        figures=[(str(label), str(value)) for label, value in evidence.get("figures") or []],
        threshold=str(evidence["threshold"]),
        p_value=str(evidence["p_value"]),
        columns=[str(c) for c in table.get("columns", [])],
        rows=rows[:TABLE_ROWS_SHOWN],
        rows_left_out=max(len(rows) - TABLE_ROWS_SHOWN, 0),
        chart=chart if isinstance(chart, Mapping) and chart.get("values") else None,
        links=[(kind_name(kind, len(records)), records) for kind, records in groups.items()],
        extra={k: v for k, v in evidence.items() if k not in FINDING_KEYS | FINDING_OPTIONAL},
    )


def _model(kind: str) -> Any:
    app_label, _dot, model_name = kind.partition(".")
    try:
        return apps.get_model(app_label, model_name)
    except (LookupError, ValueError):
        return None


def kind_name(kind: str, count: int) -> str:
    """A record kind (``floor.coup``) as people call it, plural when there are several."""
    model = _model(kind)
    if model is None:
        return kind
    meta = model._meta
    return str(meta.verbose_name_plural if count > 1 else meta.verbose_name)


def record_url(kind: str, pk: str) -> str:
    """The admin page of a record named as the audit chain names it, or "" if it has none."""
    model = _model(kind)
    if model is None or not pk.isdigit():
        return ""
    try:
        return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_change", args=[pk])
    except NoReverseMatch:
        return ""
