"""``manage.py health``: exit 0 when the database and the broker answer, 1 (naming what does not)
otherwise. The health check of processes that serve no HTTP (the relay, beat) in a container."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from casino.health import broker_check, database_check


class Command(BaseCommand):
    help = "Check that the database and the broker answer (exit 1 naming what does not)."

    def handle(self, *args: Any, **options: Any) -> None:
        failures = {
            part: cause
            for part, cause in (("database", database_check()), ("broker", broker_check()))
            if cause is not None
        }
        if failures:
            raise CommandError(
                "; ".join(f"{part} unavailable ({cause})" for part, cause in failures.items())
            )
        self.stdout.write("database ok, broker ok")
