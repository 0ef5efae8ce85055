"""What ``make demo`` waits for once the worker runs: its verification of the audit chain, every
report of the demo rendered and its signature verified here, and the statistical detectors' runs
over the demo's séances and day (what they raised, by detector). Exits non-zero otherwise."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db.models import Count

from audit.models import Anomaly, ChainVerification
from casino.outbox.models import OutboxMessage
from casino.reports.models import Report
from casino.reports.signing import verify_pdf


class Command(BaseCommand):
    help = "Wait for the worker's chain verification and the demo's signed reports; check them."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--timeout", type=float, default=300.0, help="seconds, in all")

    def handle(self, *args: Any, timeout: float, **options: Any) -> None:
        deadline = time.monotonic() + timeout
        self._chain_verified(deadline)
        self._reports_signed(deadline)
        self._detectors_ran(deadline)

    def _chain_verified(self, deadline: float) -> None:
        message = OutboxMessage.objects.filter(task="audit.chain_verify").order_by("-id").first()
        if message is None:
            raise CommandError("no chain verification was asked for: run demo_seed first")
        while message.done_at is None:
            if time.monotonic() > deadline:
                raise CommandError(f"the worker did not run outbox request {message.pk} in time")
            time.sleep(0.5)
            message.refresh_from_db()
        last = ChainVerification.objects.order_by("-at").first()
        if last is None or not last.ok:
            raise CommandError("the worker found the audit chain BROKEN")
        self.stdout.write(f"worker ran the audit chain verification: intact, {last.events} events")

    def _reports_signed(self, deadline: float) -> None:
        for report in Report.objects.select_related("outbox").order_by("id"):
            while report.rendered_at is None:
                if report.outbox is not None and report.outbox.last_error:
                    raise CommandError(f"{report} failed: {report.outbox.last_error}")
                if time.monotonic() > deadline:
                    raise CommandError(f"{report} was not rendered in time")
                time.sleep(0.5)
                report = Report.objects.select_related("outbox").get(pk=report.pk)
            verdict = verify_pdf(report.pdf.read())
            report.pdf.close()
            if not verdict.ok:
                raise CommandError(f"{report}: signature NOT VALID {verdict.findings}")
            self.stdout.write(
                f"{report}: {report.pdf.path} ({report.pages} pages), signature valid"
            )

    def _detectors_ran(self, deadline: float) -> None:
        runs = OutboxMessage.objects.filter(task__startswith="detectors.")
        if not runs.exists():
            raise CommandError("no detector run was asked for: run demo_seed first")
        while runs.filter(done_at__isnull=True).exists():
            failed = runs.filter(done_at__isnull=True, failed_at__isnull=False).first()
            if failed is not None:
                raise CommandError(f"{failed.task} failed: {failed.last_error}")
            if time.monotonic() > deadline:
                raise CommandError("the worker did not run the detectors in time")
            time.sleep(0.5)
        raised = (
            Anomaly.objects.values_list("detector").annotate(n=Count("id")).order_by("detector")
        )
        self.stdout.write(
            f"worker ran the detectors ({runs.count()} runs); anomalies by detector: "
            + ", ".join(f"{detector} {n}" for detector, n in raised)
        )
