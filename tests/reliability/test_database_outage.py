"""PostgreSQL stops under a running system: while it is down every request is told "unavailable,
try again" at once; when it is back the system serves again by itself; what was recorded is
recorded once; a render it interrupted is signed once by the worker's own retry."""

from __future__ import annotations

import threading
import time

from tests.conftest import wait_until
from tests.reliability.conftest import (
    assert_recorded_once,
    figure,
    report_of,
    signed_once,
)
from tests.reliability.system import System
from tests.reliability.terminal import Terminal

OUTAGE = 10.0


class Outage(threading.Thread):
    """Stops the database, keeps it down ``seconds``, starts it again; records when."""

    def __init__(self, system: System, seconds: float) -> None:
        super().__init__(daemon=True)
        self.system, self.seconds = system, seconds
        self.down_at = self.starting_at = self.back_at = 0.0
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.system.postgres.stop()
            self.down_at = time.monotonic()
            time.sleep(self.seconds)
            self.starting_at = time.monotonic()
            self.system.postgres.start()
            self.back_at = time.monotonic()
        except BaseException as exc:  # the test fails on it, after the database is up again
            self.error = exc


def probe(terminal: Terminal, outage: Outage) -> None:
    """Beside the terminal, during the outage: the health endpoints, and the admin as a signed-in
    person sees it (a session cookie: the session is read from the database)."""
    while not outage.back_at and outage.is_alive():
        if outage.down_at:
            terminal.send("GET", "/health/live")
            terminal.send("GET", "/health/ready")
            terminal.send("GET", "/admin/", headers={"Cookie": "sessionid=a-signed-in-person"})
        time.sleep(0.3)


def test_database_stopped_ten_seconds_mid_seance(system: System, terminal: Terminal, play_table):
    """The terminal plays on through the outage, sending each act again under its key: every
    answer during the outage is a 503 in the API's shape, within a second; the first act after
    it succeeds within 5 s; the séance closes with every act recorded once."""
    table = play_table()
    table.open()
    table.coup()
    outage = Outage(system, OUTAGE)
    probing = threading.Thread(target=probe, args=(terminal, outage), daemon=True)
    outage.start()
    probing.start()
    while not outage.back_at and outage.is_alive():
        table.coup()
    outage.join()
    assert outage.error is None, outage.error
    table.coup()
    closed = table.close()
    assert closed["closed_at"]

    # Answered while the database was down: sent after it stopped, back before it was started.
    during = [
        a
        for a in terminal.answers
        if a.sent >= outage.down_at and a.sent + a.seconds <= outage.starting_at
    ]
    api = [a for a in during if a.path.startswith("/api/")]
    assert len(api) > 10, "the terminal kept trying during the outage"
    assert {a.status for a in api} == {503}
    assert all(a.headers["content-type"] == "application/json" for a in api)
    assert all(a.headers.get("retry-after") == "2" for a in api)
    assert all(
        (a.body["code"], a.body["where"], set(a.body))
        == ("unavailable", None, {"code", "message", "where"})
        for a in api
    )
    slowest = max(a.seconds for a in during)
    assert slowest < 1.0

    live = [a.status for a in during if a.path == "/health/live"]
    ready = [a for a in during if a.path == "/health/ready"]
    admin = [a for a in during if a.path == "/admin/"]
    assert set(live) == {200}
    assert {(a.status, a.body.get("where")) for a in ready} == {(503, "database")}, ready
    assert {a.status for a in admin} == {503}
    assert all("momentanément indisponible" in a.body for a in admin)  # French: no Accept-Language

    # From the moment PostgreSQL was started again (its own start-up included).
    after = [a for a in terminal.answers if a.sent >= outage.starting_at and a.status < 300]
    first = min(a.sent + a.seconds for a in after) - outage.starting_at
    assert first < 5.0

    assert_recorded_once(system, table)
    verify = system.manage("verify_audit")
    assert verify.returncode == 0, verify.stdout + verify.stderr
    report, _ = report_of(system, table.shift)
    assert signed_once(system, report)
    figure(
        f"database stopped {OUTAGE:.0f} s mid-séance: {len(api)} API requests during the outage, "
        f"all 503 JSON with Retry-After, slowest answer {slowest * 1000:.0f} ms; first act "
        f"succeeded {first:.2f} s after PostgreSQL was started again; {len(table.coups)} coups, "
        f"{len(table.stakes)} stakes, {table.cards} cards recorded once; chain verified"
    )


def test_a_render_interrupted_by_a_database_outage_is_signed_once_by_the_workers_retry(
    system: System, terminal: Terminal, play_table
):
    table = play_table()
    table.open()
    table.coup()
    table.close()
    report, outbox = report_of(system, table.shift)
    assert wait_until(
        lambda: f"rendering report {report} in" in system.log_text(), timeout=60, interval=0.05
    ), system.tail()
    system.postgres.stop()  # the render is pausing, between drawing and signing
    time.sleep(4)
    back = time.monotonic()  # from when it is started again (its own start-up included)
    system.postgres.start()
    assert signed_once(system, report, timeout=90), system.tail()
    signed_after = time.monotonic() - back
    assert signed_after < 60

    ((attempts, send_count, last_error, done),) = system.postgres.query(
        "SELECT attempts, send_count, last_error, done_at IS NOT NULL FROM outbox_outboxmessage "
        "WHERE id = %s",
        outbox,
    )
    # Sent once: neither the relay nor a restarted worker sent it again; the worker's own retries
    # brought it to the end, and the first that reached the database wrote the runs it lost.
    assert (send_count, done, last_error) == (1, True, "")
    assert attempts >= 2
    log = system.log_text()
    assert f"reports.render (outbox message {outbox}): database unavailable" in log
    assert f"reports.render (outbox message {outbox}): database back" in log
    figure(
        f"render interrupted by a 4 s database outage: signed once, {signed_after:.1f} s after "
        f"the database came back, by the worker's own retry ({attempts} runs, sent once)"
    )
