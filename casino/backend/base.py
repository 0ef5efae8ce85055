"""Django's PostgreSQL backend, with the writes ``casino.round_trips`` holds back sent in their
transaction's order: before any statement the ORM sends, with the COMMIT (one round trip for
both), and never after a rollback. A savepoint's SAVEPOINT is held too (it goes with the first
statement inside it), and its RELEASE goes with what is held: an act inside a request's
transaction (the API's: casino/api/idempotency.py) costs no round trip more for being nested.
Whatever a block holds has been sent when it ends, but for the outermost's, which goes with the
COMMIT.

``DATABASES[...]["ENGINE"]`` is ``casino.backend`` (casino/env.py). Everything else is Django's.
"""

from __future__ import annotations

from typing import Any

from django.db.backends.postgresql import base
from django.db.backends.utils import CursorWrapper

from casino import round_trips


class _SendsHeldFirst:
    """A cursor that sends what is held before its own statement, so the server sees the
    transaction's writes in the order the code made them."""

    db: Any

    def execute(self, sql: Any, params: Any = None) -> Any:
        round_trips.send_held(self.db)
        return super().execute(sql, params)  # type: ignore[misc]

    def executemany(self, sql: Any, param_list: Any) -> Any:
        round_trips.send_held(self.db)
        return super().executemany(sql, param_list)  # type: ignore[misc]

    def callproc(self, procname: Any, params: Any = None, kparams: Any = None) -> Any:
        round_trips.send_held(self.db)
        return super().callproc(procname, params, kparams)  # type: ignore[misc]

    def copy(self, *arguments: Any, **options: Any) -> Any:
        round_trips.send_held(self.db)
        logged = getattr(super(), "copy", None)  # Django's debug cursor logs a COPY
        copy = logged or self.cursor.copy  # type: ignore[attr-defined]
        return copy(*arguments, **options)


class _Cursor(_SendsHeldFirst, CursorWrapper):
    pass


class _DebugCursor(_SendsHeldFirst, base.CursorDebugWrapper):
    pass


class DatabaseWrapper(base.DatabaseWrapper):
    def make_cursor(self, cursor: Any) -> CursorWrapper:
        return _Cursor(cursor, self)

    def make_debug_cursor(self, cursor: Any) -> CursorWrapper:
        return _DebugCursor(cursor, self)

    def _commit(self) -> None:
        if self.connection is not None and round_trips.commit_held(self):
            return  # the COMMIT went with what was held
        super()._commit()

    def _rollback(self) -> None:
        round_trips.drop_held(self)
        super()._rollback()

    def _savepoint(self, sid: str) -> None:
        round_trips.hold_command(self, self.ops.savepoint_create_sql(sid))

    def _savepoint_commit(self, sid: str) -> None:
        if round_trips.unhold_command(self, self.ops.savepoint_create_sql(sid)):
            # It never reached the server: nothing to release. What it holds is sent by its end,
            # as every block's is (the outermost's with its COMMIT).
            round_trips.send_held(self)
        else:
            round_trips.run_command(self, self.ops.savepoint_commit_sql(sid))

    def _savepoint_rollback(self, sid: str) -> None:
        if round_trips.drop_held_after(self, self.ops.savepoint_create_sql(sid)):
            return  # nothing after the savepoint reached the server
        # What is held was written after the savepoint (whatever was sent sent it first).
        round_trips.drop_held(self)
        round_trips.run_command(self, self.ops.savepoint_rollback_sql(sid))
