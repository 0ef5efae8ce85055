"""``Server-Timing``: the CPU, database and wall time the server spent on a request, in its answer.

For the load bench (``tests/bench/bench_api.py``): a client's latency mixes the network, the
wait in gunicorn's backlog and the work, and the machine is shared; only the server knows the
CPU its own thread spent on one act. ``cpu`` is ``time.thread_time()`` (a sync worker serves a
request on one thread, so that is the request's CPU in this process; PostgreSQL's is not in
it), ``db`` the wall time of its statements on the default connection and how many there were
(the wait for PostgreSQL: the round trips and the commit), ``app`` the wall time from here to
the answer; in milliseconds, the header's standard form
(``cpu;dur=4.21, db;dur=3.10;desc="12 queries", app;dur=9.87``).

Off unless ``CASINO_SERVER_TIMING`` is set: the middleware then takes itself out of the chain
when the server starts (``MiddlewareNotUsed``), so production pays nothing for it, and a
client is not told how long the server thinks.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.exceptions import MiddlewareNotUsed
from django.db import connection
from django.http import HttpRequest, HttpResponse


class ServerTiming:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        if not settings.SERVER_TIMING:
            raise MiddlewareNotUsed
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        db = _Statements()
        cpu, wall = time.thread_time(), time.perf_counter()
        with connection.execute_wrapper(db):
            response = self.get_response(request)
        cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
        response["Server-Timing"] = (
            f"cpu;dur={cpu * 1000:.2f}, "
            f'db;dur={db.seconds * 1000:.2f};desc="{db.count} queries", '
            f"app;dur={wall * 1000:.2f}"
        )
        return response


class _Statements:
    """An execute wrapper that counts the statements of a request and their wall time."""

    def __init__(self) -> None:
        self.count, self.seconds = 0, 0.0

    def __call__(self, execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            self.seconds += time.perf_counter() - started
            self.count += 1
