"""Relay outbox requests to the broker: a loop (``make run``), or one pass with ``--once``."""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from casino.outbox.outbox import relay_pending


class Command(BaseCommand):
    help = "Send pending outbox requests to the Celery broker (loops until stopped)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--once", action="store_true", help="one pass, then exit")

    def handle(self, *args: Any, once: bool = False, **options: Any) -> None:
        while True:
            try:
                sent = relay_pending(limit=500)
                if sent:
                    self.stdout.write(f"relayed {sent} request(s)")
            except Exception as exc:  # broker down: keep the requests, try again soon
                self.stderr.write(f"broker unavailable, will retry: {exc}")
                sent = 0
            if once:
                return
            if not sent:
                time.sleep(settings.OUTBOX_POLL_SECONDS)
