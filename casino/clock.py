"""The one place logic asks for the time, so tests and simulations set it instead of sleeping.

``now()`` is the time of the house's acts: the real clock, or a ``ManualClock`` while one is set
(``with ManualClock(start) as c: ... c.advance(minutes=2)``), which the simulator and the demo use
to record a day of play in seconds and tests use to stand at a given moment. A manual clock is
set for the current context only (a ``ContextVar``): the thread or asyncio task that sets it, and
the tasks it starts, follow it; other threads (the outbox's sender, a web server's workers) and
other processes (the worker, the relay) keep the real time.

``wall()`` is the machine's time, never simulated: for what is compared with other processes'
clocks or with the world's (the outbox's schedule, login throttling, certificates), where a
simulated time would schedule nothing or open a lockout window.

Only the standard library here: ``casino.runtime`` and the engines' tests may import it.
"""

from __future__ import annotations

import datetime as dt
import threading
from contextvars import ContextVar, Token
from types import TracebackType

_RESOLUTION = dt.timedelta(microseconds=1)


class ClockError(ValueError):
    """A manual clock asked to go back, to pass its limit, or given a naive time."""


def wall() -> dt.datetime:
    """The machine's time, aware, in UTC, whatever clock is set."""
    return dt.datetime.now(dt.UTC)


def now() -> dt.datetime:
    """The current time, aware, in UTC: the manual clock's while one is set here."""
    manual = _manual.get()
    return wall() if manual is None else manual.now()


def simulated() -> ManualClock | None:
    """The manual clock set in this context, or None on the real clock."""
    return _manual.get()


def elapse(duration: dt.timedelta) -> None:
    """``duration`` passes between two acts: a manual clock moves on; the real one moves by
    itself, so this does nothing there (a simulation played in real time does not sleep)."""
    manual = _manual.get()
    if manual is not None:
        manual.advance(duration)


def _aware(moment: dt.datetime, name: str) -> dt.datetime:
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ClockError(f"{name} {moment!r} has no time zone")
    return moment.astimezone(dt.UTC)


class ManualClock:
    """A clock that moves only when told, forward only, and never past ``until``.

    Like a real clock's, two readings never coincide: each is at least a microsecond after the
    previous one, so acts recorded one after the other keep their order by time.

    >>> start = dt.datetime(2026, 3, 1, 14, 0, tzinfo=dt.UTC)
    >>> with ManualClock(start) as c:
    ...     c.advance(minutes=2) == start + dt.timedelta(minutes=2)
    True
    """

    def __init__(self, start: dt.datetime, *, until: dt.datetime | None = None) -> None:
        self._time = _aware(start, "start")
        self.until = None if until is None else _aware(until, "until")
        self._last: dt.datetime | None = None
        self._tokens: list[Token[ManualClock | None]] = []
        # Tasks that copied the context share this clock: one reading or move at a time.
        self._lock = threading.Lock()
        self._check(self._time)

    def _check(self, moment: dt.datetime) -> None:
        if self.until is not None and moment > self.until:
            raise ClockError(f"the manual clock would pass {self.until.isoformat()}")

    def now(self) -> dt.datetime:
        with self._lock:
            reading = (
                self._time if self._last is None else max(self._time, self._last + _RESOLUTION)
            )
            self._last = reading
            return reading

    def peek(self) -> dt.datetime:
        """Where the clock stands, without taking a reading."""
        with self._lock:
            return self._time if self._last is None else max(self._time, self._last)

    def advance(self, by: dt.timedelta | None = None, **units: float) -> dt.datetime:
        """Move on by ``by`` (or ``minutes=2``, ``seconds=30``…); return where it stands."""
        step = (by or dt.timedelta()) + dt.timedelta(**units)
        if step < dt.timedelta():
            raise ClockError(f"a clock does not go back ({step})")
        with self._lock:
            moved = max(self._time, self._last or self._time) + step
            self._check(moved)
            self._time = moved
            return moved

    def move_to(self, moment: dt.datetime) -> dt.datetime:
        """Stand at ``moment``, which may not be before the last reading."""
        moment = _aware(moment, "moment")
        with self._lock:
            standing = max(self._time, self._last or self._time)
            if moment < standing:
                raise ClockError(
                    f"a clock does not go back: {moment.isoformat()} is before "
                    f"{standing.isoformat()}"
                )
            self._check(moment)
            self._time = moment
            return moment

    def __enter__(self) -> ManualClock:
        self._tokens.append(_manual.set(self))
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        _manual.reset(self._tokens.pop())


_manual: ContextVar[ManualClock | None] = ContextVar("casino_manual_clock", default=None)
