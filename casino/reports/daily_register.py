"""The daily register (registre de contrôle): per table and séance, the result of the gaming day,
certified exact by the director and a second comité member."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.conf import settings
from django.db.models import Count, QuerySet
from django.db.models.functions import TruncDate, TruncHour
from django.utils import timezone
from reportlab.graphics.charts.barcharts import VerticalBarChart
from reportlab.graphics.charts.legends import Legend
from reportlab.graphics.shapes import Drawing, String
from reportlab.lib import colors
from reportlab.platypus import KeepTogether

from audit.models import Anomaly, Severity
from casino.disputes.models import corrections_posted
from casino.floor.models import Shift
from casino.floor.selectors import figures_of
from casino.floor.services import rundowns
from casino.reports.models import RegisterSignOff, Report
from casino.reports.pdf import SMALL, WIDTH, Document, grid, heading, para, text
from casino.reports.shift_report import key_values, local, money, person


def _bounds(day: dt.date) -> tuple[dt.datetime, dt.datetime]:
    """The day from midnight to midnight, in the casino's time zone."""
    start = dt.datetime.combine(day, dt.time.min, tzinfo=timezone.get_current_timezone())
    return start, start + dt.timedelta(days=1)


def shifts_of_day(day: dt.date) -> QuerySet[Shift]:
    """The séances of a gaming day: those opened on that date, in the casino's time zone."""
    start, _ = _bounds(day)
    return (
        Shift.objects.filter(opened_at__gte=start, opened_at__lt=start + dt.timedelta(days=1))
        .select_related("table", "opened_by")
        .order_by("table__number", "opened_at")
    )


def results_per_table(day: dt.date) -> list[tuple[int, int]]:
    """The day's result per table (the bank's win from the ledger, minor units), by table number:
    what the register's picture draws, for the admin's."""
    per_table: dict[int, int] = {}
    shifts = list(shifts_of_day(day))
    counted = rundowns(shifts)
    for shift in shifts:
        per_table[shift.table.number] = (
            per_table.get(shift.table.number, 0) + counted[shift.pk].result
        )
    return sorted(per_table.items())


def register_document(report: Report) -> Document:
    assert report.day is not None
    doc = Document(
        "Registre de contrôle",
        "Daily register",
        f"journée de jeu / gaming day {report.day:%Y-%m-%d}",
        f"version {report.version} - chaîne d'audit / audit chain #{report.chain_to} "
        f"{report.head_hash[:16]}...",
    )
    doc.add(
        key_values(
            [
                ("Casino", settings.CASINO_NAME),
                ("Licence / licence", settings.CASINO_LICENCE),
                ("Journée / gaming day", f"{report.day:%Y-%m-%d}"),
                ("Rapport / report", f"version {report.version} ({report.reason})"),
            ]
        )
    )
    doc.add(heading("Résultats par table et séance", "Result per table and séance"))
    rows: list[list[Any]] = [
        ["table", "séance", "chef de partie", "coups", "drop", "résultat / win", "écart", ""]
    ]
    total_win = total_drop = 0
    per_table: dict[int, int] = {}
    shifts = list(shifts_of_day(report.day))
    each = figures_of(shifts)
    for shift in shifts:
        figures = each[shift.pk]
        total_win += figures.win
        total_drop += figures.drop
        per_table[shift.table.number] = per_table.get(shift.table.number, 0) + figures.win
        rows.append(
            [
                str(shift.table.number),
                f"{local(shift.opened_at, '%H:%M')}-{local(shift.closed_at, '%H:%M')}",
                person(shift.opened_by),
                str(figures.coups),
                money(figures.drop),
                money(figures.win),
                money(figures.variance),
                "certifié exact" if shift.closed_at else "en cours / open",
            ]
        )
    rows.append(["", "total", "", "", money(total_drop), money(total_win), "", ""])
    doc.add(grid(rows, [30, 60, 130, 35, 65, 70, 50, WIDTH - 440]))
    if per_table:
        doc.add(
            KeepTogether(
                [
                    heading("Résultat par table", "Result per table"),
                    results_drawing(sorted(per_table.items())),
                ]
            )
        )
    _corrections(doc, report.day)
    _anomalies(doc, report.day, report.requested_at)
    doc.add(heading("Certifié exact", "Certified exact"))
    sign_offs = RegisterSignOff.objects.filter(
        day=report.day, at__lte=report.requested_at
    ).select_related("person")
    if sign_offs:
        for s in sign_offs:
            doc.add(
                para(
                    text(
                        f"{s.get_capacity_display()}: {person(s.person)}, le / on {local(s.at)}, "
                        f"sur la version / on version {s.report.version}"
                    )
                )
            )
    else:
        doc.add(
            para(
                text(
                    "À viser par le directeur et un second membre du comité / to be signed off by "
                    "the director and a second committee member"
                )
            )
        )
    return doc


