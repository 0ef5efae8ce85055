"""Relay outbox requests to the broker: a loop (``make run``), or one pass with ``--once``."""

from __future__ import annotations

import logging
import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import close_old_connections

from casino.outbox.outbox import cause, relay_pending
from casino.unavailable import unavailable_part

log = logging.getLogger("casino.outbox.relay")


class Command(BaseCommand):
    help = "Send pending outbox requests to the Celery broker (loops until stopped)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--once", action="store_true", help="one pass, then exit")

    def handle(self, *args: Any, once: bool = False, **options: Any) -> None:
        down: str | None = None  # what was unavailable at the last pass: said once, not each second
        while True:
            # Django drops broken connections after each web request; a loop must do it itself,
            # or it keeps using a connection the database closed when it restarted.
            close_old_connections()
            try:
                sent = relay_pending(limit=500)
                if sent:
                    self.stdout.write(f"relayed {sent} request(s)")
                if down is not None:
                    log.warning("relay: %s back", down)
                    down = None
            except Exception as exc:  # keep the requests, try again soon, say what failed
                part = unavailable_part(exc)
                if part is None:
                    log.exception("relay: the pass failed; trying again")
                elif part != down:
                    log.warning("relay: %s unavailable, will retry: %s", part, cause(exc))
                down = part or "relay"
                sent = 0
            if once:
                return
            if not sent:
                time.sleep(settings.OUTBOX_POLL_SECONDS)
