"""The one place logic asks for the time, so tests inject it instead of sleeping."""

from __future__ import annotations

import datetime as dt


def now() -> dt.datetime:
    """The current time, aware, in UTC."""
    return dt.datetime.now(dt.UTC)
