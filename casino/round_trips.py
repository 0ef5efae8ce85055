"""An act in as few round trips as its reads allow.

Every table act is a transaction: BEGIN, its statements, COMMIT. Sent one at a time, as psycopg's
cursor sends them, the BEGIN and the COMMIT are two round trips of their own, and a write whose
result the act never reads (its audit event, a coup's new phase, the API's answer kept for a
retry) waits for its own answer too: a Trente-et-Quarante coup was 159 round trips, now 109
(issue 17, fourteenth round). Here, on the hot acts' connection:

- ``run`` sends a statement and returns its rows; the BEGIN its transaction is waiting for goes
  with it, as does whatever is held; ``run_all`` sends several reads so, in one round trip;
- ``hold`` keeps a write back: it goes with the next statement, whoever sends it (the ORM's
  included: ``casino.backend``), or with the COMMIT, in the same round trip; a rollback drops it;
- a savepoint's SAVEPOINT is held as a write is, and its RELEASE goes with what is held
  (``casino.backend``): an act nested in a request's transaction costs no round trip for it;
- each statement is prepared by the server once per connection, where it was parsed and planned
  at every act before (``casino.prepared``).

The statements of a round trip go out in libpq's pipeline mode, straight on psycopg's connection
(its cursor sends one statement a round trip; its own pipeline costs more of this process than the
round trips it saves here: 704 against 651 µs for a lock and an insert committed, issue 17), with
the values bound by the server as psycopg binds them, and the rows read with the connection's own
loaders (Django's among them). Django's execute wrappers see each round trip, so the database's
refusals are translated (``casino.database_rules``) and the statements are logged and counted as
the ORM's are.

Only a write that breaks no rule of ``casino.database_rules`` is held: one that fails at the COMMIT
fails the act (Django rolls it back), it is not translated into a refusal.
"""

from __future__ import annotations

import functools
import logging
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import psycopg
from django.db import connections
from django.db.backends.base.base import BaseDatabaseWrapper
from psycopg import generators, pq
from psycopg.adapt import PyFormat, Transformer

USING = "default"  # the hot acts' database

logger = logging.getLogger("django.db.backends")

_IDLE = pq.TransactionStatus.IDLE
_PLACEHOLDER = re.compile(r"%\((\w+)\)s|%s|%%")


class Sent(NamedTuple):
    """What a statement gave back: its rows, and how many rows it read or wrote."""

    rows: list[tuple[Any, ...]]
    count: int


@dataclass(frozen=True)
class _Held:
    sql: str
    params: Sequence[Any] | Mapping[str, Any]
    then: Callable[[Sent], None] | None  # given what the statement gave, once it is sent
    checks: bool = False  # ``then`` may refuse it: the COMMIT must wait for that
    prepared: bool = True  # False: a command sent as its text (a savepoint's, named anew each time)


@dataclass(frozen=True)
class _Query:
    """A statement as the server takes it: ``$1, $2...`` for psycopg's ``%s`` and ``%(name)s``."""

    text: bytes
    names: tuple[str, ...] | None  # the names in the order of their numbers; None: positional


_QUERIES: dict[str, _Query] = {}


def _query(sql: str) -> _Query:
    """As psycopg converts it: a name used twice is one value."""
    query = _QUERIES.get(sql)
    if query is None:
        positional = 0
        named: dict[str, int] = {}

        def number(match: re.Match[str]) -> str:
            nonlocal positional
            if match.group(0) == "%%":
                return "%"
            if match.group(1) is None:
                positional += 1
                return f"${positional}"
            return f"${named.setdefault(match.group(1), len(named) + 1)}"

        text = _PLACEHOLDER.sub(number, sql)
        if positional and named:
            raise ValueError(f"a statement takes %s or %(name)s, not both: {sql}")
        query = _QUERIES[sql] = _Query(text.encode(), tuple(named) if named else None)
    return query


@dataclass
class _Wire:
    """What this module keeps for one connection to the server."""

    connection: psycopg.Connection[Any]
    transformer: Transformer
    cursor: psycopg.Cursor[Any]  # for the execute wrappers' context; nothing is sent through it
    names: dict[tuple[bytes, tuple[int, ...]], bytes] = field(default_factory=dict)
    held: list[_Held] = field(default_factory=list)
    made: int = 0  # statements prepared on it: each its own name, never given again

    def new_name(self) -> bytes:
        self.made += 1
        return f"casino_{self.made}".encode()


