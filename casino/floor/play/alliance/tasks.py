"""Alliance's background work: the collusion watch when a cercle séance closes."""

from __future__ import annotations

from casino.floor.play.alliance.collusion import collusion_watch
from casino.outbox.outbox import outbox_task


@outbox_task("alliance.collusion_watch")
def collusion(shift_id: int) -> None:
    collusion_watch(shift_id)
