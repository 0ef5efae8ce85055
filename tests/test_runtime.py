"""The supervisor of ``make run``: a part that dies is started again with backoff and the others
keep running; an embedded server that dies comes back on the same address. Real processes, real
signals, a real Redis and PostgreSQL of the test's own."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from casino.runtime import EmbeddedPostgres, EmbeddedRedis, Services, Supervisor
from tests.conftest import wait_until

SLEEPER = (sys.executable, "-c", "import time; time.sleep(600)")


@pytest.fixture
def supervisor(tmp_path: Path) -> Iterator[Supervisor]:
    supervisor = Supervisor(Services(), run_dir=tmp_path / "run")
    supervisor.TICK = 0.1
    yield supervisor
    supervisor.stop()


class Said:
    """What the supervisor has logged so far (its lines follow what they report by a moment)."""

    def __init__(self, capsys: pytest.CaptureFixture[str]) -> None:
        self.capsys = capsys
        self.text = ""

    def __call__(self, line: str) -> bool:
        self.text += self.capsys.readouterr().out
        return line in self.text

    def of(self, line: str):  # type: ignore[no-untyped-def]
        return lambda: self(line)


def pid(supervisor: Supervisor, name: str) -> int:
    return int((supervisor.run_dir / f"{name}.pid").read_text())


def test_a_dead_part_is_restarted_with_backoff_and_the_others_keep_running(supervisor, capsys):
    supervisor.spawn("worker", *SLEEPER)
    supervisor.spawn("web", *SLEEPER)
    supervisor.watch()
    web = pid(supervisor, "web")

    first = pid(supervisor, "worker")
    os.kill(first, signal.SIGKILL)
    killed = time.monotonic()
    assert wait_until(lambda: pid(supervisor, "worker") != first, timeout=10)
    assert 0.9 < time.monotonic() - killed < 3  # after its first backoff, 1 s

    second = pid(supervisor, "worker")
    os.kill(second, signal.SIGKILL)  # dies again at once: the backoff doubles
    killed = time.monotonic()
    assert wait_until(lambda: pid(supervisor, "worker") != second, timeout=10)
    assert 1.9 < time.monotonic() - killed < 4

    assert pid(supervisor, "web") == web
    os.kill(web, 0)  # still the same process, never touched
    said = Said(capsys)
    assert wait_until(lambda: said(f"worker restarted (pid {pid(supervisor, 'worker')})"))
    out = said.text
    assert f"worker (pid {first}) exited with signal SIGKILL after 0 s; restarting in 1 s" in out
    assert f"worker (pid {second}) exited with signal SIGKILL after 0 s; restarting in 2 s" in out
    assert "web (pid" not in out


def test_stopping_stops_every_part_and_restarts_nothing(supervisor):
    supervisor.spawn("relay", *SLEEPER)
    supervisor.watch()
    relay = pid(supervisor, "relay")
    supervisor.stop()
    with pytest.raises(ProcessLookupError):
        os.kill(relay, 0)
    assert not (supervisor.run_dir / "relay.pid").exists()


def test_an_embedded_redis_that_dies_comes_back_on_the_same_port(tmp_path, capsys):
    import redis

    broker = EmbeddedRedis(
        data=tmp_path / "redis", url_file=tmp_path / "redis.url", pid_file=tmp_path / "redis.pid"
    )
    url, _ = broker.start()
    supervisor = Supervisor(Services(started=[broker]), run_dir=tmp_path / "run")
    supervisor.TICK = 0.1
    supervisor.watch()
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=1)  # a running process's client
        assert client.ping()
        os.kill(int(broker.pid_file.read_text()), signal.SIGKILL)
        assert wait_until(lambda: _pings(client), timeout=15)
        assert broker.url_file.read_text() == url
        assert wait_until(Said(capsys).of("embedded Redis running again: " + url))
    finally:
        supervisor.stop()
        broker.stop()


def _pings(client) -> bool:  # type: ignore[no-untyped-def]
    import redis

    try:
        return bool(client.ping())
    except redis.RedisError:
        return False


@pytest.fixture
def reachable_dir() -> Iterator[Path]:
    """A directory a PostgreSQL started by root can reach: it runs as another user, and pytest's
    temporary root is private to root (tests/reliability/conftest.py does the same)."""
    directory = Path(tempfile.mkdtemp(prefix="casino-runtime-"))
    directory.chmod(0o755)
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


def test_an_embedded_postgresql_that_dies_comes_back_on_the_same_socket(reachable_dir):
    import psycopg

    tmp_path = reachable_dir
    database = EmbeddedPostgres(data=tmp_path / "pg", url_file=tmp_path / "database.url")
    url, _ = database.start()
    supervisor = Supervisor(Services(started=[database]), run_dir=tmp_path / "run")
    supervisor.TICK = 0.2
    supervisor.watch()
    try:
        with psycopg.connect(url, connect_timeout=2) as before:
            before.execute("SELECT 1")
        postmaster = int((database.data / "postmaster.pid").read_text().split()[0])
        os.kill(postmaster, signal.SIGKILL)

        def answers() -> bool:
            try:
                with psycopg.connect(url, connect_timeout=2) as after:
                    return after.execute("SELECT 1").fetchone() == (1,)
            except psycopg.OperationalError:
                return False

        assert wait_until(answers, timeout=60, interval=0.5)
        assert database.url_file.read_text() == url
    finally:
        supervisor.stop()
        database.stop()
