"""Scheduled work enters through the outbox like any other request (beat only asks)."""

from __future__ import annotations

from typing import Any

from celery.signals import worker_ready
from django.conf import settings
from django.db import connection, transaction

from casino.celery import app
from casino.outbox.outbox import cause, enqueue, log, relay_pending
from casino.unavailable import unavailable_part


@app.task(name="outbox.enqueue_scheduled", bind=True, max_retries=None)
def enqueue_scheduled(task: Any, name: str) -> None:
    """Beat's hourly ask. Without the database it cannot be written down: retried with backoff
    until it can, rather than lost until the next hour."""
    try:
        with transaction.atomic():
            enqueue(name)
    except Exception as exc:
        if unavailable_part(exc) != "database":
            raise
        connection.close_if_unusable_or_obsolete()
        wait = min(settings.OUTBOX_OUTAGE_RETRY_MAX_SECONDS, 2**task.request.retries)
        log.warning(
            "scheduled %s: database unavailable (%s); retrying in %s s", name, cause(exc), wait
        )
        raise task.retry(exc=exc, countdown=wait) from exc


@worker_ready.connect
def send_again_what_a_dead_worker_held(**kwargs: Any) -> None:
    """A worker that starts sends again the requests that were sent and are neither done, nor
    running (their row is locked), nor waiting for a scheduled retry.

    A worker killed whole (SIGKILL, the kernel out of memory) had no time to give back the task it
    held: Redis keeps it unacknowledged until its visibility timeout (an hour), and the relay
    would send it again only after ``OUTBOX_REDELIVER_AFTER_SECONDS``. When the supervisor starts
    the worker again, this sends it at once. Anything sent twice is harmless: each run claims its
    request and finds it done.
    """
    try:
        sent = relay_pending(limit=10_000, redeliver_after=0, sent_before=True)
        if sent:
            log.warning("worker ready: %s request(s) sent and never done, sent again", sent)
    except Exception as exc:  # the relay sends them later; a worker must start regardless
        log.warning("worker ready: pending requests not sent again now (%s)", cause(exc))
    finally:
        connection.close()
