"""Processes die under a running system: the whole Celery worker (SIGKILL), web workers in the
middle of requests, clients that hang up, and each supervised part in turn. The supervisor brings
them back; what the terminal was told is recorded once; nothing is left half done."""

from __future__ import annotations

import os
import signal
import threading
import time
import uuid

from tests.conftest import wait_until
from tests.reliability.conftest import assert_recorded_once, figure, report_of, signed_once
from tests.reliability.system import System, children_of
from tests.reliability.terminal import Terminal, disconnecting_post


def test_the_whole_worker_killed_mid_render(system: System, terminal: Terminal, play_table):
    """SIGKILL to the worker and its pool, mid-render: the API keeps answering, the supervisor
    starts a worker again within 20 s, and the report is signed once."""
    other = play_table()
    other.open()
    table = play_table()
    table.open()
    table.coup()
    table.close()
    report, outbox = report_of(system, table.shift)
    assert wait_until(
        lambda: f"rendering report {report} in" in system.log_text(), timeout=60, interval=0.05
    ), system.tail()
    readies = system.log_text().count(" ready.")
    worker = system.pid("worker")
    os.killpg(worker, signal.SIGKILL)
    killed = time.monotonic()

    def worker_back() -> bool:
        return system.pid("worker") != worker and system.log_text().count(" ready.") > readies

    # The API serves meanwhile, acts included (they need no worker).
    while not worker_back() and time.monotonic() - killed < 30:
        assert terminal.send("GET", "/health/live").status == 200
        assert terminal.send("GET", "/api/v1/me", who=table.chef).status == 200
        if not other.coups:
            other.coup()
        time.sleep(0.2)
    back_in = time.monotonic() - killed
    assert worker_back()
    assert back_in < 20
    assert other.coups, "an act was recorded while no worker ran"

    assert signed_once(system, report, timeout=90), system.tail()
    signed_in = time.monotonic() - killed
    # Sent once at the close, once more by the worker that started again.
    assert (
        system.postgres.value("SELECT send_count FROM outbox_outboxmessage WHERE id = %s", outbox)
        == 2
    )
    assert f"worker (pid {worker}) exited with signal SIGKILL" in system.log_text()
    figure(
        f"worker killed with SIGKILL mid-render: API answered throughout, a worker ready again "
        f"{back_in:.1f} s after the kill, the interrupted report signed once {signed_in:.1f} s "
        f"after the kill"
    )


def test_web_workers_killed_mid_request(system: System, terminal: Terminal, play_table):
    """Two terminals play while every gunicorn worker is killed, again and again: the requests
    cut off are sent again under their keys, and each act is recorded once."""
    tables = [play_table(), play_table()]
    for table in tables:
        table.open()
    stop = threading.Event()
    kills = []

    def served_since(moment: float) -> bool:
        with terminal.lock:
            return any(a.sent > moment and 200 <= a.status < 300 for a in terminal.answers)

    def killer() -> None:
        last = time.monotonic()
        for _ in range(8):
            # Killed only once the new workers serve: a worker killed while it still boots
            # (over a second on a slow machine) has no request to cut off.
            wait_until(lambda last=last: served_since(last), timeout=30, interval=0.05)
            last = time.monotonic()
            for pid in children_of(system.pid("web")):
                try:
                    os.kill(pid, signal.SIGKILL)
                    kills.append(pid)
                except ProcessLookupError:
                    pass
        stop.set()

    def play(table) -> None:  # type: ignore[no-untyped-def]
        while not stop.is_set():
            table.coup()

    threads = [threading.Thread(target=killer)] + [
        threading.Thread(target=play, args=(t,)) for t in tables
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    cut = [a for a in terminal.answers if a.status == 0]
    assert len(kills) >= 8
    assert cut, "no request was cut off by a kill"
    for table in tables:
        table.close()
        assert_recorded_once(system, table)
    figure(
        f"web workers killed {len(kills)} times under two terminals: {len(cut)} requests cut "
        f"off and sent again; every act recorded once"
    )


def test_a_client_that_hangs_up_finds_its_act_done_once(
    system: System, terminal: Terminal, play_table
):
    table = play_table()
    table.open()
    coup = terminal.act(table.tailleur, "coups", {"shift": table.shift})["id"]
    path = "/api/v1/stakes"
    token = system.floor["tokens"][table.croupier]

    def stakes(ref: str) -> int:
        return int(
            system.postgres.value(
                "SELECT count(*) FROM floor_stake WHERE coup_id = %s AND ref = %s", coup, ref
            )
        )

    # Hung up once the request was sent: the act is done; sent again, the first answer.
    key = str(uuid.uuid4())
    stake = {"coup": coup, "ref": "gone", "holder": "1", "chance": "noir", "amount": 1500}
    disconnecting_post(system.port, path, stake, token=token, key=key, cut="after")
    assert wait_until(lambda: stakes("gone") == 1, timeout=10)
    again = terminal.send("POST", path, stake, who=table.croupier, key=key)
    assert (again.status, again.headers.get("idempotent-replay")) == (201, "true")

    # Hung up halfway through the body: nothing happened; sent again, it is done now.
    key = str(uuid.uuid4())
    stake = {"coup": coup, "ref": "half", "holder": "2", "chance": "rouge", "amount": 1500}
    disconnecting_post(system.port, path, stake, token=token, key=key, cut="during")
    time.sleep(1)
    assert stakes("half") == 0
    again = terminal.send("POST", path, stake, who=table.croupier, key=key)
    assert (again.status, again.headers.get("idempotent-replay")) == (201, None)
    assert (stakes("gone"), stakes("half")) == (1, 1)
    assert (
        system.postgres.value(
            "SELECT count(*) FROM floor_movement WHERE kind = 'stake_placed' AND shift_id = %s",
            table.shift,
        )
        == 2
    )


def test_every_supervised_part_comes_back(system: System, terminal: Terminal):
    """Relay, beat and the web server (gunicorn's master) killed: each started again."""
    for part in ("relay", "beat", "web"):
        before = system.pid(part)
        os.kill(before, signal.SIGKILL)
        assert wait_until(lambda part=part, before=before: system.pid(part) != before, timeout=20)
        # The supervisor writes the pid file, then its log line: wait for the line too.
        assert wait_until(
            lambda part=part: f"{part} restarted (pid {system.pid(part)})" in system.log_text(),
            timeout=5,
        ), system.tail()
    assert wait_until(lambda: terminal.send("GET", "/health/ready").status == 200, timeout=30)
