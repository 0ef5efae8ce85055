"""The detectors' runs in the worker, asked through the outbox: when a séance closes (in the act
that closes it) and when a gaming day is over (with its daily register, ``registers_due``)."""

from __future__ import annotations

import datetime as dt

from casino.detectors.frame import run_day_end, run_seance_close
from casino.floor.models import Shift
from casino.outbox.outbox import outbox_task


@outbox_task("detectors.seance_closed")
def seance_closed(shift_id: int) -> None:
    run_seance_close(Shift.objects.select_related("table").get(pk=shift_id))


@outbox_task("detectors.day_end")
def day_end(day: str) -> None:
    run_day_end(dt.date.fromisoformat(day))
