"""The outbox with a real Celery worker over a real Redis."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys

import pytest
from django.db import transaction

from audit.models import ChainVerification
from casino import clock
from casino.celery import app
from casino.clock import ManualClock
from casino.outbox.models import OutboxMessage
from casino.outbox.outbox import enqueue, relay_pending
from casino.runtime import EmbeddedRedis, free_port
from tests.conftest import ROOT, Worker, service_env, wait_until

pytestmark = pytest.mark.services


def done(message_id: int) -> bool:
    return OutboxMessage.objects.get(pk=message_id).done_at is not None


def test_rollback_sends_nothing_and_a_commit_runs_on_the_worker(celery_worker):
    with pytest.raises(RuntimeError), transaction.atomic():
        enqueue("audit.chain_verify")
        raise RuntimeError("the act failed")
    assert OutboxMessage.objects.count() == 0

    with transaction.atomic():
        message = enqueue("audit.chain_verify")
    assert wait_until(lambda: done(message.pk))
    assert ChainVerification.objects.count() == 1
    assert ChainVerification.objects.get().ok


def test_a_task_delivered_twice_does_its_work_once(celery_worker):
    with transaction.atomic():
        message = enqueue("audit.chain_verify")
    for _ in range(2):  # the broker delivers the same request again
        app.send_task("audit.chain_verify", args=[message.pk], queue=celery_worker.queue)
    assert wait_until(
        lambda: celery_worker.log.read_text().count("duplicate delivery ignored") == 2
    )
    assert done(message.pk)
    assert ChainVerification.objects.count() == 1
    assert OutboxMessage.objects.get(pk=message.pk).attempts == 1


def test_scheduled_work_enters_through_the_outbox(celery_worker):
    app.send_task(
        "outbox.enqueue_scheduled", args=["audit.chain_verify"], queue=celery_worker.queue
    )
    assert wait_until(lambda: ChainVerification.objects.count() == 1)
    assert OutboxMessage.objects.get().task == "audit.chain_verify"


def test_a_simulations_clock_stamps_the_request_but_not_its_schedule(db, unique_queue):
    yesterday = clock.wall() - dt.timedelta(days=1)
    with ManualClock(yesterday):
        # In a test's transaction nothing commits: the relay below is the only sender.
        message = enqueue("audit.chain_verify")
        assert relay_pending(only=[message.pk]) == 1
    sent = OutboxMessage.objects.get(pk=message.pk)
    assert sent.created_at == yesterday  # asked by an act of the simulated day
    # Sent by the machine's time, which the relay and the worker compare with theirs: so it is
    # not taken for a request sent a day ago and never done, and sent again at once.
    assert sent.sent_at > yesterday + dt.timedelta(hours=23)
    assert relay_pending(only=[message.pk], redeliver_after=600) == 0


ACT = """
from django.db import transaction
from audit.chain import audit_record
from casino.outbox.outbox import enqueue
for n in range(3):
    with transaction.atomic():
        audit_record(actor=None, action="test.act", payload={"n": n})
        enqueue("audit.chain_verify")
"""


def test_broker_outage_loses_nothing(transactional_db, unique_queue, tmp_path):
    port = free_port()
    broker = EmbeddedRedis(
        data=tmp_path / "redis",
        url_file=tmp_path / "redis.url",
        pid_file=tmp_path / "redis.pid",
        port=port,
    )
    env = service_env(REDIS_URL=f"redis://127.0.0.1:{port}/0")

    # The broker is down: the acts still commit, their requests wait in the outbox.
    act = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", ACT],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert act.returncode == 0, act.stderr
    pending = list(OutboxMessage.objects.order_by("id"))
    assert len(pending) == 3
    assert all(m.sent_at is None for m in pending)

    broker.start()
    worker = Worker(env, unique_queue)
    try:
        relay = subprocess.run(
            [sys.executable, "manage.py", "relay_outbox", "--once"],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert relay.returncode == 0, relay.stderr
        assert "relayed 3 request(s)" in relay.stdout
        assert wait_until(lambda: all(done(m.pk) for m in pending))
    finally:
        worker.stop()
        broker.stop()
    assert ChainVerification.objects.count() == 3
    assert [m.send_count for m in OutboxMessage.objects.all()] == [1, 1, 1]


def test_relay_sends_again_what_the_broker_lost(transactional_db, unique_queue, settings):
    """Sent long ago, never done: a Redis restart without persistence lost it."""
    settings.OUTBOX_REDELIVER_AFTER_SECONDS = 1
    with transaction.atomic():
        message = enqueue("audit.chain_verify")  # sent now, to a queue nobody reads
    # By this process's sender thread, a moment after the commit.
    assert wait_until(lambda: OutboxMessage.objects.get(pk=message.pk).send_count == 1)
    assert relay_pending() == 0  # too recent to be presumed lost
    OutboxMessage.objects.filter(pk=message.pk).update(
        sent_at=OutboxMessage.objects.get(pk=message.pk).created_at.replace(year=2000)
    )
    assert relay_pending() == 1
    assert OutboxMessage.objects.get(pk=message.pk).send_count == 2


def relay_once(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", "relay_outbox", "--once"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_relay_names_what_is_unavailable(transactional_db, unique_queue):
    """The database down is not "broker unavailable", and the other way round."""
    nowhere = free_port()
    database_down = service_env(DATABASE_URL=f"postgresql://nobody@127.0.0.1:{nowhere}/none")
    relay = relay_once(database_down)
    assert relay.returncode == 0, relay.stderr
    assert "relay: database unavailable, will retry: OperationalError" in relay.stderr
    assert "broker" not in relay.stderr

    with transaction.atomic():
        message = enqueue("audit.chain_verify")
    assert wait_until(lambda: OutboxMessage.objects.get(pk=message.pk).send_count == 1)
    broker_down = service_env(REDIS_URL=f"redis://127.0.0.1:{nowhere}/0")
    OutboxMessage.objects.update(sent_at=None, send_count=0)  # as if never sent
    relay = relay_once(broker_down)
    assert relay.returncode == 0, relay.stderr
    assert "relay: broker unavailable, will retry: OperationalError" in relay.stderr
    assert "database" not in relay.stderr
    assert OutboxMessage.objects.get().sent_at is None
