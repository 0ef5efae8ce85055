"""The fault suite's running system: built once for the package (about 40 s), broken by each
test, and always left running again (servers started, processes back) for the next.

Settings of the system under test, beyond the defaults:
``CASINO_REPORT_RENDER_PAUSE=3``: every render pauses 3 s between drawing and signing, so that a
fault can land in its middle (README, "Faults, health and supervision").
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import wait_until
from tests.reliability.system import Postgres, Redis, System
from tests.reliability.terminal import PlayTable, Terminal

RENDER_PAUSE = 3
PAIRS = 50
PLAY_TABLES = 10

FIGURES: list[str] = []


def figure(text: str) -> None:
    """A measured figure of the issue, printed at the end of the run (and kept in CI's log)."""
    FIGURES.append(text)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if FIGURES:
        terminalreporter.section("fault suite: figures")
        for line in FIGURES:
            terminalreporter.write_line(line)


@pytest.fixture(scope="package")
def faults_dir() -> Iterator[Path]:
    # Not pytest's tmp_path: pytest keeps its root private to root, and a PostgreSQL started by
    # root runs as another user that must reach its directory.
    directory = Path(tempfile.mkdtemp(prefix="casino-faults-"))
    directory.chmod(0o755)
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="package")
def postgres(faults_dir: Path) -> Iterator[Postgres]:
    server = Postgres(faults_dir)
    yield server
    server.close()


@pytest.fixture(scope="package")
def redis(faults_dir: Path) -> Iterator[Redis]:
    server = Redis(faults_dir)
    yield server
    server.stop()


@pytest.fixture(scope="package")
def system(faults_dir: Path, postgres: Postgres, redis: Redis) -> Iterator[System]:
    running = System(faults_dir, postgres, redis, CASINO_REPORT_RENDER_PAUSE=str(RENDER_PAUSE))
    try:
        running.wait_ready()
        running.floor = running.seed(play_tables=PLAY_TABLES, pairs=PAIRS)
        yield running
    finally:
        running.stop()


@pytest.fixture(autouse=True)
def _left_running(request: pytest.FixtureRequest) -> Iterator[None]:
    """Whatever a test broke, the next one starts with both servers up; and a failing test shows
    the end of the system's log."""
    yield
    if "system" not in request.fixturenames:
        return
    running: System = request.getfixturevalue("system")
    if not running.postgres.server.running():
        running.postgres.start()
    if not running.redis.server.running():
        running.redis.start()
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        print(f"--- the system's log ---\n{running.tail(150)}")


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


@pytest.fixture
def terminal(system: System) -> Terminal:
    return Terminal(system.port, system.floor["tokens"])


_tables = itertools.count()


@pytest.fixture
def play_table(system: System, terminal: Terminal) -> Callable[[], PlayTable]:
    """``play_table()``: the next play table of the seed, not used by any test before."""

    def next_table() -> PlayTable:
        index = next(_tables)
        return PlayTable(terminal, system.floor["play"][index], seed=index)

    return next_table


# --- what the database holds ----------------------------------------------------------------------


def report_of(system: System, shift: int) -> tuple[int, int]:
    """The séance's report and its outbox message, once requested."""
    assert wait_until(
        lambda: system.postgres.value("SELECT id FROM reports_report WHERE shift_id = %s", shift),
        timeout=30,
    )
    ((report, outbox),) = system.postgres.query(
        "SELECT id, outbox_id FROM reports_report WHERE shift_id = %s", shift
    )
    return report, outbox


def signed_once(system: System, report: int, timeout: float = 90) -> bool:
    """Rendered (the row says so) and signed exactly once (one ``report.rendered`` event)."""

    def rendered() -> bool:
        return bool(
            system.postgres.value(
                "SELECT rendered_at IS NOT NULL FROM reports_report WHERE id = %s", report
            )
        )

    if not wait_until(rendered, timeout=timeout, interval=0.25):
        return False
    events = system.postgres.value(
        "SELECT count(*) FROM audit_auditevent WHERE action = 'report.rendered' "
        "AND subject_type = 'reports.report' AND subject_id = %s",
        str(report),
    )
    return bool(events == 1)


def assert_recorded_once(system: System, table: PlayTable) -> None:
    """Everything the terminal was told was done is in the database, once; nothing else is."""
    pg = system.postgres
    coups = pg.query(
        "SELECT id, phase FROM floor_coup WHERE shift_id = %s ORDER BY id", table.shift
    )
    assert [c for c, _ in coups] == table.coups
    assert {phase for _, phase in coups} <= {"settled"}
    stakes = pg.query(
        "SELECT s.coup_id, s.ref FROM floor_stake s JOIN floor_coup c ON c.id = s.coup_id "
        "WHERE c.shift_id = %s",
        table.shift,
    )
    assert sorted(stakes) == sorted(table.stakes)
    placed = pg.value(
        "SELECT count(*) FROM floor_movement WHERE shift_id = %s AND kind = 'stake_placed'",
        table.shift,
    )
    assert placed == len(table.stakes)
    results = pg.value(
        "SELECT count(*) FROM floor_coupresult r JOIN floor_coup c ON c.id = r.coup_id "
        "WHERE c.shift_id = %s",
        table.shift,
    )
    assert results == len(table.coups)
    laid = pg.value(
        "SELECT count(*) FROM shoes_cardlaid WHERE pack_id = %s AND NOT burned", table.spec["pack"]
    )
    assert laid == table.cards
    assert not pg.value(
        "SELECT count(*) FROM audit_anomaly WHERE detector = 'cash_variance' AND subject_id = %s",
        str(table.shift),
    )
