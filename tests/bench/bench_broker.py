"""Closing a séance with the broker up and with it down, as a terminal sees it: POST
/api/v1/shifts/{id}/close over HTTP against gunicorn, which asks for the séance's report through
the outbox. The aim: within 100 ms of each other (a dead broker never holds a request). For
comparison, what one after-commit send used to cost with the broker down (kombu's own retries)."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from tests.bench.harness import gunicorn, report

SEANCES = 15  # closed with the broker up, and as many with it down
WORKERS = 2


def _setup(count: int) -> list[dict[str, Any]]:
    """Séances open at their tables, each with its countersigned closing count, and the chef de
    partie's token (one chef per table: nobody is on duty at two)."""
    from casino import clock
    from casino.floor.models import PostedReglement
    from casino.floor.services import (
        count_countersign,
        count_record,
        reglement_load_presets,
        table_create,
    )
    from casino.people.roles import Role
    from casino.people.services import staff_create
    from casino.people.tokens import token_issue
    from tests.bench.harness import bench_house, open_seance

    directeur, commissaire = bench_house("broker")
    reglement_load_presets(actor=commissaire, effective_from=clock.now().date())
    posted = PostedReglement.objects.get(name="trente-et-quarante-modern")

    def person(name: str, role: Role) -> Any:
        return staff_create(
            actor=directeur, username=f"broker-{name}", full_name=name, roles=[role]
        )

    seances = []
    for number in range(301, 301 + count):
        chef = person(f"chef{number}", Role.CHEF_DE_PARTIE)
        croupier = person(f"croupier{number}", Role.CROUPIER)
        table = table_create(
            actor=directeur,
            number=number,
            game="trente-et-quarante",
            reglement_id=posted.pk,
            min_stake=500,
            max_stake=600_000,
        )
        shift = open_seance(
            chef=chef,
            croupier=croupier,
            directeur=directeur,
            table=table,
            chips={"10000": 50},
            tailleur=person(f"tailleur{number}", Role.TAILLEUR),
            croupiers=[croupier],
        )
        closing = count_record(
            actor=croupier, table_id=table.pk, moment="closing", chips={"10000": 50}
        )
        count_countersign(actor=directeur, count_id=closing.pk)
        seances.append({"shift": shift.pk, "count": closing.pk, "token": token_issue(user=chef)[1]})
    return seances


def _close(port: int, seance: dict[str, Any]) -> float:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {
        "Authorization": f"Token {seance['token']}",
        "Idempotency-Key": str(uuid.uuid4()),
        "Content-Type": "application/json",
    }
    started = time.perf_counter()
    connection.request(
        "POST",
        f"/api/v1/shifts/{seance['shift']}/close",
        json.dumps({"count": seance["count"]}),
        headers,
    )
    response = connection.getresponse()
    body = response.read()
    elapsed = time.perf_counter() - started
    connection.close()
    if response.status != 201:
        raise RuntimeError(f"close: HTTP {response.status} {body[:200]!r}")
    return elapsed


def _former_send_with_the_broker_down(url: str) -> float:
    """One send as the after-commit path made it before (kombu's defaults: it retries a refused
    connection), in a process of its own pointed at the dead broker."""
    code = (
        "import time, django; django.setup()\n"
        "from casino.celery import app\n"
        "started = time.perf_counter()\n"
        "try:\n"
        "    app.send_task('audit.chain_verify', args=[0], retry=False)\n"
        "except Exception:\n"
        "    pass\n"
        "print(time.perf_counter() - started)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "REDIS_URL": url, "DJANGO_SETTINGS_MODULE": "casino.settings"},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return float(done.stdout.strip().splitlines()[-1])


def run() -> None:
    from django.db import connections

    from casino.runtime import EmbeddedRedis

    seances = _setup(2 * SEANCES)
    connections.close_all()
    directory = Path(tempfile.mkdtemp(prefix="bench-broker-"))
    broker = EmbeddedRedis(
        data=directory / "redis", url_file=directory / "url", pid_file=directory / "pid"
    )
    url, _ = broker.start()
    try:
        with gunicorn(workers=WORKERS, REDIS_URL=url) as port:
            _close(port, seances.pop())  # each worker's first request imports what it needs
            _close(port, seances.pop())
            up = [_close(port, seance) for seance in seances[: SEANCES - 1]]
            broker.stop()
            down = [_close(port, seance) for seance in seances[SEANCES - 1 :]]
            former = _former_send_with_the_broker_down(url)
    finally:
        broker.stop()
        shutil.rmtree(directory, ignore_errors=True)

    def line(values: list[float]) -> str:
        return (
            f"p50 {statistics.median(values) * 1000:.1f} ms, max {max(values) * 1000:.1f} ms "
            f"({len(values)} séances)"
        )

    difference = (statistics.median(down) - statistics.median(up)) * 1000
    report(
        f"Closing a séance over HTTP (gunicorn, {WORKERS} workers), the broker up and down",
        [
            ("broker up", line(up)),
            ("broker down", line(down)),
            ("difference of the medians", f"{difference:+.1f} ms (aim: within 100 ms)"),
            ("before: one after-commit send, broker down", f"{former * 1000:,.0f} ms"),
        ],
    )
