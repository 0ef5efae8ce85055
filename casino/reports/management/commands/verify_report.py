"""``python manage.py verify_report FILE.pdf``: validate a report's signature, certificate chain
and integrity with pyHanko, and find it among the recorded reports; say what was found; exit 0 if
all holds, 1 if not."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from casino.reports.models import Report
from casino.reports.signing import verify_pdf


class Command(BaseCommand):
    help = "Validate a signed report (signature, chain of trust, integrity). Exit 0 or 1."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument(
            "--trust-root",
            type=Path,
            action="append",
            help="a CA certificate (PEM or DER); default: REPORT_TRUST_ROOTS",
        )

    def handle(self, *args: Any, file: Path, trust_root: list[Path] | None, **options: Any) -> None:
        try:
            data = file.read_bytes()
        except OSError as exc:
            raise CommandError(f"{file}: {exc.strerror or exc}") from None
        result = verify_pdf(data, trust_root)
        for finding in result.findings:
            self.stdout.write(finding)
        digest = hashlib.sha256(data).hexdigest()
        recorded = Report.objects.filter(sha256=digest).first()
        self.stdout.write(
            f"sha256 {digest}: "
            + (
                f"recorded for {recorded} in the audit chain"
                if recorded
                else "not a recorded report"
            )
        )
        # A valid signature on a document the house never recorded (signed with a stolen or
        # development key, or a report edited and signed again) proves nothing: not valid.
        valid = result.ok and recorded is not None
        self.stdout.write("VALID" if valid else "NOT VALID")
        sys.exit(0 if valid else 1)
