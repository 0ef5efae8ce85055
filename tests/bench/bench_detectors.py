"""The statistical detectors on a month of a 20-table room (issue 16): their cost per séance close
and per day end, and the review queue's server time at that scale.

The month is written by ``tests.bench.month`` (COPY, minutes; a later run copies the template
the server keeps, in seconds); the detectors are those registered
when the bench runs (``casino.detectors.families``), each run as the worker runs it (in one
transaction, its findings raised into the queue). Séance closes are timed on the last day's
séances, day ends on the last days; each figure is the median of a few runs, the first run of
each (which raises the findings) reported apart from the reruns (which find them raised). The
queue is timed through Django's test client (the whole request: middleware, admin, template),
logged in as an internal auditor with his second factor, as a person logs in.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from tests.bench.harness import report

SEANCES_TIMED = 6
DAYS_TIMED = 3
RUNS = 3
PAGE_RUNS = 5
QUEUE_AIM = 0.200  # seconds, the aim for the queue page


def _timed(fn: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    value = fn()
    return time.perf_counter() - started, value


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:,.1f} ms"


def _runs(subjects: list[Any], run: Any) -> tuple[list[float], list[float], int]:
    """Each subject run ``RUNS`` times in its own transaction: the first runs' seconds, the
    reruns' seconds, and the anomalies the first runs raised."""
    from django.db import transaction

    from audit.models import Anomaly

    first, again = [], []
    before = Anomaly.objects.count()
    for subject in subjects:
        for n in range(RUNS):
            with transaction.atomic():
                seconds, _raised = _timed(lambda s=subject: run(s))
            (first if n == 0 else again).append(seconds)
    return first, again, Anomaly.objects.count() - before


def _auditor(prefix: str) -> Any:
    """An internal auditor, hired and set up as a person is (password and TOTP device)."""
    from django.contrib.auth.models import User

    from casino.people.roles import Role
    from tests.actors import hire

    directeur = User.objects.filter(groups__name="directeur").order_by("pk").first()
    return hire(directeur, f"{prefix}-auditeur", Role.AUDITEUR)


def _page(client: Any, url: str) -> tuple[float, int, int]:
    """The median server time of ``url`` over ``PAGE_RUNS`` requests (after one to warm the
    caches), its size and its SQL queries."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    times = []
    for _ in range(PAGE_RUNS):
        with CaptureQueriesContext(connection) as queries:
            seconds, response = _timed(lambda: client.get(url))
        assert response.status_code == 200, (url, response.status_code)
        times.append(seconds)
    return statistics.median(times), len(response.content), len(queries.captured_queries)


def run(days: int | None = None) -> None:
    from django.test import Client

    from audit.models import Anomaly
    from casino.detectors import families  # noqa: F401 (registers every family's runs)
    from casino.detectors.frame import DAY_END, SEANCE_CLOSE, run_day_end, run_seance_close
    from casino.floor.models import Coup, Shift
    from tests.actors import login_admin
    from tests.bench import month as bench_month

    written = bench_month.month_database(days=days or bench_month.DAYS)
    report(
        f"Detectors: a month of a {bench_month.TABLES}-table room, written by COPY",
        bench_month.summary(written),
    )

    def names(runs: list[Any]) -> str:
        return ", ".join(f"{fn.__module__.rsplit('.', 1)[-1]}.{fn.__name__}" for fn in runs)

    last_day = written.day_list[-1]
    shifts = [
        Shift.objects.select_related("table").get(pk=pk)
        for pk in written.shifts_of(last_day)[:SEANCES_TIMED]
    ]
    coups = Coup.objects.filter(shift__in=shifts).count() / len(shifts)
    close_first, close_again, close_raised = _runs(shifts, run_seance_close)
    days = written.day_list[-DAYS_TIMED:]
    day_first, day_again, day_raised = _runs(days, run_day_end)
    close = statistics.median(close_first)
    day = statistics.median(day_first)
    seances_a_day = len(written.shifts_of(last_day))
    rows = [
        ("séance-close runs registered", f"{len(SEANCE_CLOSE)}: {names(SEANCE_CLOSE) or '-'}"),
        ("day-end runs registered", f"{len(DAY_END)}: {names(DAY_END) or '-'}"),
        (
            f"per séance close (median of {len(shifts)}, first run)",
            f"{_ms(close)} ({close / coups * 1e6:,.0f} µs per coup, {coups:.0f} coups a séance)",
        ),
        (
            "per séance close, reruns (findings already raised)",
            f"{_ms(statistics.median(close_again))} "
            f"({statistics.median(close_again) / close if close else 0:.2f}x the first run)",
        ),
        (
            f"a day's séance closes ({seances_a_day} séances)",
            f"{close * seances_a_day:.2f} s of the worker's time a day",
        ),
        (
            f"per day end (median of {len(days)} days, first run)",
            f"{_ms(day)} ({day / close if close else float('nan'):.1f}x a séance close; "
            f"{_ms(day / seances_a_day)} per séance of the day)",
        ),
        (
            "per day end, reruns",
            f"{_ms(statistics.median(day_again))} "
            f"({statistics.median(day_again) / day if day else 0:.2f}x the first run)",
        ),
        ("anomalies the timed runs raised", f"{close_raised} (séances), {day_raised} (days)"),
    ]
    report("Detectors: cost per run, as the worker runs them", rows)

    auditor = _auditor("month")
    client = login_admin(Client(), auditor)
    total = Anomaly.objects.count()
    anomaly = Anomaly.objects.order_by("-detected_at").first()
    assert anomaly is not None
    pages = {
        "the queue (anomaly changelist)": "/admin/audit/anomaly/",
        "the queue, open ones": "/admin/audit/anomaly/?state__exact=open",
        f"one anomaly's page ({anomaly.detector})": f"/admin/audit/anomaly/{anomaly.pk}/change/",
    }
    import os

    rows = [
        ("anomalies in the queue", f"{total:,}"),
        ("machine load (1-minute average, 2 cores)", f"{os.getloadavg()[0]:.1f}"),
    ]
    for label, url in pages.items():
        seconds, size, queries = _page(client, url)
        rows.append(
            (
                label,
                f"{_ms(seconds)} ({seconds / QUEUE_AIM:.2f}x the {_ms(QUEUE_AIM)} aim; "
                f"{queries} queries, {size / 1024:,.0f} KiB)",
            )
        )
    report(f"Review queue: server time as an auditor (test client, median of {PAGE_RUNS})", rows)
