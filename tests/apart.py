"""Work in a thread of its own, for a test whose own thread cannot do it."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


def apart(work: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """``work(*args, **kwargs)`` in a thread of its own, its database connection closed after.
    pyHanko signs and verifies a PDF with ``asyncio.run``, which cannot run in the test's thread,
    where Playwright's event loop runs (the browser tests and, in the same run, the
    transactional tests after them)."""

    def run() -> T:
        from django.db import connections

        try:
            return work(*args, **kwargs)
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(run).result()
