"""Fixtures shared by every test: the cast, API clients, and the real Celery worker."""

from __future__ import annotations

import datetime as dt
import os
import secrets
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import pytest
from django.conf import settings
from django.utils import translation
from rest_framework.test import APIClient

from casino import clock
from casino.floor.models import PostedReglement
from casino.floor.services import (
    count_countersign,
    count_record,
    reglement_load_presets,
    shift_close,
    shift_open,
    table_create,
)
from casino.people.tokens import token_issue
from shoes.models import PackKind
from shoes.services import pack_cut, pack_open, pack_receive, pack_shuffle, pack_store, seal_verify
from tests.actors import Cast, make_cast
from tests.shared_cast import FAST_HASHER, KEEP_OPEN, SHARES, SharedCast, mark_the_runs

ROOT = Path(__file__).resolve().parent.parent
# CI sets this: a missing service is then a failure, not a skip.
REQUIRE_SERVICES = os.environ.get("CASINO_REQUIRE_SERVICES") == "1"


@pytest.fixture
def cast(db: None, settings) -> Cast:  # type: ignore[no-untyped-def]
    # A deliberately slow hash is the point in production and a waste of minutes here.
    settings.PASSWORD_HASHERS = list(FAST_HASHER)
    if SHARED_CAST.is_open:  # this test is one of a run sharing it (tests/shared_cast.py)
        return SHARED_CAST.cast()
    return make_cast()


SHARED_CAST = SharedCast()


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    mark_the_runs(items)


@pytest.fixture(autouse=True)
def _shared_cast_switch(request: pytest.FixtureRequest, django_db_blocker) -> Iterator[None]:  # type: ignore[no-untyped-def]
    """The shared cast's transaction open for a test that shares it, closed for any other; closed
    after the last of a run, before wider fixtures (the session's database) are torn down."""
    if request.node.stash.get(SHARES, False):
        request.getfixturevalue("django_db_setup")
        SHARED_CAST.open(django_db_blocker)
    else:
        SHARED_CAST.close(django_db_blocker)
    yield
    if not request.node.stash.get(KEEP_OPEN, False):
        SHARED_CAST.close(django_db_blocker)


@pytest.fixture(autouse=True)
def _django_db_marker(_shared_cast_switch: None, _django_db_marker: None) -> None:
    """pytest-django's own (it opens a marked test's database), once the switch above has run:
    a marked test's transaction then begins inside the shared one, or with none open."""


@pytest.fixture(autouse=True)
def _english_outside_requests() -> Iterator[None]:
    """What a test calls directly (a service, the engine) speaks English, the language the tests
    assert in. A request still speaks what it asks for, as in production: LocaleMiddleware reads
    its Accept-Language (French when it asks for neither); ``tests/test_words.py`` covers both."""
    with translation.override("en"):
        yield


@pytest.fixture(autouse=True)
def _no_manual_clock_left_set() -> Iterator[None]:
    """A test that leaves a manual clock set (entered, never left) fails, and the next test still
    starts on the real clock."""
    yield
    left = clock.simulated()
    if left is not None:
        clock._manual.set(None)
        pytest.fail(f"a manual clock was left set at {left.peek().isoformat()}")


