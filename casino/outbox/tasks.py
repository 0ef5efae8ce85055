"""Scheduled work enters through the outbox like any other request (beat only asks)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import connection, transaction

from casino.celery import app
from casino.outbox.outbox import cause, enqueue, log
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
