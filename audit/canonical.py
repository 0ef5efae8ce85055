"""The canonical forms the audit chain hashes. Documented in docs/audit-chain.md; change = new version.

An event is hashed as the UTF-8 bytes of ten lines joined by ``\\n``::

    casino-audit-v1
    <seq>                 decimal, from 1, no gaps
    <at>                  UTC, 2026-11-22T02:00:00.123456Z
    <actor id>            decimal, or "-" for the system
    <actor name>          the username at the time, or "system"
    <action>              e.g. anomaly.reviewed
    <subject type>        app_label.model, or "-"
    <subject id>          the subject's primary key, or "-"
    <prev hash>           hex SHA-256 of the previous event; 64 zeros before the first
    <payload>             canonical JSON (below)

Canonical JSON: keys sorted, no insignificant white space, UTF-8 (not \\u-escaped), no NaN or
infinities, integers only for money. The payload is stored exactly as hashed, as text, so nothing
(jsonb normalisation, a driver's float formatting) stands between the stored and the hashed bytes.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import uuid
from typing import Any

VERSION = "casino-audit-v1"
GENESIS_HASH = "0" * 64


def _default(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            raise TypeError(f"naive datetime {value!r} in an audit payload; use aware UTC times")
        return format_time(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"{type(value).__name__} {value!r} has no canonical JSON form")


def canonical_json(value: Any) -> str:
    """
    >>> canonical_json({"b": 1, "a": ["é", None]})
    '{"a":["é",null],"b":1}'
    """
    return json.dumps(
        value,
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
        default=_default,
    )


def format_time(at: dt.datetime) -> str:
    """
    >>> format_time(dt.datetime(2026, 11, 22, 3, 0, tzinfo=dt.timezone(dt.timedelta(hours=1))))
    '2026-11-22T02:00:00.000000Z'
    """
    return at.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def event_bytes(
    *,
    seq: int,
    at: str,
    actor_id: int | None,
    actor_name: str,
    action: str,
    subject_type: str,
    subject_id: str,
    prev_hash: str,
    payload: str,
) -> bytes:
    actor = "-" if actor_id is None else str(actor_id)
    return "\n".join(
        (
            VERSION,
            str(seq),
            at,
            actor,
            actor_name,
            action,
            subject_type or "-",
            subject_id or "-",
            prev_hash,
            payload,
        )
    ).encode()


def event_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