@pytest.fixture(autouse=True)
def _media_in_a_temporary_folder(settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    settings.MEDIA_ROOT = str(tmp_path / "media")


@pytest.fixture(scope="session")
def signing_keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A development CA and signing certificate, made once for the whole run."""
    from casino.reports.signing import init_signing

    return init_signing(tmp_path_factory.mktemp("keys"), organisation="Casino des tests")


@pytest.fixture(autouse=True)
def _signing_keys_configured(settings, signing_keys: dict[str, Path]) -> None:  # type: ignore[no-untyped-def]
    settings.REPORT_SIGNING_PKCS12 = str(signing_keys["pkcs12"])
    settings.REPORT_SIGNING_PASSPHRASE_FILE = str(signing_keys["passphrase"])
    settings.REPORT_TRUST_ROOTS = [str(signing_keys["ca"])]


@pytest.fixture
def api(cast: Cast):  # type: ignore[no-untyped-def]
    """``api(user)`` is an API client authenticated by a token of that user (``api(None)``:
    anonymous). One token per user per test, issued as the token endpoint issues it."""
    keys: dict[int, str] = {}

    def client_for(user):  # type: ignore[no-untyped-def]
        client = APIClient()
        if user is not None:
            if user.pk not in keys:
                keys[user.pk] = token_issue(user=user)[1]
            client.credentials(HTTP_AUTHORIZATION=f"Token {keys[user.pk]}")
        return client

    return client_for


def database_url() -> str:
    """The URL of the database the tests run on (the test database, not the configured one)."""
    db = settings.DATABASES["default"]
    user = quote(db.get("USER") or "")
    password = quote(db.get("PASSWORD") or "")
    host = db.get("HOST") or db.get("OPTIONS", {}).get("host", "")
    port = db.get("PORT") or ""
    credentials = f"{user}:{password}@" if password else f"{user}@"
    if host.startswith("/"):  # a Unix socket directory (the embedded server)
        return f"postgresql://{credentials}/{db['NAME']}?host={quote(host)}"
    return f"postgresql://{credentials}{host}:{port}/{db['NAME']}"


def service_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("DATABASE_OWNER_URL", None)  # the worker is the application: its role only
    env.update(
        DATABASE_URL=database_url(),
        REDIS_URL=settings.REDIS_URL,
        CELERY_QUEUE=settings.CELERY_TASK_DEFAULT_QUEUE,
        PYTHONUNBUFFERED="1",
        MEDIA_ROOT=str(settings.MEDIA_ROOT),
        REPORT_SIGNING_PKCS12=settings.REPORT_SIGNING_PKCS12,
        REPORT_SIGNING_PASSPHRASE_FILE=settings.REPORT_SIGNING_PASSPHRASE_FILE,
        REPORT_TRUST_ROOTS=",".join(settings.REPORT_TRUST_ROOTS),
    )
    env.update(extra)
    return env


def redis_available(url: str) -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=1).ping())
    except redis.RedisError:
        return False


class Worker:
    """A real ``celery worker`` process on its own queue, against the test database."""

    def __init__(self, env: dict[str, str], queue: str) -> None:
        self.queue = queue
        self.log = Path(os.environ.get("TMPDIR", "/tmp")) / f"celery-{queue}.log"
        celery = str(Path(sys.executable).parent / "celery")
        self.process = subprocess.Popen(
            [
                celery,
                "-A",
                "casino.celery",
                "worker",
                "--pool",
                "prefork",
                "--concurrency",
                "2",
                "--queues",
                queue,
                "--hostname",
                f"{queue}@%h",
                "--loglevel",
                "INFO",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
            ],
            env=env,
            cwd=ROOT,
            stdout=self.log.open("wb"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self._wait_ready()

    def _wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"celery worker died:\n{self.log.read_text()}")
            if "ready." in self.log.read_text():
                return
            time.sleep(0.2)
        raise TimeoutError(f"celery worker not ready:\n{self.log.read_text()}")

    def stop(self) -> None:
        import signal

        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


@pytest.fixture
def unique_queue(settings) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """A queue of our own, so no other worker on this broker takes the tests' tasks."""
    queue = f"casino-test-{uuid.uuid4().hex[:10]}"
    settings.CELERY_TASK_DEFAULT_QUEUE = queue
    yield queue
    if redis_available(settings.REDIS_URL):  # leave nothing behind on a shared broker
        import redis

        redis.Redis.from_url(settings.REDIS_URL).delete(queue)


@pytest.fixture
def celery_worker(transactional_db: None, unique_queue: str) -> Iterator[Worker]:
    """A real worker over the real Redis, seeing what the test commits."""
    if not redis_available(settings.REDIS_URL):
        message = f"Redis is not reachable at {settings.REDIS_URL}"
        if REQUIRE_SERVICES:
            pytest.fail(message)
        pytest.skip(message)
    worker = Worker(service_env(), unique_queue)
    yield worker
    worker.stop()


def wait_until(predicate, timeout: float = 30.0, interval: float = 0.1) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return False


# --- the database: created by the owner, used by an application role -----------------------

APP_ROLE_PASSWORD = secrets.token_urlsafe(24)


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix: None) -> None:
    """The owner (DATABASE_OWNER_URL, else DATABASE_URL) creates and migrates the test database."""
    default, owner = settings.DATABASES["default"], settings.DATABASES["owner"]
    for key in ("USER", "PASSWORD", "HOST", "PORT", "OPTIONS"):
        default[key] = owner[key]


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: None, django_db_blocker) -> Iterator[None]:  # type: ignore[no-untyped-def]
    """Then the tests run as the application does: as a role that may not edit history.

    The role is the test database's own (``test_<name>_app``), so runs sharing a cluster do not
    share it; ``db_roles``' grants are what production gets.
    """
    from django.db import connections, transaction

    from audit.database_role import grant, violations

    default, owner = connections["default"], connections["owner"]
    role = f"{default.settings_dict['NAME']}_app"
    with django_db_blocker.unblock():
        with transaction.atomic(using="owner"):
            grant(owner, role=role, password=APP_ROLE_PASSWORD)
        assert violations(owner, role=role) == []
        with owner.cursor() as cursor:  # what a committing test's cleanup keeps (below)
            _as_migrated[owner.settings_dict["NAME"]] = _migrated_rows(cursor)
        owner.close()
    owner_credentials = {key: default.settings_dict[key] for key in ("USER", "PASSWORD")}
    default.close()
    default.settings_dict.update(USER=role, PASSWORD=APP_ROLE_PASSWORD)
    yield
    default.close()  # the owner drops the test database
    default.settings_dict.update(owner_credentials)


