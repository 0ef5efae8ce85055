"""The transactional outbox: ask for background work inside a transaction; a relay delivers it.

Why our own relay (about a hundred lines) rather than django-celery-outbox: that package pulls in
datadog, sentry-sdk and structlog, and it marks a message done when the broker accepts it, whereas
we need the task itself to mark it done in the transaction of its work, which is what makes a
redelivered task harmless and lets us send again what a broker without persistence lost.
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import transaction

from casino import clock
from casino.celery import app
from casino.outbox.models import OutboxMessage

log = logging.getLogger(__name__)

TASKS: dict[str, Callable[..., Any]] = {}


def enqueue(task: str, **kwargs: Any) -> OutboxMessage:
    """Ask for ``task(**kwargs)`` to run after the current transaction commits.

    A rollback takes the request with it. After commit the request is sent at once if the broker
    answers; if it does not, the relay sends it when the broker is back.
    """
    if task not in TASKS:
        raise KeyError(f"unknown outbox task {task!r}")
    message = OutboxMessage.objects.create(task=task, kwargs=kwargs, created_at=clock.now())
    transaction.on_commit(lambda: _send_now(message.pk))
    return message


def _send_now(message_id: int) -> None:
    try:
        relay_pending(only=message_id)
    except Exception:  # the relay will retry; the act that asked has committed already
        log.warning(
            "outbox message %s not sent now; the relay will send it", message_id, exc_info=True
        )


def relay_pending(*, limit: int = 100, only: int | None = None) -> int:
    """Send pending requests to the broker; return how many were sent.

    Rows are claimed with SKIP LOCKED so several relays (or a relay and the fast path) never send
    the same request twice at once. A broker error stops the pass and leaves the rows pending.
    """
    now = clock.now()
    stale = now - dt.timedelta(seconds=settings.OUTBOX_REDELIVER_AFTER_SECONDS)
    sent = 0
    with transaction.atomic():
        pending = (
            OutboxMessage.objects.select_for_update(skip_locked=True)
            .filter(done_at__isnull=True)
            .exclude(sent_at__gt=stale)
        )
        if only is not None:
            pending = pending.filter(pk=only)
        for message in pending.order_by("id")[:limit]:
            app.send_task(
                message.task,
                args=[message.pk],
                retry=False,
                queue=settings.CELERY_TASK_DEFAULT_QUEUE,
            )
            OutboxMessage.objects.filter(pk=message.pk).update(
                sent_at=now, send_count=message.send_count + 1, last_error=""
            )
            sent += 1
    return sent


def outbox_task(name: str, **options: Any) -> Callable[[Callable[..., Any]], Any]:
    """Make ``fn(**kwargs)`` an outbox task named ``name``: run once per request, however often
    the broker delivers it.

    The task claims its request row (``SELECT … FOR UPDATE``), runs ``fn`` and marks the request
    done in one transaction. A second delivery waits for the first, then finds it done. A failure
    rolls the work back and Celery retries with backoff; a worker killed mid-way leaves the row
    unclaimed and the message is delivered again (acks late, reject on worker lost).
    """

    def register(fn: Callable[..., Any]) -> Any:
        TASKS[name] = fn

        @app.task(
            name=name,
            bind=True,
            acks_late=True,
            reject_on_worker_lost=True,
            max_retries=options.pop("max_retries", 8),
            **options,
        )
        @functools.wraps(fn)
        def run(task: Any, message_id: int) -> None:
            try:
                with transaction.atomic():
                    message = OutboxMessage.objects.select_for_update().get(pk=message_id)
                    if message.done_at is not None:
                        log.info(
                            "outbox message %s already done; duplicate delivery ignored", message_id
                        )
                        return
                    fn(**message.kwargs)
                    OutboxMessage.objects.filter(pk=message_id).update(
                        done_at=clock.now(), attempts=message.attempts + 1, last_error=""
                    )
            except OutboxMessage.DoesNotExist:
                log.warning("outbox message %s does not exist (rolled back?)", message_id)
            except Exception as exc:
                OutboxMessage.objects.filter(pk=message_id).update(last_error=repr(exc)[:2000])
                raise task.retry(exc=exc, countdown=min(600, 2**task.request.retries)) from exc

        return run

    return register
