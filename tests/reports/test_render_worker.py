"""Reports rendered by a real Celery worker over a real Redis: once per version, whatever the
broker or the worker does."""

from __future__ import annotations

import io
import os
import re
import signal
import time

import pytest
from django.core.management import call_command

from audit.models import AuditEvent
from casino.celery import app
from casino.reports.models import Report
from casino.reports.services import PAUSE_ENV
from tests.actors import login_admin
from tests.conftest import Worker, service_env, wait_until

pytestmark = pytest.mark.services


def rendered(report: Report) -> bool:
    return Report.objects.get(pk=report.pk).rendered_at is not None


def close_a_seance() -> Report:
    call_command("simulate", tables=1, hours=0.1, seed=9, stdout=io.StringIO())
    return Report.objects.get()


def test_a_closed_seance_is_rendered_after_commit_and_once_if_delivered_twice(
    cast, celery_worker, posted
):
    report = close_a_seance()
    assert wait_until(lambda: rendered(report), timeout=90), celery_worker.log.read_text()[-3000:]
    for _ in range(2):  # the broker delivers the same request again
        app.send_task("reports.render", args=[report.outbox_id], queue=celery_worker.queue)
    assert wait_until(
        lambda: celery_worker.log.read_text().count("duplicate delivery ignored") == 2
    )
    assert AuditEvent.objects.filter(action="report.rendered").count() == 1
    only = Report.objects.get()
    assert os.listdir(os.path.dirname(only.pdf.path)) == [f"shift-{only.shift_id}-v1.pdf"]


def test_a_worker_killed_mid_render_leaves_one_report(transactional_db, cast, posted, unique_queue):
    worker = Worker(service_env(**{PAUSE_ENV: "3"}), unique_queue)
    try:
        report = close_a_seance()
        assert wait_until(lambda: "pausing" in worker.log.read_text(), timeout=90)
        pid = int(re.search(r"rendering report \d+ in (\d+)", worker.log.read_text())[1])
        os.kill(pid, signal.SIGKILL)  # the pool process dies holding the claim, mid-render
        assert wait_until(lambda: rendered(report), timeout=90), worker.log.read_text()[-3000:]
        log = worker.log.read_text()
        assert "WorkerLostError" in log or "SIGKILL" in log
        assert log.count("pausing") == 2  # rendered again from the start, by another process
    finally:
        worker.stop()
    time.sleep(0.5)
    assert Report.objects.count() == 1
    assert AuditEvent.objects.filter(action="report.rendered").count() == 1
    assert Report.objects.get().outbox.attempts == 1


def test_a_failed_render_is_retried_then_shown_failed_with_its_cause_in_the_admin(
    transactional_db, cast, posted, unique_queue, tmp_path
):
    from django.test import Client

    broken = service_env(
        REPORT_SIGNING_PKCS12=str(tmp_path / "missing.p12"), OUTBOX_TASK_RETRIES="1"
    )
    worker = Worker(broken, unique_queue)
    try:
        report = close_a_seance()
        # Tried, retried once after its backoff, then given up: the true state, with the cause.
        assert wait_until(lambda: Report.objects.get(pk=report.pk).status == "failed", timeout=90)
    finally:
        worker.stop()
    outbox = Report.objects.get(pk=report.pk).outbox
    assert outbox.attempts == 2
    assert "no signing key" in outbox.last_error
    assert "retrying in 1 s" in worker.log.read_text()
    client = Client()
    login_admin(client, cast.inspecteur)
    page = client.get(f"/admin/reports/report/{report.pk}/change/").content.decode()
    assert "échec (essais : 2, le dernier le " in page
    assert "no signing key" in page
    # With the key back, the relay's next sending renders it.
    worker = Worker(service_env(), unique_queue)
    try:
        from casino.celery import app as celery

        celery.send_task("reports.render", args=[report.outbox_id], queue=unique_queue)
        assert wait_until(lambda: rendered(report), timeout=90)
    finally:
        worker.stop()
    assert Report.objects.get(pk=report.pk).status == "signed"


def test_the_admin_shows_a_render_waiting_for_its_retry(cast, posted, tmp_path):
    """Between two runs of a failed render: when it runs again, after how many failures, why."""
    from django.test import Client

    from casino.outbox.outbox import _record_failure

    report = close_a_seance()
    assert report.status == "pending"
    _record_failure(report.outbox_id, "OSError('disk full')", runs=1, gives_up=False, wait=4)
    client = Client()
    login_admin(client, cast.inspecteur)
    page = client.get(f"/admin/reports/report/{report.pk}/change/").content.decode()
    assert Report.objects.get(pk=report.pk).status == "retrying"
    assert "nouvel essai le " in page
    assert "(échecs : 1)" in page
    assert "disk full" in page