def _corrections(doc: Document, day: dt.date) -> None:
    """Corrections decided on disputes, on the day they were posted (outside any séance, so in no
    rundown): the dispute, its séance, who decided, who approved, the movements."""
    doc.add(heading("Corrections sur contestation", "Dispute corrections"))
    rows: list[list[Any]] = [
        ["contestation", "table, séance", "décidée par", "approuvée par", "mouvements / movements"]
    ]
    for decision, movements in corrections_posted(*_bounds(day)):
        dispute = decision.dispute
        shift = dispute.seance()
        approval = getattr(decision, "approval", None)
        rows.append(
            [
                para(text(f"{dispute.pk} ({decision.get_instance_display()})"), SMALL),
                para(
                    text(f"{shift.table.number}, {local(shift.opened_at)}" if shift else "-"),
                    SMALL,
                ),
                para(text(person(decision.decided_by)), SMALL),
                para(
                    text(person(approval.by) if approval else "non requise / not required"), SMALL
                ),
                para(
                    text(
                        "; ".join(
                            f"{m.credit.code} -> {m.debit.code}: {money(m.amount)}"
                            for m in movements
                        )
                    ),
                    SMALL,
                ),
            ]
        )
    if len(rows) == 1:
        rows.append(["", "aucune / none", "", "", ""])
    doc.add(grid(rows, [70, 85, 95, 95, WIDTH - 345]))


# --- pictures -------------------------------------------------------------------------------------

BAR = colors.HexColor("#2c3e50")
SEVERITY_COLOURS = {
    Severity.INFO: colors.HexColor("#95a5a6"),
    Severity.WARNING: colors.HexColor("#e67e22"),
    Severity.CRITICAL: colors.HexColor("#c0392b"),
}
SEVERITY_WORDS = {
    Severity.INFO: "information",
    Severity.WARNING: "avertissement / warning",
    Severity.CRITICAL: "critique / critical",
}


def _bars(
    labels: list[str], series: list[list[float]], height: float, *, stacked: bool = False
) -> tuple[Drawing, VerticalBarChart]:
    drawing = Drawing(WIDTH, height)
    chart = VerticalBarChart()
    chart.x, chart.y, chart.width, chart.height = 45, 18, WIDTH - 60, height - 30
    chart.data = series
    chart.categoryAxis.categoryNames = labels
    chart.categoryAxis.labels.fontSize = 6.5
    chart.valueAxis.labels.fontSize = 6.5
    chart.valueAxis.forceZero = True
    chart.barSpacing = 0.5
    if stacked:
        chart.categoryAxis.style = "stacked"
    drawing.add(chart)
    return drawing, chart


def results_drawing(per_table: list[tuple[int, int]]) -> Drawing:
    """The day's result per table (the bank's win, in the currency's units: minor units / 100),
    one bar per table in the order given; wins above the axis, losses below."""
    labels = [str(number) for number, _win in per_table]
    values = [win / 100 for _number, win in per_table]
    drawing, chart = _bars(labels, [values], 130)
    # Room above and below the longest bars for their labels.
    top, bottom = max(0.0, *values), min(0.0, *values)
    span = (top - bottom) or 1.0
    chart.valueAxis.valueMax = top + span * 0.12
    chart.valueAxis.valueMin = bottom - span * 0.12
    chart.bars[0].fillColor = BAR
    chart.categoryAxis.labelAxisMode = "low"  # the table numbers under the plot, losses or not
    # Whole units on the bars (the cents are in the table above).
    chart.barLabelFormat = lambda value: f"{value:,.0f}".replace(",", " ")
    chart.barLabels.fontSize = 6
    chart.barLabels.nudge = 5
    drawing.add(String(2, 4, "table n°", fontSize=6.5, fillColor=colors.grey))
    return drawing


