"""Several plays at once on one clock, and the simulated stretch of time they are played in.

A play is a generator of acts: it does an act, then yields the time until its next one (the
first act is done when it starts). ``play_together`` runs the acts of all the plays in the order
of their times, as two tables play side by side; on a manual clock each act is done at its
time, on the real clock the order is kept and nothing waits.
"""

from __future__ import annotations

import datetime as dt
import heapq
from collections.abc import Iterable, Iterator

from audit.models import AuditEvent
from casino import clock
from casino.clock import ClockError, ManualClock

Play = Iterator[dt.timedelta]


def play_together(plays: Iterable[tuple[dt.datetime, Play]]) -> None:
    """Run each ``(start, play)`` from ``start``, all acts in the order of their times."""
    manual = clock.simulated()
    queue = [(start, n, play) for n, (start, play) in enumerate(plays)]
    heapq.heapify(queue)
    while queue:
        at, n, play = heapq.heappop(queue)
        if manual is not None and at > manual.peek():
            manual.move_to(at)
        try:
            wait = next(play)
        except StopIteration:
            continue
        # An act takes no time by itself (a few readings): the play's next act comes after
        # the wait it names, counted from where the clock stands once this act is done.
        done = max(at, manual.peek()) if manual is not None else at
        heapq.heappush(queue, (done + wait, n, play))


def simulated_stretch(start: dt.datetime) -> ManualClock:
    """A manual clock from ``start`` that cannot pass the present moment, so whatever the real
    clock records afterwards comes later; refused if history already holds a later act (the
    audit chain's times would go back)."""
    last = AuditEvent.objects.order_by("-seq").values_list("at", flat=True).first()
    if last is not None and last > start:
        raise ClockError(
            f"the audit chain already holds an act of {last.isoformat()}: a simulation must "
            f"begin after it, not at {start.isoformat()}"
        )
    present = clock.wall()
    if start >= present:
        raise ClockError(f"a simulation is recorded in the past, not from {start.isoformat()}")
    return ManualClock(start, until=present)
