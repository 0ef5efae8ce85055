"""``python manage.py init_signing``: a development CA and signing certificate under var/keys/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from casino.reports.signing import init_signing, keys_dir


class Command(BaseCommand):
    help = "Create a development CA and the casino's signing certificate under var/keys/."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--dir", type=Path, default=None)
        parser.add_argument("--force", action="store_true", help="replace existing keys")

    def handle(self, *args: Any, dir: Path | None, force: bool, **options: Any) -> None:
        paths = init_signing(dir or keys_dir(), organisation=settings.CASINO_NAME, force=force)
        for what, path in paths.items():
            self.stdout.write(f"{what}: {path}")
