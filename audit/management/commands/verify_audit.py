"""Recompute the audit chain: exit 0 with the verified head, or exit 1 naming the first broken event."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from audit.chain import verify_chain


class Command(BaseCommand):
    help = "Verify the hash chain of the audit log from the first event to the head."

    def handle(self, *args: Any, **options: Any) -> None:
        result = verify_chain()
        if result.ok:
            self.stdout.write(f"{result.describe()} ({result.seconds:.2f} s)")
            return
        self.stderr.write(result.describe())
        raise SystemExit(1)