@contextmanager
def as_owner() -> Iterator[None]:
    """The default connection as the schema's owner for a while (outside any transaction).

    For what only an owner (or a superuser restoring a backup) does: empty the tables after a
    test that committed, tamper with the history to prove the verifier sees it.
    """
    from django.db import connection

    app = {key: connection.settings_dict[key] for key in ("USER", "PASSWORD")}
    owner = settings.DATABASES["owner"]
    connection.close()
    connection.settings_dict.update(USER=owner["USER"], PASSWORD=owner["PASSWORD"])
    try:
        yield
    finally:
        connection.close()
        connection.settings_dict.update(app)


# What migrate itself leaves in the database beside the schema: the content types and permissions,
# the role groups and their permissions (ChainHead's genesis row is made again, as it must be).
MIGRATED_TABLES = ("django_content_type", "auth_permission", "auth_group", "auth_group_permissions")
_as_migrated: dict[str, tuple[str, ...]] = {}


def _migrated_rows(cursor) -> tuple[str, ...]:  # type: ignore[no-untyped-def]
    """A digest of every row of MIGRATED_TABLES, one per table."""
    digests = ", ".join(
        f"(SELECT md5(coalesce(string_agg(t::text, ',' ORDER BY t::text), '')) FROM {table} t)"
        for table in MIGRATED_TABLES
    )
    cursor.execute(f"SELECT {digests}")
    return tuple(cursor.fetchone())


@pytest.fixture(autouse=True, scope="session")
def _flush_past_append_only_triggers() -> Iterator[None]:
    """Let tests that commit (transactional tests) be cleaned up afterwards.

    Django empties the database after such a test with TRUNCATE, which the application's role may
    not do and our append-only tables refuse by trigger. Only this cleanup, as the owner, switches
    triggers off (``session_replication_role``, as a superuser restoring a backup would); every test
    itself runs as the application's role, with them on.

    It empties the tables with DELETE, not Django's TRUNCATE of every table and post_migrate: a
    TRUNCATE gives each of the 69 tables new files (0.7 to 2 s on this machine's disk), and
    post_migrate then made again, app by app, the rows migrate had left. Those rows (the content
    types, permissions and role groups) are kept instead, when the test left them exactly as
    migrate did (their digest says so); a test that changed them gets Django's full flush.
    """
    from django.db import connection, transaction
    from django.test import TransactionTestCase

    from audit.models import ChainHead

    original = TransactionTestCase._fixture_teardown

    def emptied() -> bool:
        """Every table but MIGRATED_TABLES emptied, if those are as migrate left them."""
        tables = sorted(
            set(connection.introspection.django_table_names(only_existing=True))
            - set(MIGRATED_TABLES)
        )
        with transaction.atomic(), connection.cursor() as cursor:
            if _migrated_rows(cursor) != _as_migrated.get(connection.settings_dict["NAME"]):
                return False
            quote = connection.ops.quote_name
            cursor.execute("; ".join(f"DELETE FROM {quote(table)}" for table in tables))
            ChainHead.objects.create(pk=1)  # the chain's genesis, as its migration made it
        return True

    def teardown(self: TransactionTestCase) -> None:
        with as_owner():
            with connection.cursor() as cursor:
                cursor.execute("SET session_replication_role = replica")
            if emptied():
                return
            original(self)
            # The rows the data migrations made are gone with the rest: make them again.
            from casino.people.roles import sync_role_permissions

            ChainHead.objects.get_or_create(pk=1)
            sync_role_permissions()

    TransactionTestCase._fixture_teardown = teardown  # type: ignore[method-assign]
    yield
    TransactionTestCase._fixture_teardown = original  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def _commit_time_triggers_fire_in_test_transactions(request: pytest.FixtureRequest) -> None:
    """Tests on the ``db`` fixture run inside one transaction that is rolled back, never committed,
    so triggers deferred to commit (the audit chain head follows its last event) would never fire.
    Make them fire at the end of each statement instead; tests that commit (``transactional_db``)
    exercise the real commit-time behaviour."""
    if "db" in request.fixturenames and "transactional_db" not in request.fixturenames:
        request.getfixturevalue("db")
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")


# --- the floor: posted règlements, a table, an open séance ------------------------------------


