"""Appending to the audit chain, and verifying it.

``audit_record`` is the only writer of ``AuditEvent``. Services call it inside their own
transaction, after their checks and writes, so the event commits or rolls back with the act.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import psycopg
from django.db import connection, models, transaction

from audit.canonical import (
    GENESIS_HASH,
    VERSION,
    canonical_json,
)
from audit.models import AuditEvent, ChainHead
from casino import clock
from casino.round_trips import USING, Sent, hold, send_held


class AuditOutsideTransaction(RuntimeError):
    """An audit event must be written in the transaction of the act it records."""


def _subject_key(subject: models.Model | tuple[str, object] | None) -> tuple[str, str]:
    if subject is None:
        return "", ""
    if isinstance(subject, tuple):
        kind, pk = subject
        return kind, str(pk)
    return subject._meta.label_lower, str(subject.pk)


def audit_record(
    *,
    actor: Any,
    action: str,
    subject: models.Model | tuple[str, object] | None = None,
    payload: dict[str, Any] | None = None,
) -> AuditEvent:
    """Append one event to the chain, in the caller's transaction.

    Takes the chain's lock until the caller commits: concurrent acts append one after the other,
    so the sequence stays gapless and the chain never forks. Call it last in a service, after the
    checks and writes, to hold that lock as briefly as possible.

    The act reads nothing back, so the append is held (``casino.round_trips``): it goes with the
    act's next statement or with its COMMIT, in the same round trip, and the chain's lock is then
    taken just before the commit. The event returned gets its sequence number, link and hash when
    it is sent (``send_held()`` sends it at once).
    """
    if not connection.in_atomic_block:
        raise AuditOutsideTransaction(f"audit_record({action!r}) called outside a transaction")
    subject_type, subject_id = _subject_key(subject)
    actor_id = getattr(actor, "pk", None) if actor is not None else None
    actor_name = getattr(actor, "username", "") if actor_id is not None else "system"
    for name, value in (
        ("action", action),
        ("subject", subject_type + subject_id),
        ("actor", actor_name),
    ):
        if "\n" in value:
            raise ValueError(f"audit {name} {value!r} contains a line break")
    given = {
        "at": clock.now(),
        "actor_id": actor_id,
        "actor_name": actor_name,
        "action": action,
        "subject_type": subject_type,
        "subject_id": subject_id,
        "payload": canonical_json(payload or {}),
    }
    event = AuditEvent.from_db(
        USING, _APPENDED, [given.get(name) for name in _APPENDED]
    )  # what the statement decides is filled in when it is sent

    def appended(sent: Sent) -> None:
        ((event.seq, event.prev_hash, event.hash),) = sent.rows

    hold(_APPEND, {"version": VERSION, "genesis": GENESIS_HASH, **given}, then=appended)
    return event


@dataclass(frozen=True)
class Verification:
    ok: bool
    events: int
    head_seq: int
    head_hash: str
    first_broken_seq: int | None = None
    reason: str = ""
    seconds: float = 0.0

    def describe(self) -> str:
        if self.ok:
            return (
                f"audit chain verified: {self.events} events, head #{self.head_seq} "
                f"{self.head_hash}"
            )
        return f"audit chain BROKEN at event #{self.first_broken_seq}: {self.reason}"


# The canonical bytes of every event (audit/canonical.py), rendered by PostgreSQL while it streams
# the rows, so that the verifier's Python loop does only what cannot be delegated: hash and compare.
# Any edit of a stored field changes these bytes and so the hash. ``event_bytes`` is the reference;
# the tests check that both render the same bytes.
CANONICAL_BYTES_SQL = """convert_to(concat_ws(E'\\n',
    %(version)s::text, seq::text,
    to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    coalesce(actor_id::text, '-'), actor_name, action,
    coalesce(nullif(subject_type, ''), '-'), coalesce(nullif(subject_id, ''), '-'),
    prev_hash, payload), 'UTF8')"""
# Every act appends here, in one statement, where the lock and the last event were one round
# trip and the INSERT another (issue 17): the chain's lock and its last event (migration audit
# 0003), then the event, its canonical bytes rendered and hashed by PostgreSQL as the verifier
# renders them. ``event_bytes`` stays the reference (the exported verifier hashes with it); the
# tests hold both to the same bytes, and verify every chain the tests write.
# The event's columns as the model has them: each given, but the hash, computed here.
_GIVEN = [f.attname for f in AuditEvent._meta.concrete_fields if f.attname != "hash"]
_APPENDED = [*_GIVEN, "hash"]
# What the statement decides; the rest is what ``audit_record`` gave. Read back, the time parsed
# again and the payload were a sixth of an append's CPU (issue 17: 87 against 74 us).
_RETURNED = ["seq", "prev_hash", "hash"]
_APPEND = f"""
INSERT INTO audit_auditevent ({", ".join(_APPENDED)})
SELECT {", ".join(_GIVEN)}, encode(sha256({CANONICAL_BYTES_SQL}), 'hex')
FROM (
    SELECT COALESCE(last_seq, 0) + 1 AS seq, COALESCE(last_hash, %(genesis)s) AS prev_hash,
        %(at)s::timestamptz AS at, %(actor_id)s::bigint AS actor_id,
        %(actor_name)s::text AS actor_name, %(action)s::text AS action,
        %(subject_type)s::text AS subject_type, %(subject_id)s::text AS subject_id,
        %(payload)s::text AS payload
    FROM audit_lock_and_last_event()
) AS event
RETURNING {", ".join(_RETURNED)}
"""
_CANONICAL_SQL = (
    f"SELECT seq, prev_hash, hash, {CANONICAL_BYTES_SQL} FROM audit_auditevent ORDER BY seq"
)
STREAM_CHUNK = 10_000  # rows per chunk of the stream: memory stays bounded, round trips few


def _rows(chunk: int = STREAM_CHUNK) -> Iterator[tuple[int, str, str, bytes]]:
    """Every event in order, streamed in chunks of ``chunk`` rows (bounded memory).

    A stream, not a server-side cursor's FETCH round trips: PostgreSQL renders the next chunk
    while this process hashes the last one, so the two costs overlap instead of adding up
    (issue 17: the FETCHes left the server idle while Python hashed, and Python idle while the
    server rendered). Left early (a broken event), psycopg cancels the query; the savepoint
    below then takes the transaction back to before it, so a caller's transaction stays usable.
    """
    with transaction.atomic():
        connection.ensure_connection()
        send_held()  # what the caller's transaction appended, before the stream reads the chain
        # psycopg's own cursor: Django's is a client-side cursor, which cannot stream binary rows
        with psycopg.Cursor(connection.connection) as cursor:
            yield from cursor.stream(_CANONICAL_SQL, {"version": VERSION}, binary=True, size=chunk)


def verify_chain() -> Verification:
    """Recompute every hash from the stored fields and check the links, the sequence and the head.

    Names the first event that does not hold: an edited field, a missing or inserted event, a
    broken link, or a head that does not match the last event (events cut off the end).
    """
    started = time.perf_counter()
    expected_seq = 1
    prev = GENESIS_HASH
    sha256 = hashlib.sha256

    def broken(seq: int, reason: str) -> Verification:
        return Verification(
            False,
            expected_seq - 1,
            expected_seq - 1,
            prev,
            seq,
            reason,
            time.perf_counter() - started,
        )

    # The head is read before the events: an act committing meanwhile (the worker's own report)
    # only adds events past it, which are checked like the others. Outermost, the two reads also
    # share one snapshot (repeatable read); nested in a caller's transaction (the outbox runs
    # tasks in one), each read sees what committed before it, hence the order.
    outermost = not connection.in_atomic_block
    at_head = None
    with transaction.atomic():
        if outermost:  # the transaction's first statement
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        head = ChainHead.objects.get(pk=1)
        for seq, prev_hash, stored, data in _rows():
            if seq != expected_seq:
                return broken(
                    expected_seq, f"event #{expected_seq} is missing (next stored is #{seq})"
                )
            if prev_hash != prev:
                return broken(seq, f"event #{seq} does not link to event #{seq - 1}")
            if sha256(data).hexdigest() != stored:
                return broken(seq, f"event #{seq} was altered: its hash does not match its fields")
            prev = stored
            if seq == head.seq:
                at_head = stored
            expected_seq += 1
    count = expected_seq - 1
    if head.seq > count or (head.seq and at_head != head.hash):
        return broken(count + 1, f"the chain head says #{head.seq} but the events end at #{count}")
    return Verification(True, count, count, prev, seconds=time.perf_counter() - started)
