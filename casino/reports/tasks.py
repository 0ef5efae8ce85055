"""Background work of the reports: render a requested version; ask for the day's registers."""

from __future__ import annotations

from typing import Any

from casino.outbox.outbox import outbox_task
from casino.reports.services import registers_due, report_render


@outbox_task("reports.render")
def render(**kwargs: Any) -> None:
    report_render(**kwargs)


@outbox_task("reports.registers_due")
def registers() -> None:
    registers_due()
