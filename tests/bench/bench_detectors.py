"""The statistical detectors on a month of a 20-table room (issue 16): their cost per séance close
and per day end, and the review queue's server time at that scale.

The month is written by ``tests.bench.month`` (COPY, minutes; a later run copies the template
the server keeps, in seconds); the detectors are those registered when the bench runs
(``casino.detectors.families``), run as the worker runs them (in one transaction, each finding
raised into the queue) and each timed on its own. Séance closes are timed on séances of the last
day (three runs each), day ends on the last days (one run each, and a rerun of the last), and
the month's last day end (which tests each table over the month too); the figures are medians,
the first runs (which raise the findings) apart from the reruns (which find them raised). The
queue is timed through Django's test client (the whole request: middleware, admin, template),
logged in as an internal auditor with his second factor, as a person logs in.
"""

from __future__ import annotations

import datetime as dt
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from tests.bench.harness import report

SEANCES_TIMED = 5
SEANCE_RUNS = 3
DAYS_TIMED = 3
DAY_RUNS = 1  # one run a day, a rerun of the last day
PAGE_RUNS = 5
QUEUE_AIM = 0.200  # seconds, the aim for the queue page


def _timed(fn: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    value = fn()
    return time.perf_counter() - started, value


def _ms(seconds: float) -> str:
    return f"{seconds:,.1f} s" if seconds >= 10 else f"{seconds * 1000:,.1f} ms"


@dataclass
class Measured:
    """Seconds per run: of the whole run (every detector, as ``frame`` runs them) and of each
    detector, first runs (which raise the findings) apart from reruns (which find them raised)."""

    first: list[float] = field(default_factory=list)
    again: list[float] = field(default_factory=list)
    each: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    raised: int = 0


def _name(fn: Any) -> str:
    return f"{fn.__module__.rsplit('.', 1)[-1]}.{fn.__name__}"


def _measure(subjects: list[Any], detectors: list[Any], runs: int) -> Measured:
    """Each subject run ``runs`` times, each run in its own transaction as the worker's task: each
    detector's findings raised as ``frame.run_*`` raises them, each detector timed."""
    from django.db import transaction

    from audit.models import Anomaly
    from casino.detectors.frame import raise_finding

    measured = Measured()
    before = Anomaly.objects.count()
    for subject in subjects:
        for n in range(runs):
            total = 0.0
            with transaction.atomic():
                for detector in detectors:
                    seconds, _raised = _timed(
                        lambda d=detector, s=subject: [raise_finding(f) for f in d(s)]
                    )
                    total += seconds
                    if n == 0:
                        measured.each[_name(detector)].append(seconds)
            (measured.first if n == 0 else measured.again).append(total)
            print(f"  ... {subject}: run {n + 1}, {total:.2f} s", file=sys.stderr, flush=True)
    measured.raised = Anomaly.objects.count() - before
    return measured


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
    from casino.detectors.frame import DAY_END, SEANCE_CLOSE
    from casino.floor.models import Coup, Shift
    from tests.actors import login_admin
    from tests.bench import month as bench_month

    written = bench_month.month_database(days=days or bench_month.DAYS)
    report(
        f"Detectors: a month of a {bench_month.TABLES}-table room, written by COPY",
        bench_month.summary(written),
    )

    last_day = written.day_list[-1]
    shifts = [
        Shift.objects.select_related("table").get(pk=pk)
        for pk in written.shifts_of(last_day)[:SEANCES_TIMED]
    ]
    coups = Coup.objects.filter(shift__in=shifts).count() / len(shifts)
    close = _measure(shifts, SEANCE_CLOSE, SEANCE_RUNS)
    days = written.day_list[-DAYS_TIMED:]
    day = _measure(days, DAY_END, DAY_RUNS)
    day.again = _measure(days[-1:], DAY_END, 1).first
    # The month's last day also tests each table over the month (hold): that run once.
    month_end = (last_day.replace(day=28) + dt.timedelta(days=4)).replace(day=1) - dt.timedelta(1)
    month = _measure([month_end], DAY_END, 1)
    seances_a_day = len(written.shifts_of(last_day))
    c, d = statistics.median(close.first), statistics.median(day.first)

    def rerun(m: Measured, first: float) -> str:
        again = statistics.median(m.again)
        return f"{_ms(again)} ({again / first if first else 0:.2f}x the first run)"

    rows = [
        ("séance-close runs registered", ", ".join(map(_name, SEANCE_CLOSE)) or "-"),
        ("day-end runs registered", ", ".join(map(_name, DAY_END)) or "-"),
        (
            f"per séance close (median of {len(shifts)}, first runs)",
            f"{_ms(c)} ({c / coups * 1e6:,.0f} µs per coup, {coups:.0f} coups a séance)",
        ),
        *(
            (
                f"  of which {name}",
                f"{_ms(statistics.median(t))} ({statistics.median(t) / c if c else 0:.0%})",
            )
            for name, t in close.each.items()
        ),
        ("per séance close, reruns", rerun(close, c)),
        (
            f"a day's séance closes ({seances_a_day} séances)",
            f"{c * seances_a_day:,.1f} s of the worker's time a day",
        ),
        (
            f"per day end (median of {len(days)} days)",
            f"{_ms(d)} ({d / c if c else float('nan'):,.1f}x a séance close; "
            f"{_ms(d / seances_a_day)} per séance of the day)",
        ),
        *(
            (
                f"  of which {name}",
                f"{_ms(statistics.median(t))} ({statistics.median(t) / d if d else 0:.0%})",
            )
            for name, t in day.each.items()
        ),
        ("per day end, rerun of the last day", rerun(day, d)),
        (
            f"the month's last day end ({month_end}, {len(written.day_list)} days to read)",
            f"{_ms(month.first[0])} ({month.first[0] / d if d else 0:,.1f}x a day end)",
        ),
        *(
            (f"  of which {name}", _ms(statistics.median(t)))
            for name, t in month.each.items()
            if statistics.median(t) >= 0.05 * month.first[0]
        ),
        ("anomalies the timed runs raised", f"{close.raised} (séances), {day.raised} (days)"),
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