@pytest.fixture
def posted(cast):
    reglement_load_presets(actor=cast.commissaire, effective_from=dt.date(2026, 1, 1))
    return PostedReglement.objects.get(name="baden-1854")


@pytest.fixture
def table(cast, posted, request):
    """Table 1, under ``baden-1854`` unless the test is marked ``@pytest.mark.reglement(name)``."""
    marker = request.node.get_closest_marker("reglement")
    if marker is not None:
        posted = PostedReglement.objects.get(name=marker.args[0])
    ratio = posted.engine().max_stake_ratio
    return table_create(
        actor=cast.directeur,
        number=1,
        game="trente-et-quarante",
        reglement_id=posted.pk,
        min_stake=500,
        max_stake=600_000 if ratio is None else min(600_000, 500 * ratio),
    )


FLOAT = {"10000": 40, "2500": 40, "500": 100}


def signed_count(cast, table, moment, chips):
    """A count recorded by the croupier and countersigned by the director, each their own act."""
    count = count_record(actor=cast.croupier, table_id=table.pk, moment=moment, chips=chips)
    count_countersign(actor=cast.directeur, count_id=count.pk)
    return count


def open_seance(cast, table, chips=FLOAT, *, tailleur=None, croupiers=None):
    count = signed_count(cast, table, "opening", chips)
    return shift_open(
        actor=cast.chef,
        table=table,
        count_id=count.pk,
        tailleur=tailleur or cast.tailleur,
        croupiers=croupiers or [cast.croupier],
    )


def close_seance(cast, shift, chips):
    count = signed_count(cast, shift.table, "closing", chips)
    return shift_close(actor=cast.chef, shift=shift, count_id=count.pk)


@pytest.fixture
def shift(cast, table):
    return open_seance(cast, table)


# --- the card room: sealed packs received, verified, in play ----------------------------------

SEAL = iter(range(10_000, 99_999))


@pytest.fixture
def receive(cast):
    """``receive()`` enters a new sealed sixain (or single pack) and stores it."""

    def make(kind: str = PackKind.SIXAIN, store: bool = True):
        pack = pack_receive(
            actor=cast.caissier,
            kind=kind,
            maker="Grimaud",
            maker_pack_numbers="G-1854-1..6",
            seal_number=f"RF-{next(SEAL)}",
            sealing_authority="Préfecture de police",
            store_location="coffre A",
        )
        if store:
            pack = pack_store(actor=cast.caissier, pack_id=pack.pk)
        return pack

    return make


@pytest.fixture
def verified(cast, receive):
    def make(kind: str = PackKind.SIXAIN):
        pack = receive(kind)
        seal_verify(
            actor=cast.commissaire,
            pack_id=pack.pk,
            seal_number_read=pack.seal_number,
            verdict="intact",
        )
        pack.refresh_from_db()
        return pack

    return make


@pytest.fixture
def sixain_in_play(cast, verified, shift):
    pack = verified()
    pack_open(actor=cast.chef, pack_id=pack.pk, shift_id=shift.pk)
    pack_shuffle(actor=cast.croupier, pack_id=pack.pk)
    pack_shuffle(actor=cast.tailleur, pack_id=pack.pk)
    pack_cut(actor=cast.tailleur, pack_id=pack.pk, cut_by="M. Dupont")
    return pack


def lay_in_coups(cast, shift, codes):
    """Lay ``codes`` at the table the only way cards are laid: in coups (opened by the tailleur
    on duty, betting closed, settled by the croupier when complete). Returns the last answer."""
    from casino.floor.coups import coup_close_betting, coup_lay_card, coup_open, coup_settle
    from casino.floor.models import Coup, CoupPhase

    laid = None
    for code in codes:
        coup = Coup.objects.filter(shift=shift).exclude(phase__in=["settled", "cancelled"]).first()
        if coup is None:
            coup = coup_open(actor=cast.tailleur, shift_id=shift.pk)
        if coup.phase == CoupPhase.BETTING:
            coup_close_betting(actor=cast.tailleur, coup_id=coup.pk)
        laid = coup_lay_card(actor=cast.tailleur, coup_id=coup.pk, code=code)
        if laid.coup_complete:
            coup_settle(actor=cast.croupier, coup_id=coup.pk)
    return laid


def talon(pack) -> list[str]:
    """The undealt cards the pack says the talon holds (in the pack's order): what a tailleur who
    counted right records when the cards pass."""
    from shoes.services import cards_left

    return cards_left(pack)[1]


def pass_the_cards(cast, pack, **kwargs):
    """Les cartes passent, the tailleur on duty listing the undealt cards as counted."""
    from shoes.services import cards_pass

    return cards_pass(actor=cast.tailleur, pack_id=pack.pk, undealt=talon(pack), **kwargs)
