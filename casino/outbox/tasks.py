"""Scheduled work enters through the outbox like any other request (beat only asks)."""

from __future__ import annotations

from django.db import transaction

from casino.celery import app
from casino.outbox.outbox import enqueue


@app.task(name="outbox.enqueue_scheduled")
def enqueue_scheduled(task: str) -> None:
    with transaction.atomic():
        enqueue(task)
