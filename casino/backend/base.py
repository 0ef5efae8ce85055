"""Django's PostgreSQL backend, with the writes ``casino.round_trips`` holds back sent in their
transaction's order: before any statement the ORM sends, with the COMMIT (one round trip for
both), and never after a rollback.

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
        if self.connection is not None:
            with self.wrap_database_errors:
                if round_trips.commit_held(self):
                    return
        super()._commit()

    def _rollback(self) -> None:
        round_trips.drop_held(self)
        super()._rollback()

    def _savepoint_rollback(self, sid: str) -> None:
        # What is held was written after the savepoint (its SAVEPOINT sent what came before).
        round_trips.drop_held(self)
        super()._savepoint_rollback(sid)
