"""Background work of the police register."""

from __future__ import annotations

from casino.outbox.outbox import outbox_task
from casino.police.services import follow_ups_overdue


@outbox_task("police.follow_ups_overdue")
def follow_ups_check() -> None:
    follow_ups_overdue()