def _wire(db: BaseDatabaseWrapper) -> _Wire:
    wire: _Wire | None = getattr(db, "_casino_wire", None)
    if wire is None or wire.connection is not db.connection:  # Django connected again
        connection = db.connection
        wire = db._casino_wire = _Wire(connection, Transformer(connection), connection.cursor())
    return wire


def run(sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> list[tuple[Any, ...]]:
    """The rows of ``sql`` (psycopg's placeholders, ``%s`` or ``%(name)s``), sent now: with what
    is held before it, and with the BEGIN when it is the transaction's first statement."""
    return run_sent(sql, params).rows


def run_sent(sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> Sent:
    """``run``, with how many rows the statement read or wrote."""
    (sent,) = _after_held(_hot_connection(), [_Held(sql, params, None)])
    return sent


def run_all(
    statements: Sequence[tuple[str, Sequence[Any] | Mapping[str, Any]]],
) -> list[list[tuple[Any, ...]]]:
    """The rows of each of ``statements`` (reads that need nothing from each other's answers),
    all sent in one round trip, as ``run`` sends one."""
    asked = [_Held(sql, params, None) for sql, params in statements]
    return [sent.rows for sent in _after_held(_hot_connection(), asked)]


def _hot_connection() -> BaseDatabaseWrapper:
    db = connections[USING]
    db.close_if_health_check_failed()
    return db


def _after_held(db: BaseDatabaseWrapper, asked: list[_Held]) -> list[Sent]:
    """``asked`` sent now, after what is held, in one round trip (with the BEGIN its transaction
    is waiting for): what each of them gave."""
    db.ensure_connection()
    wire = _wire(db)
    held, wire.held = wire.held, []
    return _through_wrappers(db, wire, [*held, *asked])[len(held) :]


def hold(
    sql: str,
    params: Sequence[Any] | Mapping[str, Any] = (),
    *,
    then: Callable[[Sent], None] | None = None,
    checks: bool = False,
) -> None:
    """Send the write ``sql`` with the transaction's next statement, or with its COMMIT;
    ``then(sent)`` once it is sent, to fill in what it returned. With ``checks``, ``then`` may
    refuse what it did (raise): the COMMIT then goes in a round trip of its own, after the check,
    so that a refused write is never committed. Outside a transaction there is no next statement
    to wait for: sent now."""
    db = connections[USING]
    if not db.in_atomic_block:
        sent = run_sent(sql, params)
        if then is not None:
            then(sent)
        return
    db.ensure_connection()
    _wire(db).held.append(_Held(sql, params, then, checks))


def send_held(db: BaseDatabaseWrapper | None = None) -> None:
    """What is held, sent now (a statement that does not go through here is about to be sent)."""
    db = db or connections[USING]
    wire: _Wire | None = getattr(db, "_casino_wire", None)
    if wire is None or not wire.held or wire.connection is not db.connection:
        return
    held, wire.held = wire.held, []
    _through_wrappers(db, wire, held)


def drop_held(db: BaseDatabaseWrapper) -> None:
    """What is held, forgotten: its transaction (or savepoint) is rolled back."""
    wire: _Wire | None = getattr(db, "_casino_wire", None)
    if wire is not None:
        wire.held.clear()


def hold_command(db: BaseDatabaseWrapper, sql: str) -> None:
    """A command with no values and no answer (a savepoint's SAVEPOINT), held like a write but
    sent as its text, never prepared: its name is new each time."""
    db.ensure_connection()
    _wire(db).held.append(_Held(sql, (), None, prepared=False))


def run_command(db: BaseDatabaseWrapper, sql: str) -> None:
    """A command sent now as its text, with what is held before it (a savepoint's RELEASE or
    ROLLBACK TO)."""
    _after_held(db, [_Held(sql, (), None, prepared=False)])


def _held_at(db: BaseDatabaseWrapper, sql: str) -> tuple[_Wire, int] | None:
    wire: _Wire | None = getattr(db, "_casino_wire", None)
    if wire is None or wire.connection is not db.connection:
        return None
    for position, statement in enumerate(wire.held):
        if not statement.prepared and statement.sql == sql:
            return wire, position
    return None


def unhold_command(db: BaseDatabaseWrapper, sql: str) -> bool:
    """Take back the held command ``sql`` alone (a SAVEPOINT released before anything was sent
    inside it: what it holds is the transaction's); False if it has been sent."""
    found = _held_at(db, sql)
    if found is not None:
        wire, position = found
        del wire.held[position]
    return found is not None


def drop_held_after(db: BaseDatabaseWrapper, sql: str) -> bool:
    """Forget what is held after the held command ``sql`` (a SAVEPOINT rolled back before
    anything was sent inside it), the command kept; False if it has been sent."""
    found = _held_at(db, sql)
    if found is not None:
        wire, position = found
        del wire.held[position + 1 :]
    return found is not None


def commit_held(db: BaseDatabaseWrapper) -> bool:
    """The held writes and the COMMIT in one round trip, when something is held (``casino.backend``
    calls this for Django's commit); False when nothing is, for the plain COMMIT. Not through the
    execute wrappers: like Django's own COMMIT, and a refusal raised here would leave Django's
    transaction half done (only writes that break no rule are held)."""
    wire: _Wire | None = getattr(db, "_casino_wire", None)
    if wire is None or not wire.held or wire.connection is not db.connection:
        return False
    if any(statement.checks for statement in wire.held):
        send_held(db)  # checked before anything is committed
        return False
    held, wire.held = wire.held, []
    _send(db, wire, held, commit=True)
    return True


def _through_wrappers(db: BaseDatabaseWrapper, wire: _Wire, statements: list[_Held]) -> list[Sent]:
    """A round trip as Django's cursor runs a statement: the execute wrappers around it (the
    refusals' translation, a request's timing), the connection's state checked first. A wrapper
    sees the statements and what they raise; it does not rewrite them (pgtrigger.ignore's would
    switch a trigger off, which the house refuses anyway: audit/database_role.py)."""
    db.validate_thread_sharing()
    db.validate_no_broken_transaction()
    sent: list[Sent] = []

    def execute(sql: str, params: Any, many: bool, context: dict[str, Any]) -> Any:
        sent.extend(_send(db, wire, statements))
        return context["cursor"]  # what Django's cursor gives its wrappers: a cursor

    executor: Callable[..., Any] = execute
    for wrapper in reversed(db.execute_wrappers):  # as Django's CursorWrapper chains them
        executor = functools.partial(wrapper, executor)
    sql = ";\n".join(s.sql for s in statements)
    context = {"connection": db, "cursor": wire.cursor}
    executor(sql, [s.params for s in statements], False, context)
    return sent


def _begin(connection: psycopg.Connection[Any]) -> bytes:
    """The BEGIN psycopg would send for this connection's settings."""
    parts = [b"BEGIN"]
    if connection.isolation_level is not None:
        level = psycopg.IsolationLevel(connection.isolation_level)
        parts += [b"ISOLATION LEVEL", level.name.replace("_", " ").encode()]
    if connection.read_only is not None:
        parts.append(b"READ ONLY" if connection.read_only else b"READ WRITE")
    if connection.deferrable is not None:
        parts.append(b"DEFERRABLE" if connection.deferrable else b"NOT DEFERRABLE")
    return b" ".join(parts)


# What each command of a round trip is, to read its answer: the transaction's start and end, a
# statement prepared, a statement run (its index among the statements).
_BEGIN, _COMMIT, _PREPARE = -1, -2, -3


@dataclass(frozen=True)
class _Command:
    kind: int  # _BEGIN, _COMMIT, _PREPARE, or the index of the statement it runs
    send: Callable[[], None]  # queues it on the connection, in pipeline mode
    prepares: tuple[tuple[bytes, tuple[int, ...]], bytes] | None = None  # a statement's key, name


def _commands(wire: _Wire, statements: list[_Held], *, commit: bool) -> list[_Command]:
    """What the round trip sends, its values dumped: anything a value can raise is raised here,
    before the first command is queued."""
    connection, tx = wire.connection, wire.transformer
    pgconn = connection.pgconn
    commands: list[_Command] = []
    if not connection.autocommit and pgconn.transaction_status == _IDLE:
        commands.append(
            _Command(_BEGIN, functools.partial(pgconn.send_query_params, _begin(connection), None))
        )
    preparing: dict[tuple[bytes, tuple[int, ...]], bytes] = {}  # this round trip's new names
    for index, statement in enumerate(statements):
        if not statement.prepared:
            text = statement.sql.encode()
            commands.append(
                _Command(index, functools.partial(pgconn.send_query_params, text, None))
            )
            continue
        query = _query(statement.sql)
        params = statement.params
        if query.names is not None:
            params = [params[name] for name in query.names]  # type: ignore[call-overload]
        values = tx.dump_sequence(params, [PyFormat.AUTO] * len(params))
        types = tuple(tx.types) if params else ()
        formats = list(tx.formats) if params else None
        key = (query.text, types)
        name = wire.names.get(key) or preparing.get(key)
        if name is None:
            name = preparing[key] = wire.new_name()
            prepare = functools.partial(
                pgconn.send_prepare, name, query.text, param_types=types or None
            )
            commands.append(_Command(_PREPARE, prepare, prepares=(key, name)))
        run = functools.partial(pgconn.send_query_prepared, name, values, param_formats=formats)
        commands.append(_Command(index, run))
    if commit:
        commands.append(
            _Command(_COMMIT, functools.partial(pgconn.send_query_params, b"COMMIT", None))
        )
    return commands


def _send(
    db: BaseDatabaseWrapper, wire: _Wire, statements: list[_Held], *, commit: bool = False
) -> list[Sent]:
    """``statements`` (and the COMMIT) in one round trip, in pipeline mode; what each gave, after
    each one's ``then``. The first error stops the rest, as the server skips them."""
    connection, tx = wire.connection, wire.transformer
    pgconn = connection.pgconn
    started = time.monotonic()
    with db.wrap_database_errors, connection.lock:
        if pgconn.pipeline_status != pq.PipelineStatus.OFF:
            raise psycopg.ProgrammingError("the connection is in psycopg's pipeline already")
        commands = _commands(wire, statements, commit=commit)
        results: list[pq.abc.PGresult] = []
        pgconn.enter_pipeline_mode()
        try:
            for command in commands:
                command.send()
            pgconn.pipeline_sync()
            connection.wait(generators.send(pgconn))
            for _ in commands:
                results.extend(connection.wait(generators.fetch_many(pgconn)))
            (synced,) = connection.wait(generators.fetch_many(pgconn))
            if synced.status != pq.ExecStatus.PIPELINE_SYNC:
                raise psycopg.InterfaceError(f"a round trip out of step: {synced.status!r}")
        finally:
            _leave_pipeline(pgconn)
        sent: list[Sent] = []
        failed: pq.abc.PGresult | None = None
        for command, result in zip(commands, results, strict=True):
            if result.status == pq.ExecStatus.FATAL_ERROR:
                failed = failed or result
            elif command.prepares is not None and result.status == pq.ExecStatus.COMMAND_OK:
                key, name = command.prepares  # prepared for the session, whatever comes after it
                wire.names[key] = name
            elif command.kind >= 0 and failed is None:
                tx.set_pgresult(result)
                rows = tx.load_rows(0, result.ntuples, tuple) if result.ntuples else []
                sent.append(Sent(rows, result.command_tuples or 0))
        _log(db, statements, time.monotonic() - started, commit=commit)
        if failed is not None:
            raise psycopg.errors.error_from_result(failed, encoding=connection.info.encoding)
    for statement, answer in zip(statements, sent, strict=True):
        if statement.then is not None:
            statement.then(answer)
    return sent


def _leave_pipeline(pgconn: pq.abc.PGconn) -> None:
    try:
        pgconn.exit_pipeline_mode()
    except psycopg.OperationalError:
        if pgconn.status == pq.ConnStatus.OK:  # results left unread on a live connection
            raise
        # The connection is lost: what raised first says so, and Django will not use it again.


def _log(db: BaseDatabaseWrapper, statements: list[_Held], seconds: float, *, commit: bool) -> None:
    """As Django's debug cursor logs a statement (a test counting queries, DEBUG): each statement
    as the server took it, the round trip's time on the last; then the COMMIT, as Django's
    ``debug_transaction`` logs it."""
    if not db.queries_logged:
        return
    texts = [_query(s.sql).text.decode() if s.prepared else s.sql for s in statements]
    texts += ["COMMIT"] if commit else []
    for position, text in enumerate(texts):
        spent = seconds if position == len(texts) - 1 else 0.0
        db.queries_log.append({"sql": text, "time": f"{spent:.3f}"})
        logger.debug("(%.3f) %s; alias=%s", spent, text, db.alias)
