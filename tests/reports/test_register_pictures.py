"""The daily register's pictures (issue 16): the result per table and the anomalies over time,
drawn from the records they stand for; the register stays signed and verifies; the admin shows
the result per table too."""

from __future__ import annotations

import datetime as dt
import io
from collections import Counter
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import transaction
from django.db.models import Q, Sum
from django.utils import timezone
from reportlab.graphics.charts.barcharts import VerticalBarChart
from reportlab.graphics.shapes import Drawing
from reportlab.platypus import KeepTogether

from audit.models import Anomaly, Severity
from casino.floor.models import Account, Movement, Shift
from casino.reports.daily_register import register_document
from casino.reports.services import registers_due, report_render
from casino.reports.signing import verify_pdf
from tests.actors import admin_client
from tests.reports.test_shift_report import pdf_text, verify

pytestmark = pytest.mark.django_db(transaction=False)


def _charts(report) -> list[VerticalBarChart]:
    """The bar charts of the register's story, in the order they are printed."""
    flowables = []
    for item in register_document(report).story:
        flowables += item._content if isinstance(item, KeepTogether) else [item]
    return [
        shape
        for drawing in flowables
        if isinstance(drawing, Drawing)
        for shape in drawing.contents
        if isinstance(shape, VerticalBarChart)
    ]


def _planted(day: dt.date) -> None:
    """Anomalies at known moments: through the day, earlier in the month, the month before, and
    the next day (which the register of ``day`` must leave out)."""
    tz = timezone.get_current_timezone()
    moments = [dt.datetime.combine(day, dt.time(h, 30), tzinfo=tz) for h in (0, 0, 3, 9, 9, 9, 17)]
    midnight = dt.datetime.combine(day, dt.time.min, tzinfo=tz)
    moments += [max(midnight, timezone.now() - dt.timedelta(minutes=1))]  # one before the register
    moments += [dt.datetime.combine(day.replace(day=1), dt.time(12), tzinfo=tz)]
    moments += [
        dt.datetime.combine(day.replace(day=1) - dt.timedelta(days=1), dt.time(12), tzinfo=tz)
    ]
    moments += [dt.datetime.combine(day + dt.timedelta(days=1), dt.time(1), tzinfo=tz)]
    severities = list(Severity)
    for i, at in enumerate(moments):
        Anomaly.objects.create(
            detector="planted",
            severity=severities[i % 3],
            summary=f"planted {i}",
            detected_at=at,
        )


def test_the_register_draws_results_per_table_and_anomalies_and_stays_signed(cast, posted):
    call_command("simulate", tables=2, first=7, hours=0.1, seed=11, stdout=io.StringIO())
    day = timezone.localdate()
    _planted(day)
    registers_due(today=day + dt.timedelta(days=1))
    with transaction.atomic():
        report = report_render(version=1, day=day.isoformat())

    data = Path(report.pdf.path).read_bytes()
    assert verify_pdf(data).ok
    assert verify(report.pdf.path) == 0
    text = pdf_text(report)
    for words in ("Résultat par table", "Anomalies détectées ce jour", "Anomalies du mois"):
        assert words in text

    results, by_hour, by_day = _charts(report)

    # The result per table, from the ledger: the bank's account, play only (no float, fill or
    # credit), over the day's séances.
    cash = [Movement.Kind.FLOAT, Movement.Kind.FILL, Movement.Kind.CREDIT]
    want = {}
    for shift in Shift.objects.filter(opened_at__date=day).select_related("table"):
        bank = Account.objects.get(table=shift.table, kind=Account.Kind.BANK)
        sums = (
            Movement.objects.filter(shift=shift)
            .exclude(kind__in=cash)
            .aggregate(
                came=Sum("amount", filter=Q(debit=bank)), went=Sum("amount", filter=Q(credit=bank))
            )
        )
        number = shift.table.number
        want[number] = want.get(number, 0) + (sums["came"] or 0) - (sums["went"] or 0)
    assert len(want) == 2
    assert any(want.values())
    drawn = dict(
        zip(
            map(int, results.categoryAxis.categoryNames),
            (round(v * 100) for v in results.data[0]),
            strict=True,
        )
    )
    assert drawn == want

    # The anomalies, counted here from the records by local hour and day and severity, up to
    # the moment the register was asked for.
    seen = [
        (timezone.localtime(a.detected_at), str(a.severity))
        for a in Anomaly.objects.filter(detected_at__lte=report.requested_at)
    ]
    start = dt.datetime.combine(day, dt.time.min, tzinfo=timezone.get_current_timezone())
    end = start + dt.timedelta(days=1)
    hours = [
        start + dt.timedelta(hours=k) for k in range(int((end - start).total_seconds()) // 3600)
    ]
    hourly = Counter(
        (int((at - start).total_seconds()) // 3600, s) for at, s in seen if start <= at < end
    )
    daily = Counter(
        (at.day, s)
        for at, s in seen
        if at.date() <= day and (at.year, at.month) == (day.year, day.month)
    )
    severities = [str(s) for s in Severity]
    assert by_hour.categoryAxis.categoryNames == [
        f"{timezone.localtime(h).hour:02d}h" for h in hours
    ]
    assert [list(series) for series in by_hour.data] == [
        [hourly[(k, s)] for k in range(len(hours))] for s in severities
    ]
    assert by_day.categoryAxis.categoryNames == [str(d) for d in range(1, day.day + 1)]
    assert [list(series) for series in by_day.data] == [
        [daily[(d, s)] for d in range(1, day.day + 1)] for s in severities
    ]
    assert sum(map(sum, by_day.data)) >= sum(map(sum, by_hour.data)) > 0

    # The admin's page of the register shows the same results as a picture.
    page = admin_client(cast.directeur).get(f"/admin/reports/report/{report.pk}/change/")
    assert page.status_code == 200
    html = page.content.decode()
    assert html.count('<svg xmlns="http://www.w3.org/2000/svg" role="img" class="chart"') == 1
    for number in want:
        assert f"<title>{number}: " in html
        assert f">{number}</text>" in html
