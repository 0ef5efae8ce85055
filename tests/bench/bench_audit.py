"""Audit chain: append throughput (1 and 8 writers) and verification of 1,000,000 events."""

from __future__ import annotations

import datetime as dt
import hashlib
import multiprocessing
import os
from collections.abc import Iterator
from itertools import zip_longest

from tests.bench.harness import median_time, report

VERIFY_EVENTS = int(os.environ.get("BENCH_AUDIT_EVENTS", 1_000_000))


def _append(n: int) -> None:
    from django.db import transaction

    from audit.chain import audit_record

    for i in range(n):
        with transaction.atomic():  # one act, one transaction, as a service does
            audit_record(
                actor=None,
                action="bench.appended",
                subject=("bench.thing", i),
                payload={"i": i, "amount": 1000, "chance": "rouge"},
            )


def _append_batched(n: int, per_transaction: int = 100) -> None:
    from django.db import transaction

    from audit.chain import audit_record

    for start in range(0, n, per_transaction):
        with transaction.atomic():
            for i in range(start, start + per_transaction):
                audit_record(
                    actor=None,
                    action="bench.appended",
                    subject=("bench.thing", i),
                    payload={"i": i, "amount": 1000, "chance": "rouge"},
                )


def _writer(n: int) -> None:
    from django.db import connections

    connections.close_all()  # a process of its own needs a connection of its own
    _append(n)
    connections.close_all()


def _concurrent(writers: int, per_writer: int) -> None:
    from django.db import connections

    connections.close_all()
    with multiprocessing.get_context("fork").Pool(writers) as pool:
        pool.map(_writer, [per_writer] * writers)


def _load_chain(count: int) -> list[bytes]:
    """Write ``count`` valid events fast (COPY, triggers off as for a restore); return their bytes.

    This is set-up, not the measured path: ``audit_record`` is measured above.
    """
    from django.db import connection

    from audit.canonical import GENESIS_HASH, canonical_json, event_bytes, format_time

    start = dt.datetime(2026, 11, 22, tzinfo=dt.UTC)
    prev = GENESIS_HASH
    canonical: list[bytes] = []
    rows = []
    for seq in range(1, count + 1):
        at = start + dt.timedelta(microseconds=seq * 1_000)
        payload = canonical_json(
            {"coup": seq // 10, "stake": seq, "amount": 1000, "chance": "rouge", "outcome": "won"}
        )
        data = event_bytes(
            seq=seq,
            at=format_time(at),
            actor_id=None,
            actor_name="system",
            action="stake.settled",
            subject_type="floor.stake",
            subject_id=str(seq),
            prev_hash=prev,
            payload=payload,
        )
        digest = hashlib.sha256(data).hexdigest()
        canonical.append(data)
        rows.append(
            (
                seq,
                at,
                None,
                "system",
                "stake.settled",
                "floor.stake",
                str(seq),
                payload,
                prev,
                digest,
            )
        )
        prev = digest
    with connection.cursor() as cursor:
        cursor.execute("SET session_replication_role = replica")
        cursor.execute("TRUNCATE audit_auditevent")
        with cursor.cursor.copy(
            "COPY audit_auditevent (seq, at, actor_id, actor_name, action, subject_type, "
            "subject_id, payload, prev_hash, hash) FROM STDIN"
        ) as copy:
            for row in rows:
                copy.write_row(row)
        cursor.execute("UPDATE audit_chainhead SET seq = %s, hash = %s", [count, prev])
        cursor.execute("SET session_replication_role = origin")
        cursor.execute("VACUUM ANALYZE audit_auditevent")
    return canonical


def run() -> None:
    from audit.chain import verify_chain

    single = 2_000
    t_single = median_time(lambda: _append(single))
    writers, per_writer = 8, 500
    t_multi = median_time(lambda: _concurrent(writers, per_writer))
    batched = 10_000
    t_batched = median_time(lambda: _append_batched(batched))
    report(
        "Audit append (PostgreSQL)",
        [
            (
                "1 writer, 1 event per transaction",
                f"{single / t_single:,.0f} events/s (median of 3 runs of {single:,})",
            ),
            (
                "8 concurrent writers, 1 event per transaction",
                f"{writers * per_writer / t_multi:,.0f} events/s (8 processes x {per_writer}, median of 3)",
            ),
            (
                "1 writer, 100 events per transaction",
                f"{batched / t_batched:,.0f} events/s (the cost without one commit per event)",
            ),
        ],
    )

    canonical = _load_chain(VERIFY_EVENTS)
    result = verify_chain()
    if not (result.ok and result.events == VERIFY_EVENTS):
        raise SystemExit(f"bench chain did not verify: {result.describe()}")
    if any(read != hashed for read, hashed in zip_longest(_stored_bytes(), canonical)):
        raise SystemExit("the bytes read back are not the bytes the chain hashed")
    t_verify = median_time(verify_chain)
    sha256 = hashlib.sha256

    def read_and_hash() -> None:
        for data in _stored_bytes():
            sha256(data).hexdigest()

    def hash_only() -> None:
        for data in canonical:
            sha256(data).hexdigest()

    t_bare = median_time(read_and_hash)
    t_hash = median_time(hash_only)
    report(
        f"verify_audit on {VERIFY_EVENTS:,} events",
        [
            ("verifier (stream + hash + links + head)", f"{t_verify:.2f} s"),
            ("bare: the same bytes read from PostgreSQL and hashed", f"{t_bare:.2f} s"),
            ("ratio verifier / bare", f"{t_verify / t_bare:.2f}x (aim: within 2x)"),
            ("hashlib alone, the same bytes already in memory", f"{t_hash:.2f} s"),
            ("ratio verifier / hashlib alone", f"{t_verify / t_hash:.2f}x"),
        ],
    )


def _stored_bytes() -> Iterator[bytes]:
    """The bytes the verifier hashes, read the cheapest way measured (a binary stream of that one
    column; COPY's per-row messages cost more): rendered by PostgreSQL from the stored fields,
    as no column holds them, and nothing else (no seq, no hashes, no checks)."""
    import psycopg
    from django.db import connection

    from audit.canonical import VERSION
    from audit.chain import CANONICAL_BYTES_SQL, STREAM_CHUNK

    connection.ensure_connection()
    with psycopg.Cursor(connection.connection) as cursor:
        for (data,) in cursor.stream(
            f"SELECT {CANONICAL_BYTES_SQL} FROM audit_auditevent ORDER BY seq",
            {"version": VERSION},
            binary=True,
            size=STREAM_CHUNK,
        ):
            yield data
