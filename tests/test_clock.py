"""The clock: real by default, manual while one is set, and only where it is set."""

from __future__ import annotations

import asyncio
import datetime as dt
import threading

import pytest

from casino import clock
from casino.clock import ClockError, ManualClock

START = dt.datetime(2026, 3, 1, 14, 0, tzinfo=dt.UTC)


def test_the_real_clock_by_default():
    before = dt.datetime.now(dt.UTC)
    assert clock.simulated() is None
    assert before <= clock.now() <= dt.datetime.now(dt.UTC)
    assert clock.now().tzinfo is not None


def test_a_set_clock_is_followed_and_moves_only_when_told():
    with ManualClock(START) as manual:
        assert clock.simulated() is manual
        assert clock.now() == START
        assert manual.advance(minutes=2) == START + dt.timedelta(minutes=2)
        assert clock.now() == START + dt.timedelta(minutes=2)
        clock.elapse(dt.timedelta(seconds=30))
        assert clock.now() == START + dt.timedelta(minutes=2, seconds=30)
        assert clock.wall() > START + dt.timedelta(days=30)  # the machine's time goes on


def test_two_readings_never_coincide():
    with ManualClock(START):
        readings = [clock.now() for _ in range(5)]
    assert readings == sorted(set(readings))
    assert readings[-1] - readings[0] == dt.timedelta(microseconds=4)


def test_the_real_clock_comes_back_after_the_block_even_on_an_error():
    with pytest.raises(RuntimeError), ManualClock(START):
        raise RuntimeError("mid-simulation")
    assert clock.simulated() is None
    assert clock.now() - dt.datetime.now(dt.UTC) < dt.timedelta(seconds=1)


def test_nested_clocks_give_the_outer_one_back():
    with ManualClock(START) as outer:
        outer.advance(hours=1)
        with ManualClock(START + dt.timedelta(days=1)):
            assert clock.now() == START + dt.timedelta(days=1)
        assert clock.simulated() is outer
        assert clock.now() == START + dt.timedelta(hours=1)


def test_it_goes_forward_only_and_never_past_its_limit():
    with ManualClock(START, until=START + dt.timedelta(hours=1)) as manual:
        clock.now()
        with pytest.raises(ClockError, match="does not go back"):
            manual.move_to(START - dt.timedelta(seconds=1))
        with pytest.raises(ClockError, match="does not go back"):
            manual.advance(seconds=-1)
        with pytest.raises(ClockError, match="would pass"):
            manual.advance(hours=2)
        assert manual.move_to(START + dt.timedelta(hours=1)) == START + dt.timedelta(hours=1)
    with pytest.raises(ClockError, match="no time zone"):
        ManualClock(dt.datetime(2026, 3, 1, 14, 0))


def test_elapse_on_the_real_clock_does_not_sleep():
    before = dt.datetime.now(dt.UTC)
    clock.elapse(dt.timedelta(hours=3))
    assert clock.now() - before < dt.timedelta(seconds=1)


def test_another_thread_keeps_the_real_clock_and_its_own_manual_one():
    seen: dict[str, dt.datetime] = {}
    started = threading.Event()
    release = threading.Event()

    def other() -> None:
        seen["before"] = clock.now()  # started inside our block, yet on the real clock
        with ManualClock(START + dt.timedelta(days=7)):
            started.set()
            release.wait(5)
            seen["own"] = clock.now()

    with ManualClock(START):
        thread = threading.Thread(target=other)
        thread.start()
        started.wait(5)
        assert clock.now() == START  # its clock, set meanwhile, is not ours
        release.set()
        thread.join(5)
    assert seen["before"] > START + dt.timedelta(days=30)
    assert seen["own"] == START + dt.timedelta(days=7)
    assert clock.simulated() is None


def test_asyncio_tasks_follow_the_clock_of_the_context_they_started_in():
    async def reading() -> dt.datetime:
        await asyncio.sleep(0)
        return clock.now()

    async def own(start: dt.datetime) -> dt.datetime:
        with ManualClock(start):
            await asyncio.sleep(0)
            return clock.now()

    async def main() -> tuple[dt.datetime, ...]:
        with ManualClock(START):
            inherited = asyncio.create_task(reading())
            a = asyncio.create_task(own(START + dt.timedelta(days=1)))
            b = asyncio.create_task(own(START + dt.timedelta(days=2)))
            results = await asyncio.gather(inherited, a, b)
            return (*results, clock.now())

    inherited, a, b, after = asyncio.run(main())
    assert inherited == START
    assert (a, b) == (START + dt.timedelta(days=1), START + dt.timedelta(days=2))
    assert after == START + dt.timedelta(microseconds=1)  # the tasks' clocks left ours alone
    assert clock.simulated() is None
