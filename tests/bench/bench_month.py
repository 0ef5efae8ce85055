"""A month of a 20-table room as the regulator reads it (issue 17): coups by date, by table and by
result, the export of a day, the daily register of a day, and ``verify_audit`` over the month.

The month is ``tests.bench.month``'s (COPY, minutes; a later run copies the template the server
keeps, in seconds), its audit chain one event per act as the services record them. Each read goes
through the code path the regulator uses, timed whole: the API (``/api/v1/coups``, a token of an
inspecteur, the first page and filtered pages: the API pages by cursor and counts nothing) and the
admin's changelist of coups (logged in as an inspecteur with his second factor: the first page,
the filtered pages with their counts); a coup's page and movements; the day's séances (API and
admin) and movements (API); the day's export as the regulator downloads it from the API; the
day's register requested as the worker's beat requests it, then rendered and signed as the
worker does; ``verify_chain`` as ``manage.py verify_audit`` runs it. Each figure is a median,
beside its ratio to the issue's aim of one second.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.bench.harness import report

AIM = 1.0  # seconds: "the month's queries: each under 1 s"
RUNS = 5
HEAVY_RUNS = 3  # the export, the register, the verifier


def _timed(fn: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    value = fn()
    return time.perf_counter() - started, value


def _median(fn: Any, runs: int, *, warm: bool = True) -> tuple[float, Any, int]:
    """The median seconds of ``runs`` calls of ``fn`` (after one to warm the caches, unless not
    ``warm``), its last value and the SQL queries of the last call."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    if warm:
        fn()
    times = []
    for _ in range(runs):
        with CaptureQueriesContext(connection) as queries:
            seconds, value = _timed(fn)
        times.append(seconds)
    return statistics.median(times), value, len(queries.captured_queries)


def _figure(
    seconds: float, queries: int | None = None, extra: str = "", *, aim: bool = True
) -> str:
    shown = f"{seconds:,.2f} s" if seconds >= 1 else f"{seconds * 1000:,.0f} ms"
    parts = [f"{seconds / AIM:.2f}x the 1 s aim"] if aim else []
    if queries is not None:
        parts.append(f"{queries} queries")
    if extra:
        parts.append(extra)
    return f"{shown} ({'; '.join(parts)})"


def _get(client: Any, url: str) -> Any:
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code, response.content[:500])
    return response


def _load() -> tuple[str, str]:
    return ("machine load at the end (1-minute average, 2 cores)", f"{os.getloadavg()[0]:.1f}")


def _counted(page: str) -> str:
    """The count the changelist's paginator shows, on its own line after the page numbers
    (``1 234 coups``)."""
    from django.utils.html import strip_tags

    paginator = page.split('class="paginator">', 1)[-1].split("</p>", 1)[0]
    lines = [line for line in strip_tags(paginator).splitlines() if "coup" in line]
    return lines[-1].split("coup")[0].strip() if lines else "?"


def _regulator() -> Any:
    """The house's inspecteur (the regulator's read-only role), bootstrapped with the month, set
    up as a person is (password and TOTP device) with a setup code issued as the bootstrap issues
    it (the bootstrap's own was not kept)."""
    from django.contrib.auth.models import User
    from django.db import transaction

    from casino.people.services import _issue_code
    from tests.actors import set_up

    inspecteur = User.objects.filter(groups__name="inspecteur").order_by("pk").first()
    assert inspecteur is not None
    if not inspecteur.has_usable_password():
        with transaction.atomic():
            code, _row = _issue_code(issuer=None, user=inspecteur)
        set_up(inspecteur, code)
    return User.objects.get(pk=inspecteur.pk)


def _signing() -> None:
    """A signing key of the bench's own, as the worker has one."""
    from django.conf import settings

    from casino.reports.signing import init_signing

    keys = init_signing(Path(tempfile.mkdtemp(prefix="bench-keys-")), organisation="bench")
    settings.REPORT_SIGNING_PKCS12 = str(keys["pkcs12"])
    settings.REPORT_SIGNING_PASSPHRASE_FILE = str(keys["passphrase"])
    settings.REPORT_TRUST_ROOTS = [str(keys["ca"])]
    settings.MEDIA_ROOT = tempfile.mkdtemp(prefix="bench-media-")


