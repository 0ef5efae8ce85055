"""Plays side by side: their acts in the order of their times, on a manual clock or the real one."""

from __future__ import annotations

import datetime as dt
import time

from casino import clock
from casino.clock import ManualClock
from casino.simulation.timeline import Play, play_together

START = dt.datetime(2026, 3, 1, 13, 0, tzinfo=dt.UTC)


def acts(name: str, waits: list[int], log: list[tuple[str, dt.datetime]]) -> Play:
    log.append((name, clock.now()))
    for minutes in waits:
        yield dt.timedelta(minutes=minutes)
        log.append((name, clock.now()))


def test_each_act_is_done_at_its_time_in_the_order_of_the_times():
    log: list[tuple[str, dt.datetime]] = []
    with ManualClock(START):
        play_together(
            [
                (START, acts("table 1", [3, 3], log)),
                (START + dt.timedelta(minutes=1), acts("table 2", [1, 10], log)),
            ]
        )
    assert [(name, int((at - START).total_seconds() // 60)) for name, at in log] == [
        ("table 1", 0),
        ("table 2", 1),
        ("table 2", 2),
        ("table 1", 3),
        ("table 1", 6),
        ("table 2", 12),
    ]


def test_on_the_real_clock_the_order_is_kept_and_nothing_waits():
    log: list[tuple[str, dt.datetime]] = []
    began = time.monotonic()
    now = clock.now()
    play_together([(now, acts("a", [30, 30], log)), (now, acts("b", [45], log))])
    assert [name for name, _ in log] == ["a", "b", "a", "b", "a"]
    assert time.monotonic() - began < 1
    assert [at for _, at in log] == sorted(at for _, at in log)
