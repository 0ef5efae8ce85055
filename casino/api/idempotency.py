"""Idempotent writes: a retried request with the same ``Idempotency-Key`` gets the first answer.

The key row is inserted first, in the same transaction as the act, under a unique constraint. A
retry arriving while the first is still running waits on that constraint; when the first commits,
the retry finds the stored answer, and when it rolls back (a refusal), the retry runs afresh.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable
from typing import Any

from django.core.files import File
from django.db import transaction
from django.utils.translation import gettext as _
from rest_framework.request import Request
from rest_framework.response import Response

from casino import clock
from casino.api.errors import error_body
from casino.api.models import IdempotentRequest
from casino.api.renderers import JSONRenderer
from casino.errors import Conflict, DomainError
from casino.files import sha256_of
from casino.round_trips import hold, run

HEADER = "Idempotency-Key"


class IdempotencyKeyRequired(DomainError):
    """Every write from a terminal carries a key, so a retry can never record an act twice."""

    code = "idempotency_key_required"
    http_status = 400


class IdempotencyKeyReused(Conflict):
    """The key was used before for a different request."""

    code = "idempotency_key_reused"


def _fingerprint(request: Request) -> str:
    """The request as the key stands for it: method, path, fields, and each uploaded file's bytes
    (the same key with another file is another request)."""
    body = json.dumps(request.data, sort_keys=True, default=_json_value)
    return hashlib.sha256(f"{request.method} {request.path}\n{body}".encode()).hexdigest()


def _json_value(value: Any) -> Any:
    if isinstance(value, File):
        return {"file": value.name, "size": value.size, "sha256": sha256_of(value)}
    return str(value)


def _claim(user_id: int, key: str, fingerprint: str) -> int | None:
    """The key's row, inserted with no answer yet: its id, or None when the key was used before.
    A retry arriving while the first request is still running waits on the unique constraint
    until that one commits (then it finds the answer) or rolls back (then it inserts and runs).
    ``ON CONFLICT DO NOTHING`` waits and decides as a savepoint around a plain INSERT did, in one
    round trip where that took three (issue 17)."""
    table = IdempotentRequest._meta.db_table
    rows = run(
        f"INSERT INTO {table} (user_id, key, fingerprint, status, body, created_at) "
        "VALUES (%s, %s, %s, 0, '{}', %s) ON CONFLICT (user_id, key) DO NOTHING RETURNING id",
        [user_id, key, fingerprint, clock.now()],
    )
    return int(rows[0][0]) if rows else None


def _keep_answer(pk: int, status: int, body: bytes) -> None:
    """The answer written into the request's row. Every write ends here: one fixed statement
    with the JSON as rendered, where the ORM compiled an UPDATE and the JSON was parsed back to
    be written out again (issue 17's profile). Nothing is read back: held, it goes with the
    request's COMMIT (casino/round_trips.py)."""
    table = IdempotentRequest._meta.db_table
    hold(
        f"UPDATE {table} SET status = %s, body = %s::jsonb WHERE id = %s",
        [status, body.decode(), pk],
    )


def idempotent(view: Callable[..., Response]) -> Callable[..., Response]:
    """Wrap a DRF write handler (``post``) so that it runs at most once per key and user."""

    @functools.wraps(view)
    def wrapper(self: Any, request: Request, *args: Any, **kwargs: Any) -> Response:
        key = request.headers.get(HEADER, "").strip()
        if not key or len(key) > 200:
            raise IdempotencyKeyRequired(
                _("une écriture porte un en-tête %(header)s (1 à 200 caractères)")
                % {"header": HEADER},
                where=HEADER,
            )
        fingerprint = _fingerprint(request)
        with transaction.atomic():
            record = _claim(request.user.pk, key, fingerprint)  # a retry waits here
            if record is not None:
                try:
                    response = view(self, request, *args, **kwargs)
                except DomainError as exc:
                    if not getattr(exc, "recorded", False):
                        raise
                    # A refusal that is evidence (a foreign card) was recorded by the service:
                    # it is kept, and so is this answer, so that a retry records nothing more.
                    response = Response(
                        error_body(exc.code, exc.message, exc.where), status=exc.http_status
                    )
                else:
                    if response.status_code >= 400:
                        # A plain refusal records nothing; a retry is judged afresh.
                        transaction.set_rollback(True)
                        return response
                # Kept as the client read it (dates as text), so a retry gets the same answer
                # (as JSON: jsonb keeps the values, not the order of the keys); the client is
                # sent the bytes rendered here, not the answer rendered again (the renderer).
                body = b"{}"
                if response.data is not None:
                    body = response.written_json = JSONRenderer().render(response.data)
                _keep_answer(record, response.status_code, body)
                return response
        first = IdempotentRequest.objects.get(user=request.user, key=key)
        if first.fingerprint != fingerprint:
            raise IdempotencyKeyReused(
                _("%(header)s %(key)r a déjà servi pour une autre requête")
                % {"header": HEADER, "key": key},
                where=HEADER,
            )
        replay = Response(first.body, status=first.status)
        replay["Idempotent-Replay"] = "true"
        return replay

    wrapper.is_idempotent = True  # type: ignore[attr-defined]  (the schema says it needs a key)
    return wrapper
