"""Redis stops under a running system: acts do not wait for it (their requests wait in the
outbox), readiness says so, and when it is back the relay sends what waited: the report of a
séance closed meanwhile is signed once."""

from __future__ import annotations

import time

from tests.conftest import wait_until
from tests.reliability.conftest import assert_recorded_once, figure, report_of, signed_once
from tests.reliability.system import System
from tests.reliability.terminal import Terminal


def test_a_seance_closed_while_the_broker_is_down_gets_its_report_once(
    system: System, terminal: Terminal, play_table
):
    table = play_table()
    table.open()
    table.coup()
    system.redis.stop()
    try:
        ready = terminal.send("GET", "/health/ready")
        assert (ready.status, ready.body["where"]) == (503, "broker")
        assert ready.headers["retry-after"] == "2"
        table.coup()  # acts need no broker
        started = len(terminal.answers)
        closed = table.close()
        acts = [a for a in terminal.answers[started:] if a.method == "POST"]
        report, outbox = report_of(system, table.shift)
        (sent_at,) = system.postgres.query(
            "SELECT sent_at FROM outbox_outboxmessage WHERE id = %s", outbox
        )[0]
        assert sent_at is None  # waiting in the outbox
        time.sleep(2)  # the relay tries meanwhile, and says why it cannot
    finally:
        system.redis.start()
    back = time.monotonic()
    assert closed["closed_at"]
    # A dead broker never holds a request: the close and its counts answered at once.
    slowest = max(a.seconds for a in acts)
    assert {a.status for a in acts} == {201}
    assert slowest < 1.0

    assert signed_once(system, report, timeout=90), system.tail()
    signed_after = time.monotonic() - back
    assert (
        system.postgres.value("SELECT send_count FROM outbox_outboxmessage WHERE id = %s", outbox)
        == 1
    )
    assert_recorded_once(system, table)
    log = system.log_text()
    assert "relay: broker unavailable, will retry" in log
    assert "relay: broker back" in log
    assert wait_until(lambda: terminal.send("GET", "/health/ready").status == 200, timeout=10)
    figure(
        f"broker down across a close: counts and close answered in at most "
        f"{slowest * 1000:.0f} ms; report signed once, {signed_after:.1f} s after Redis was back "
        f"(sent by the relay, once)"
    )