def _register(day: Any) -> tuple[float, Any]:
    """One version of the day's register: requested (as ``registers_due`` requests it), then
    rendered and signed in the worker's transaction. Returns the render's seconds."""
    from django.db import transaction

    from casino.reports.services import register_request, report_render

    with transaction.atomic():
        requested = register_request(day=day, actor=None, reason="bench")
    with transaction.atomic():
        return _timed(lambda: report_render(version=requested.version, day=day.isoformat()))


def run(days: int | None = None) -> None:
    from tests.bench import month as bench_month

    measure(bench_month.month_database(days=days or bench_month.DAYS))


def measure(written: Any) -> None:
    """The figures on the month ``written`` (``tests.bench.month.Month``), on this database."""
    from django.db import connection
    from django.test import Client
    from rest_framework.test import APIClient

    from audit.chain import verify_chain
    from audit.models import AuditEvent
    from casino.floor.models import Coup
    from casino.people.tokens import token_issue
    from casino.reports.export import EVENTS_AT_A_TIME
    from tests.actors import login_admin
    from tests.bench import month as bench_month

    # Statistics, as autovacuum keeps them on a live database: written by COPY and copied from
    # a template, the month has none, and the planner then reads a coup's 3 settlements by
    # scanning the 700,000 of the month.
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    report(
        f"Month: a {bench_month.TABLES}-table room, written by COPY",
        [*bench_month.summary(written), ("audit events", f"{AuditEvent.objects.count():,}")],
    )
    regulator = _regulator()
    admin = login_admin(Client(), regulator)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token_issue(user=regulator)[1]}")
    day = written.day_list[-1]
    number = written.tables[len(written.tables) // 2]
    table_pk = Coup.objects.filter(shift__table__number=number).values("shift__table").first()
    assert table_pk is not None
    table = table_pk["shift__table"]

    rows = []
    api_pages = {
        "first page": "/api/v1/coups",
        f"date={day}": f"/api/v1/coups?date={day}",
        f"table={number}": f"/api/v1/coups?table={number}",
        "result=apres": "/api/v1/coups?result=apres",
        "date, table and result=rouge": f"/api/v1/coups?date={day}&table={number}&result=rouge",
    }
    for label, url in api_pages.items():
        seconds, response, queries = _median(lambda u=url: _get(api, u), RUNS)
        found = len(response.json()["results"])
        rows.append((label, _figure(seconds, queries, f"{found} coups on the page")))
        print(f"  ... api {label}: {seconds:.3f} s", file=sys.stderr, flush=True)
    report(f"Coups through the API, as an inspecteur (median of {RUNS})", [*rows, _load()])

    rows = []
    dated = f"opened_at__day={day.day}&opened_at__month={day.month}&opened_at__year={day.year}"
    admin_pages = {
        "first page": "/admin/floor/coup/",
        f"the day {day} (date hierarchy)": f"/admin/floor/coup/?{dated}",
        f"table {number}": f"/admin/floor/coup/?shift__table__id__exact={table}",
        "result après": "/admin/floor/coup/?outcome__result=apres",
        "the day, table and result rouge": (
            f"/admin/floor/coup/?{dated}&shift__table__id__exact={table}&outcome__result=rouge"
        ),
    }
    for label, url in admin_pages.items():
        seconds, response, queries = _median(lambda u=url: _get(admin, u), RUNS)
        count = _counted(response.content.decode())
        rows.append(
            (
                label,
                _figure(
                    seconds,
                    queries,
                    f"{count} coups counted, {len(response.content) // 1024} KiB",
                ),
            )
        )
        print(f"  ... admin {label}: {seconds:.3f} s", file=sys.stderr, flush=True)
    report(
        f"Coups in the admin's changelist, as an inspecteur (median of {RUNS})", [*rows, _load()]
    )

    rows = []
    coup = (
        Coup.objects.filter(shift__table=table, opened_at__date=day, outcome__isnull=False)
        .order_by("pk")
        .first()
    )
    assert coup is not None
    # What the regulator opens on one coup: its page (stakes, cards, settlements, movements and
    # the disputes about it) and its movements from the API, each found by reference's prefix.
    coup_reads = {
        "its page in the admin": (admin, f"/admin/floor/coup/{coup.pk}/change/"),
        "its movements through the API": (api, f"/api/v1/movements?coup={coup.pk}"),
    }
    for label, (client, url) in coup_reads.items():
        seconds, response, queries = _median(lambda c=client, u=url: _get(c, u), RUNS)
        rows.append((label, _figure(seconds, queries, f"{len(response.content):,} bytes")))
        print(f"  ... coup {label}: {seconds:.3f} s", file=sys.stderr, flush=True)
    report(
        f"A coup of table {number} on {day} (coup {coup.number} of its taille), as an inspecteur "
        f"(median of {RUNS})",
        [*rows, _load()],
    )

    rows = []
    # The séances, as the regulator lists them: each with its staff and rundown (API) or its
    # figures (admin), read for the page; and the day's movements, the last day's first page
    # found from the day's first id.
    day_pages = {
        f"séances, API, date={day}": (api, f"/api/v1/shifts?date={day}"),
        "séances, API, first page": (api, "/api/v1/shifts"),
        f"séances, admin, the day {day}": (admin, f"/admin/floor/shift/?{dated}"),
        "séances, admin, first page": (admin, "/admin/floor/shift/"),
        f"movements, API, date={day}": (api, f"/api/v1/movements?date={day}"),
    }
    for label, (client, url) in day_pages.items():
        seconds, response, queries = _median(lambda c=client, u=url: _get(c, u), RUNS)
        rows.append((label, _figure(seconds, queries, f"{len(response.content):,} bytes")))
        print(f"  ... {label}: {seconds:.3f} s", file=sys.stderr, flush=True)
    report(
        f"The day's séances and movements, as an inspecteur (median of {RUNS})", [*rows, _load()]
    )

    rows = []
    _signing()
    renders = [_register(day) for _ in range(HEAVY_RUNS)]
    render = statistics.median(seconds for seconds, _ in renders)
    signed = renders[-1][1]
    coups = Coup.objects.filter(
        shift__in=[pk for (d, _t, _s), pk in written.shifts.items() if d == day]
    ).count()
    rows.append(
        (
            f"daily register of {day}, render and sign",
            _figure(
                render,
                extra=f"{signed.pages} pages, {len(written.shifts_of(day))} séances, "
                f"{coups:,} coups",
            ),
        )
    )
    print(f"  ... register: {render:.3f} s", file=sys.stderr, flush=True)
    url = f"/api/v1/reports/{signed.pk}/export"
    seconds, response, queries = _median(lambda: _get(api, url), HEAVY_RUNS)
    events = signed.chain_to - signed.chain_from + 1
    rows.append(
        (
            f"export of {day} (zip, as downloaded from the API)",
            _figure(
                seconds,
                queries,
                f"and the audit events' {-(-events // EVENTS_AT_A_TIME)} on a connection of "
                f"their own; {len(response.content) / 2**20:,.1f} MiB, {events:,} audit events",
            ),
        )
    )
    print(f"  ... export: {seconds:.3f} s", file=sys.stderr, flush=True)
    seconds, verified, _queries = _median(verify_chain, HEAVY_RUNS, warm=False)
    assert verified.ok, verified.describe()
    rows.append(
        (
            "verify_audit over the month",
            # Hashing every event's bytes bounds it: its aim is its ratio to bare hashing of the
            # same bytes (bench audit), not the regulator's reads' 1 s.
            _figure(
                seconds,
                extra=f"{verified.events:,} events, {verified.events / seconds:,.0f}/s",
                aim=False,
            ),
        )
    )
    report(
        f"A day's register and export, the month's chain (median of {HEAVY_RUNS})",
        [*rows, _load()],
    )
