"""``casino.round_trips`` and ``casino.backend``: an act in as few round trips as its reads allow.

The BEGIN goes with a transaction's first statement; a held write goes with the next statement,
whoever sends it, or with the COMMIT; a rollback (of the transaction or of a savepoint) drops
what is held; a held write that fails fails the act, and nothing of it is committed. Statements
are prepared once per connection, logged and counted as the ORM's, and the database's refusals
are translated as for the ORM's.

The tests that commit (``transaction=True``) count round trips: every message this process sends
the server and waits on (ours, psycopg's own BEGIN and COMMIT, the ORM's statements).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest
from django.db import DatabaseError, DataError, OperationalError, ProgrammingError, transaction
from django.db import connection as django_connection
from django.test.utils import CaptureQueriesContext

from audit.chain import audit_record
from audit.models import AuditEvent
from casino import round_trips
from casino.database_rules import RuleViolated
from casino.floor.models import Coup
from casino.prepared import PreparedUpdate
from casino.round_trips import hold, run, run_all, send_held
from tests.conftest import as_owner

commits = pytest.mark.django_db(transaction=True)

SCRATCH = "round_trips_scratch"  # a table of this session's, for what the tests write


@pytest.fixture
def scratch(transactional_db: None) -> Iterator[str]:
    """A table for what the tests write, made by the schema's owner for the application's role
    (which may not make tables, not even temporary ones)."""
    role = django_connection.settings_dict["USER"]
    with as_owner(), django_connection.cursor() as cursor:
        cursor.execute(f"CREATE TABLE {SCRATCH} (n integer NOT NULL)")
        cursor.execute(f'GRANT SELECT, INSERT ON {SCRATCH} TO "{role}"')
    yield SCRATCH
    with as_owner(), django_connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE {SCRATCH}")


def written() -> list[int]:
    with django_connection.cursor() as cursor:
        cursor.execute(f"SELECT n FROM {SCRATCH} ORDER BY n")
        return [n for (n,) in cursor.fetchall()]


def insert(n: int) -> tuple[str, list[int]]:
    return f"INSERT INTO {SCRATCH} (n) VALUES (%s)", [n]


class Trips(Counter[str]):
    @property
    def total(self) -> int:
        return sum(self.values())


@contextmanager
def round_trips_counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[Trips]:
    """The round trips to the server while inside: ours (a pipeline each, by what it carries),
    psycopg's own commands (a BEGIN before an ORM statement, a plain COMMIT), the ORM's
    statements. The connection is made first (its setup's statements are not an act's)."""
    django_connection.ensure_connection()
    trips = Trips()
    send = round_trips._send
    exec_command = psycopg.Connection._exec_command
    orm_execute = psycopg.ClientCursor.execute

    def counted_send(db: Any, wire: Any, statements: Any, *, commit: bool = False) -> Any:
        begins = not wire.connection.autocommit and (
            wire.connection.pgconn.transaction_status == psycopg.pq.TransactionStatus.IDLE
        )
        what = ["BEGIN"] * begins + ["statements"] + ["COMMIT"] * commit
        trips[" + ".join(what)] += 1
        return send(db, wire, statements, commit=commit)

    def counted_command(self: Any, command: bytes, *arguments: Any, **options: Any) -> Any:
        trips[f"psycopg {command.split()[0].decode()}"] += 1
        return exec_command(self, command, *arguments, **options)

    def counted_orm(self: Any, *arguments: Any, **options: Any) -> Any:
        trips["ORM statement"] += 1
        return orm_execute(self, *arguments, **options)

    monkeypatch.setattr(round_trips, "_send", counted_send)
    monkeypatch.setattr(psycopg.Connection, "_exec_command", counted_command)
    monkeypatch.setattr(psycopg.ClientCursor, "execute", counted_orm)
    yield trips
    monkeypatch.undo()


# --- one act, two round trips ------------------------------------------------------------------


@commits
def test_an_act_is_two_round_trips_its_begin_with_its_read_its_write_with_its_commit(
    scratch, monkeypatch
):
    with round_trips_counted(monkeypatch) as trips, transaction.atomic():
        assert run("SELECT %s::int", [41]) == [(41,)]
        hold(*insert(1))
        hold(*insert(2))
    assert trips == {"BEGIN + statements": 1, "statements + COMMIT": 1}
    assert written() == [1, 2]  # committed: read in a transaction of its own


@commits
def test_a_held_write_goes_with_the_next_statement_ours_in_the_same_round_trip(
    scratch, monkeypatch
):
    with round_trips_counted(monkeypatch) as trips, transaction.atomic():
        hold(*insert(1))
        assert run(f"SELECT count(*) FROM {SCRATCH}") == [(1,)]  # it saw the write
    assert trips == {"BEGIN + statements": 1, "psycopg COMMIT": 1}


@commits
def test_reads_sent_together_are_one_round_trip_with_what_was_held_each_its_own_rows(
    scratch, monkeypatch
):
    with round_trips_counted(monkeypatch) as trips, transaction.atomic():
        hold(*insert(1))
        answers = run_all(
            [
                (f"SELECT count(*) FROM {SCRATCH}", []),  # it saw the write held before
                ("SELECT %s::int, %s::text", [7, "a"]),
                ("SELECT 1 WHERE false", []),
            ]
        )
    assert answers == [[(1,)], [(7, "a")], []]
    assert trips == {"BEGIN + statements": 1, "psycopg COMMIT": 1}


@commits
def test_a_held_write_goes_before_a_statement_of_the_orm_and_of_psycopgs_own_cursor(scratch):
    with transaction.atomic():
        hold(*insert(1))
        assert written() == [1]  # the ORM's cursor
        hold(*insert(2))
        with psycopg.ClientCursor(django_connection.connection) as raw:
            send_held()  # a cursor that does not go through Django says so itself
            raw.execute(f"SELECT count(*) FROM {SCRATCH}")
            assert raw.fetchone() == (2,)
    assert written() == [1, 2]


@commits
def test_a_write_outside_a_transaction_is_not_held(scratch):
    hold(*insert(7))  # no next statement to wait for: sent, and committed on its own
    assert written() == [7]


# --- what is rolled back is never sent ---------------------------------------------------------


@commits
def test_a_rollback_drops_what_is_held(scratch, monkeypatch):
    with pytest.raises(ZeroDivisionError), transaction.atomic():
        assert run("SELECT 1") == [(1,)]
        hold(*insert(1))
        1 / 0  # noqa: B018 (the act fails after its write was held)
    with round_trips_counted(monkeypatch) as trips, transaction.atomic():
        assert run("SELECT 2") == [(2,)]
    assert trips == {"BEGIN + statements": 1, "psycopg COMMIT": 1}  # nothing left over
    assert written() == []


@commits
def test_a_savepoint_rolled_back_drops_what_was_held_in_it_and_keeps_what_came_before(scratch):
    with transaction.atomic():
        hold(*insert(1))
        with pytest.raises(ZeroDivisionError), transaction.atomic():  # its SAVEPOINT sends 1
            hold(*insert(2))
            1 / 0  # noqa: B018
        hold(*insert(3))
    assert written() == [1, 3]


@commits
def test_a_savepoint_goes_with_its_first_statement_its_release_with_its_last_write(
    scratch, monkeypatch
):
    """An act inside a request's transaction (the API's) costs no round trip for its savepoint."""
    with round_trips_counted(monkeypatch) as trips, transaction.atomic():
        run("SELECT 1")
        with transaction.atomic():  # SAVEPOINT: held
            run("SELECT 2")  # sent with it
            hold(*insert(1))  # sent with the RELEASE
        hold(*insert(2))  # sent with the COMMIT
    assert trips == {
        "BEGIN + statements": 1,
        "statements": 2,  # SAVEPOINT and SELECT 2; INSERT 1 and RELEASE
        "statements + COMMIT": 1,
    }
    assert written() == [1, 2]


@commits
def test_a_savepoint_nothing_was_sent_in_never_reaches_the_server(scratch, monkeypatch):
    logged = CaptureQueriesContext(django_connection)
    with round_trips_counted(monkeypatch) as trips, logged, transaction.atomic():
        run("SELECT 1")
        with pytest.raises(ZeroDivisionError), transaction.atomic():
            hold(*insert(1))
            1 / 0  # noqa: B018 (rolled back: the SAVEPOINT and the INSERT are dropped)
        with transaction.atomic():
            hold(*insert(2))  # released: the INSERT sent at the block's end, as every block's
        hold(*insert(3))
    assert trips == {"BEGIN + statements": 1, "statements": 1, "statements + COMMIT": 1}
    assert not [q for q in logged.captured_queries if "SAVEPOINT" in q["sql"]]
    assert written() == [2, 3]


@commits
def test_a_held_write_that_fails_fails_the_act_and_nothing_of_it_is_committed(scratch):
    hooks: list[str] = []
    with pytest.raises(DataError, match="division by zero"), transaction.atomic():
        transaction.on_commit(lambda: hooks.append("ran"))
        assert run("SELECT 1") == [(1,)]
        hold(*insert(1))
        hold("SELECT 1 / %s", [0])  # fails at the COMMIT, in the same round trip
    assert written() == []
    with transaction.atomic():  # the connection is usable, the failed act's hook forgotten
        hold(*insert(2))
    assert (written(), hooks) == ([2], [])


@commits
def test_a_checked_write_that_is_refused_is_never_committed(scratch, monkeypatch):
    nowhere = Coup(pk=2**62, phase="closed")  # no such coup: the UPDATE finds no row
    refused = pytest.raises(DatabaseError, match="did not affect any rows")
    with round_trips_counted(monkeypatch) as trips, refused, transaction.atomic():
        hold(*insert(1))
        PreparedUpdate(Coup, "phase").save(nowhere)
    assert written() == []
    # The check waits for the UPDATE's count: the writes first, the COMMIT never sent.
    assert trips == {"BEGIN + statements": 1, "psycopg ROLLBACK": 1}


@commits
def test_an_error_in_a_statement_fails_it_with_what_was_held_before_it(scratch):
    with pytest.raises(DataError), transaction.atomic():
        hold(*insert(1))
        run("SELECT 1 / %s", [0])
    assert written() == []


def test_a_refusal_of_the_database_is_translated_for_a_statement_sent_here(cast, coup_open_at):
    table = Coup._meta.db_table
    # A second coup in progress at the séance: the rule one_coup_in_progress_per_seance.
    with pytest.raises(RuleViolated, match="one_coup_in_progress_per_seance"):
        run(
            f"INSERT INTO {table} (shift_id, pack_id, taille, number, reglement_id, min_stake, "
            "max_stake, opened_at, opened_by_id, phase) SELECT shift_id, pack_id, taille, "
            f"number + 1, reglement_id, min_stake, max_stake, opened_at, opened_by_id, phase "
            f"FROM {table} WHERE id = %s",
            [coup_open_at.pk],
        )


# --- how the statements go -------------------------------------------------------------------


def test_an_execute_wrapper_sees_each_round_trip_and_what_it_raises(db):
    seen: list[tuple[str, bool]] = []

    def wrapper(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        try:
            return execute(sql, params, many, context)
        finally:
            seen.append((sql, context["cursor"] is not None))

    with django_connection.execute_wrapper(wrapper), transaction.atomic():
        run("SELECT %s::int", [1])
        with pytest.raises(DataError), transaction.atomic():
            run("SELECT 1 / %s", [0])
    # The test's own transaction makes savepoints: they go in the same round trips.
    assert [sql.split(";\n")[-1] for sql, _ in seen if "SELECT" in sql] == [
        "SELECT %s::int",
        "SELECT 1 / %s",
    ]
    assert all(cursor for _, cursor in seen)


@commits
def test_statements_are_logged_as_the_server_gets_them_then_the_commit(scratch):
    with CaptureQueriesContext(django_connection) as queries, transaction.atomic():
        run("SELECT %s::int", [1])
        hold(*insert(1))
    assert [q["sql"] for q in queries.captured_queries] == [
        "BEGIN",  # as Django logs it: sent with the first statement
        "SELECT $1::int",
        f"INSERT INTO {SCRATCH} (n) VALUES ($1)",
        "COMMIT",
    ]


@commits
def test_the_begin_is_the_one_psycopg_sends_for_the_connections_settings():
    django_connection.ensure_connection()
    raw = django_connection.connection
    raw.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
    try:
        assert round_trips._begin(raw) == raw._get_tx_start_command()
        with transaction.atomic():
            assert run("SELECT current_setting('transaction_isolation')") == [("repeatable read",)]
    finally:
        raw.isolation_level = None
    assert round_trips._begin(raw) == raw._get_tx_start_command() == b"BEGIN"


def prepared_here(text: str) -> list[tuple[int, int]]:
    """The session's prepared statements whose text holds ``text``: their plans run so far
    (generic, custom), as PostgreSQL counts them."""
    with django_connection.cursor() as cursor:
        cursor.execute(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements "
            "WHERE strpos(statement, %s) > 0",
            [text],
        )
        return cursor.fetchall()


def test_a_statement_is_prepared_once_by_the_server_and_run_again_with_new_values(db):
    marker = "round-trips-test"  # a statement no other code sends
    for value in (1, 2, 3):
        assert run(f'SELECT %s::bigint + 1 AS "{marker}"', [value]) == [(value + 1,)]
    ((generic, custom),) = prepared_here(marker)  # one statement in the session, not three
    assert generic + custom == 3
    assert prepared_here("no statement holds this text") == []


def test_a_statement_prepared_in_a_transaction_rolled_back_runs_again(cast, coup_open_at):
    sql = 'SELECT count(*) AS "rolled-back-test" FROM floor_coup WHERE id = %s'
    with pytest.raises(ZeroDivisionError), transaction.atomic():
        run(sql, [coup_open_at.pk])
        1 / 0  # noqa: B018 (the transaction fails after the statement was prepared)
    assert run(sql, [coup_open_at.pk]) == [(1,)]


@commits
def test_a_new_connection_prepares_its_statements_again():
    assert run("SELECT %s::int", [1]) == [(1,)]
    django_connection.close()
    assert run("SELECT %s::int", [2]) == [(2,)]
    assert len(prepared_here("SELECT $1::int")) == 1


def test_placeholders_are_psycopgs_a_name_used_twice_one_value(db):
    assert run("SELECT %s::int, %s::text, '100%%'", [1, "a"]) == [(1, "a", "100%")]
    assert run("SELECT %(n)s::int + %(n)s::int, %(t)s::text", {"n": 2, "t": "b"}) == [(4, "b")]
    with pytest.raises(ValueError, match="not both"):
        run("SELECT %s::int, %(n)s::int", [1])


def test_a_value_that_cannot_be_sent_fails_before_anything_is_and_the_connection_goes_on(db):
    with pytest.raises(ProgrammingError, match="cannot adapt"):
        run("SELECT %s::int, %s", [1, object()])
    assert run("SELECT %s::int", [2]) == [(2,)]


def test_rows_are_read_with_the_loaders_djangos_cursor_reads_them_with(db):
    sql = "SELECT now(), %s::jsonb, %s::numeric, NULL::text"
    values = ['{"a": 1}', "1.50"]
    with django_connection.cursor() as cursor:
        cursor.execute(sql, values)
        djangos = cursor.fetchall()
    assert run(sql, values) == djangos  # an aware time in UTC, jsonb as its text (for JSONField)


@commits
def test_a_lost_connection_fails_the_act_and_django_connects_again():
    with pytest.raises(OperationalError), transaction.atomic():
        (pid,) = run("SELECT pg_backend_pid()")[0]
        with psycopg.connect(
            **{
                k: v for k, v in django_connection.get_connection_params().items() if k != "context"
            },
            autocommit=True,
        ) as other:
            other.execute("SELECT pg_terminate_backend(%s)", [pid])
        run("SELECT 1")
    assert run("SELECT 2") == [(2,)]  # a new connection


# --- the audit chain ---------------------------------------------------------------------------


@commits
def test_an_event_gets_its_place_in_the_chain_when_it_is_sent():
    with transaction.atomic():
        event = audit_record(actor=None, action="test.held", payload={"n": 1})
        assert (event.seq, event.hash) == (None, None)  # held, not sent yet
        send_held()
        assert event.seq is not None
        stored = AuditEvent.objects.get(seq=event.seq)
    assert (stored.action, stored.hash, stored.prev_hash) == (
        "test.held",
        event.hash,
        event.prev_hash,
    )


@commits
def test_the_chains_lock_is_taken_with_the_commit_not_while_the_act_runs():
    """An act holds the chain (every act's) for the last round trip only: another act may
    append while this one is still at work."""
    params = {k: v for k, v in django_connection.get_connection_params().items() if k != "context"}
    with transaction.atomic():
        audit_record(actor=None, action="test.held_for_the_commit")
        with psycopg.connect(**params) as other:
            # audit_lock_and_last_event's lock (audit/migrations/0003): free.
            free = other.execute("SELECT pg_try_advisory_xact_lock(418581342580)").fetchone()
            assert free == (True,)
    assert AuditEvent.objects.filter(action="test.held_for_the_commit").count() == 1


@pytest.fixture
def coup_open_at(cast, shift, sixain_in_play) -> Coup:  # type: ignore[no-untyped-def]
    from casino.floor.coups import coup_open

    return coup_open(actor=cast.tailleur, shift_id=shift.pk)