def anomalies_by_hour(day: dt.date, until: dt.datetime) -> tuple[list[str], dict[str, list[int]]]:
    """The day's anomalies (detected by ``until``) per hour of the day and severity: the hours
    ("00h".."23h") and, per severity, the counts."""
    start, end = _bounds(day)
    counts = _counted(
        Anomaly.objects.filter(detected_at__gte=start, detected_at__lt=end, detected_at__lte=until),
        TruncHour("detected_at", tzinfo=timezone.get_current_timezone()),
    )
    # The hours as instants (a day of a clock change has 23 or 25 of them), labelled in local time.
    hours = [
        start + dt.timedelta(hours=h) for h in range(int((end - start).total_seconds()) // 3600)
    ]
    keys = [int(h.timestamp()) for h in hours]
    return [f"{local_hour(h):02d}h" for h in hours], {
        str(severity): [counts.get((severity, h), 0) for h in keys] for severity in Severity
    }


def anomalies_by_day(day: dt.date, until: dt.datetime) -> tuple[list[str], dict[str, list[int]]]:
    """The month's anomalies to this day (detected by ``until``) per day and severity."""
    first = day.replace(day=1)
    start, _ = _bounds(first)
    _, end = _bounds(day)
    counts = _counted(
        Anomaly.objects.filter(detected_at__gte=start, detected_at__lt=end, detected_at__lte=until),
        TruncDate("detected_at", tzinfo=timezone.get_current_timezone()),
    )
    days = [first + dt.timedelta(days=d) for d in range((day - first).days + 1)]
    return [f"{d.day}" for d in days], {
        str(severity): [counts.get((severity, d.day), 0) for d in days] for severity in Severity
    }


def local_hour(moment: dt.datetime) -> int:
    return timezone.localtime(moment).hour


def _counted(anomalies: QuerySet[Anomaly], bucket: Any) -> dict[tuple[str, int], int]:
    counted = anomalies.annotate(bucket=bucket).values("bucket", "severity").annotate(n=Count("id"))
    out: dict[tuple[str, int], int] = {}
    for row in counted:
        at = row["bucket"]
        key = int(at.timestamp()) if isinstance(at, dt.datetime) else at.day
        out[(row["severity"], key)] = out.get((row["severity"], key), 0) + row["n"]
    return out


def anomalies_drawing(labels: list[str], by_severity: dict[str, list[int]]) -> Drawing:
    """Anomalies per period, stacked by severity (information, warning, critical from the
    bottom), with the legend."""
    order = list(Severity)
    drawing, chart = _bars(labels, [by_severity[str(s)] for s in order], 110, stacked=True)
    chart.width = WIDTH - 160
    chart.valueAxis.valueStep = max(
        1, -(-max(map(sum, zip(*by_severity.values(), strict=True)), default=1) // 5)
    )
    for i, severity in enumerate(order):
        chart.bars[i].fillColor = SEVERITY_COLOURS[severity]
    legend = Legend()
    legend.x, legend.y = WIDTH - 105, 90
    legend.fontSize = 6.5
    legend.alignment = "right"
    legend.colorNamePairs = [(SEVERITY_COLOURS[s], SEVERITY_WORDS[s]) for s in reversed(order)]
    drawing.add(legend)
    return drawing


def _anomalies(doc: Document, day: dt.date, until: dt.datetime) -> None:
    """The anomalies raised over the day, by hour, and over the month to date, by day."""
    hours, per_hour = anomalies_by_hour(day, until)
    days, per_day = anomalies_by_day(day, until)
    total = sum(map(sum, per_hour.values()))
    month = sum(map(sum, per_day.values()))
    doc.add(
        KeepTogether(
            [
                heading(
                    "Anomalies détectées ce jour, par heure", "Anomalies detected that day, by hour"
                ),
                para(
                    text(
                        f"{total} anomalie(s) / anomalies; "
                        + ", ".join(
                            f"{SEVERITY_WORDS[s]} {sum(per_hour[str(s)])}" for s in Severity
                        )
                    ),
                    SMALL,
                ),
                anomalies_drawing(hours, per_hour),
            ]
        )
    )
    doc.add(
        KeepTogether(
            [
                heading("Anomalies du mois, par jour", "Anomalies of the month to date, by day"),
                para(
                    text(
                        f"du / from {day.replace(day=1):%Y-%m-%d} au / to {day:%Y-%m-%d}: "
                        f"{month} anomalie(s) / anomalies"
                    ),
                    SMALL,
                ),
                anomalies_drawing(days, per_day),
            ]
        )
    )
