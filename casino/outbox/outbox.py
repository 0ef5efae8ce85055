"""The transactional outbox: ask for background work inside a transaction; a relay delivers it.

Why our own relay (about a hundred lines) rather than django-celery-outbox: that package pulls in
datadog, sentry-sdk and structlog, and it marks a message done when the broker accepts it, whereas
we need the task itself to mark it done in the transaction of its work, which is what makes a
redelivered task harmless and lets us send again what a broker without persistence lost.

Three things can fail, and none loses a request or holds a person:

- **The broker.** An act never talks to it: after commit it hands the request's id to this
  process's sender thread and answers. The sender tries once, failing fast; when the broker does
  not answer, the relay (``manage.py relay_outbox``) sends the request when it is back.
- **The database, under a task.** A run that cannot reach the database cannot record its
  failure; the worker retries it with backoff, without limit, and the first run that reaches the
  database again writes what happened (``attempts``, ``last_error``) before doing its work.
- **The work.** A run that fails (a missing signing key, a bug) is recorded and retried with
  backoff ``OUTBOX_TASK_RETRIES`` times; then it is marked failed, and the relay sends it again
  after ``OUTBOX_REDELIVER_AFTER_SECONDS``.
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F

from casino import clock
from casino.celery import app
from casino.outbox.models import OutboxMessage
from casino.unavailable import unavailable_part

log = logging.getLogger(__name__)

TASKS: dict[str, Callable[..., Any]] = {}


def enqueue(task: str, **kwargs: Any) -> OutboxMessage:
    """Ask for ``task(**kwargs)`` to run after the current transaction commits.

    A rollback takes the request with it. After commit the request's id goes to this process's
    sender thread (no waiting on the broker); if the broker does not take it, the relay does.
    """
    if task not in TASKS:
        raise KeyError(f"unknown outbox task {task!r}")
    message = OutboxMessage.objects.create(task=task, kwargs=kwargs, created_at=clock.now())
    transaction.on_commit(lambda: sender().submit(message.pk))
    return message


def cause(error: BaseException) -> str:
    """One line naming an error: its type and the first line of its message."""
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__


def publish(messages: Iterable[OutboxMessage]) -> None:
    """Hand the messages to the broker, or raise at once: one connection, no retries (the relay
    is the patient one). Without ``max_retries=0`` kombu keeps retrying a refused connection for
    seconds."""
    with app.connection_for_write() as broker:
        broker.ensure_connection(max_retries=0)
        for message in messages:
            app.send_task(
                message.task,
                args=[message.pk],
                retry=False,
                connection=broker,
                queue=settings.CELERY_TASK_DEFAULT_QUEUE,
            )


def relay_pending(
    *,
    limit: int = 100,
    only: Iterable[int] | None = None,
    redeliver_after: float | None = None,
    sent_before: bool = False,
) -> int:
    """Send pending requests to the broker; return how many were sent.

    Pending: never sent, or sent more than ``redeliver_after`` seconds ago
    (``OUTBOX_REDELIVER_AFTER_SECONDS`` by default) and still not done, unless the worker has
    scheduled its retry for later. Rows are claimed with SKIP LOCKED so several relays (or a relay
    and the sender thread) never send the same request twice at once, and a request whose task is
    running (it holds its row) is not sent again. A broker error stops the pass and leaves the
    rows pending. ``sent_before``: only requests that were sent before (sent again).
    """
    # The machine's time, even under a simulation's clock: ``sent_at`` is compared with what
    # the relay and the worker, other processes on the real clock, read.
    now = clock.wall()
    if redeliver_after is None:
        redeliver_after = settings.OUTBOX_REDELIVER_AFTER_SECONDS
    stale = now - dt.timedelta(seconds=redeliver_after)
    with transaction.atomic():
        pending = (
            OutboxMessage.objects.select_for_update(skip_locked=True)
            .filter(done_at__isnull=True)
            .exclude(sent_at__gt=stale)
            .exclude(retry_at__gt=now)
        )
        if only is not None:
            pending = pending.filter(pk__in=list(only))
        if sent_before:
            pending = pending.filter(sent_at__isnull=False)
        messages = list(pending.order_by("id")[:limit])
        if not messages:
            return 0
        publish(messages)
        for message in messages:
            OutboxMessage.objects.filter(pk=message.pk).update(
                sent_at=now, send_count=message.send_count + 1
            )
    return len(messages)


class Sender:
    """This process's sender: a daemon thread that sends what acts committed, so that no act
    waits on the broker. After a broker failure it leaves everything to the relay for
    ``PAUSE`` seconds rather than trying each request again."""

    PAUSE = 5.0

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.queue: queue.SimpleQueue[int] = queue.SimpleQueue()
        self.paused_until = 0.0
        self.thread = threading.Thread(target=self._run, name="outbox-sender", daemon=True)
        self.thread.start()

    def submit(self, message_id: int) -> None:
        self.queue.put(message_id)

    def _batch(self) -> list[int]:
        ids = [self.queue.get()]
        while not self.queue.empty() and len(ids) < 100:
            ids.append(self.queue.get())
        return ids

    def _run(self) -> None:
        while True:
            ids = self._batch()
            if time.monotonic() < self.paused_until:
                continue  # the relay sends them
            try:
                relay_pending(only=ids)
            except Exception as exc:
                part = unavailable_part(exc) or "sending"
                if part == "broker":
                    self.paused_until = time.monotonic() + self.PAUSE
                log.warning(
                    "outbox messages %s not sent now, %s unavailable (%s); the relay will send "
                    "them",
                    ids,
                    part,
                    cause(exc),
                    exc_info=part == "sending",
                )
            finally:
                if self.queue.empty():
                    # No idle connection per process: a thread's connection is its own.
                    connection.close()


_sender: Sender | None = None
_sender_lock = threading.Lock()


def sender() -> Sender:
    """The sender of this process (a new one after a fork: threads do not survive it)."""
    global _sender
    with _sender_lock:
        if _sender is None or _sender.pid != os.getpid():
            _sender = Sender()
        return _sender


def _backoff(tries: int, cap: int) -> int:
    return int(min(cap, 2**tries))


def _record_failure(message_id: int, error: str, *, runs: int, gives_up: bool, wait: int) -> None:
    """What failed runs did, in a transaction of its own (the work's was rolled back)."""
    now = clock.wall()  # a schedule for the relay, which reads the real clock
    OutboxMessage.objects.filter(pk=message_id, done_at__isnull=True).update(
        attempts=F("attempts") + runs,
        last_error=error[:2000],
        retry_at=None if gives_up else now + dt.timedelta(seconds=wait),
        failed_at=now if gives_up else None,
    )


def outbox_task(name: str, **options: Any) -> Callable[[Callable[..., Any]], Any]:
    """Make ``fn(**kwargs)`` an outbox task named ``name``: run once per request, however often
    the broker delivers it.

    The task claims its request row (``SELECT … FOR UPDATE``), runs ``fn`` and marks the request
    done in one transaction. A second delivery waits for the first, then finds it done. A worker
    killed mid-way leaves the row unclaimed and the message is delivered again (acks late, reject
    on worker lost). A failure rolls the work back; the module's docstring says what follows.
    ``max_retries``: retries of a failing work (``OUTBOX_TASK_RETRIES`` by default); the runs the
    database's outages stop are retried without limit and never count.
    """
    retries = options.pop("max_retries", None)

    def register(fn: Callable[..., Any]) -> Any:
        TASKS[name] = fn

        @app.task(
            name=name,
            bind=True,
            acks_late=True,
            reject_on_worker_lost=True,
            max_retries=None,  # our own limits below
            **options,
        )
        @functools.wraps(fn)
        def run(
            task: Any, message_id: int, outage: str = "", unrecorded: int = 0, outage_runs: int = 0
        ) -> None:
            """``outage``: why the last ``unrecorded`` runs could not reach the database (they
            are written by the first run that does); ``outage_runs``: all the runs of this
            delivery that the database stopped (so that they do not count as failures)."""

            def retry_after_outage(error: BaseException) -> Exception:
                # Nothing can be written now: drop the broken connection, try again later, and
                # carry what happened to the run that reaches the database.
                connection.close_if_unusable_or_obsolete()
                wait = _backoff(unrecorded, settings.OUTBOX_OUTAGE_RETRY_MAX_SECONDS)
                log.warning(
                    "%s (outbox message %s): database unavailable (%s); retrying in %s s",
                    name,
                    message_id,
                    cause(error),
                    wait,
                )
                return task.retry(  # type: ignore[no-any-return]
                    exc=error,
                    countdown=wait,
                    kwargs={
                        "outage": f"database unavailable: {cause(error)}",
                        "unrecorded": unrecorded + 1,
                        "outage_runs": outage_runs + 1,
                    },
                )

            try:
                if unrecorded:
                    # The database answers again (or this raises): first, what it stopped.
                    _record_failure(message_id, outage, runs=unrecorded, gives_up=False, wait=0)
                    log.info(
                        "%s (outbox message %s): database back; %s run(s) it stopped recorded",
                        name,
                        message_id,
                        unrecorded,
                    )
                    unrecorded = 0
                with transaction.atomic():
                    message = OutboxMessage.objects.select_for_update().get(pk=message_id)
                    if message.done_at is not None:
                        log.info(
                            "outbox message %s already done; duplicate delivery ignored", message_id
                        )
                        return
                    fn(**message.kwargs)
                    OutboxMessage.objects.filter(pk=message_id).update(
                        done_at=clock.wall(),  # the schedule's time, as sent_at
                        attempts=message.attempts + 1,
                        last_error="",
                        retry_at=None,
                        failed_at=None,
                    )
            except OutboxMessage.DoesNotExist:
                log.warning("outbox message %s does not exist (rolled back?)", message_id)
                return
            except Exception as exc:
                if unavailable_part(exc) == "database":
                    raise retry_after_outage(exc) from exc
                limit = settings.OUTBOX_TASK_RETRIES if retries is None else retries
                tries = task.request.retries - outage_runs  # this delivery's failed runs before
                gives_up = tries >= limit
                wait = _backoff(tries, 600)
                try:
                    _record_failure(message_id, repr(exc), runs=1, gives_up=gives_up, wait=wait)
                except Exception as recording:
                    if unavailable_part(recording) != "database":
                        raise
                    raise retry_after_outage(recording) from exc
                if gives_up:
                    log.error(
                        "%s (outbox message %s) failed %s times, giving up until the relay sends "
                        "it again: %s",
                        name,
                        message_id,
                        tries + 1,
                        cause(exc),
                    )
                    return
                log.warning(
                    "%s (outbox message %s) failed (%s); retrying in %s s",
                    name,
                    message_id,
                    cause(exc),
                    wait,
                )
                raise task.retry(
                    exc=exc, countdown=wait, kwargs={"outage_runs": outage_runs}
                ) from exc

        return run

    return register
