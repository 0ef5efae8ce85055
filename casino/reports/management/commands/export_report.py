"""``python manage.py export_report --report ID [--out FILE.zip]``: the regulator's export."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from casino.reports.export import export_zip
from casino.reports.models import Report


class Command(BaseCommand):
    help = "Write the regulator's export (signed PDF, CSV/JSON, replay files, audit events)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--report", type=int, required=True, help="the report's id")
        parser.add_argument("--out", type=Path, default=None)

    def handle(self, *args: Any, report: int, out: Path | None, **options: Any) -> None:
        try:
            found = Report.objects.get(pk=report)
        except Report.DoesNotExist:
            raise CommandError(f"no report {report}") from None
        out = out or Path(f"export-{report}-v{found.version}.zip")
        out.write_bytes(export_zip(found))
        self.stdout.write(f"{found}: {out}")
