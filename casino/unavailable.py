"""Unavailable is not an error: with the database (or the broker) unreachable, say "try again".

A terminal must be able to tell "the house refuses this act" (4xx, a rule) from "the house cannot
answer now" (503): the second it retries, under the same Idempotency-Key, after ``Retry-After``
seconds. So a request that meets an unreachable database is answered 503, at once (the connection
gives up after ``DATABASE_CONNECT_TIMEOUT``; a stopped server refuses in a millisecond), with
``Retry-After`` and the API's usual body ``{"code": "unavailable", "message", "where": null}``;
outside the API (the admin) a plain "temporarily unavailable" page. Never a traceback: the log
gets one line naming the cause.

The middleware catches what a view raises; ``server_error`` (``handler500``) catches what
happens outside a view (a middleware saving the session, say) when DEBUG is off. Acts never need
the broker (the outbox holds their requests), so a broker outage reaches a person only where a
request itself talks to the broker.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.utils import translation
from django.utils.translation import gettext as _
from django.views.defaults import server_error as django_server_error

from casino.api.errors import error_body

log = logging.getLogger(__name__)


def _broker_errors() -> tuple[type[BaseException], ...]:
    import kombu.exceptions
    import redis.exceptions

    return (
        kombu.exceptions.OperationalError,
        redis.exceptions.ConnectionError,
        redis.exceptions.TimeoutError,
    )


def unavailable_part(error: BaseException | None) -> str | None:
    """``"database"`` or ``"broker"`` when ``error`` (or what caused it) says that part cannot be
    reached or cannot serve now; None for any other error.

    Every ``OperationalError`` of the database counts: a refused or lost connection, a server
    shutting down or starting up, and also a deadlock or a serialization failure (the transaction
    was rolled back; the same request will pass when tried again). ``InterfaceError`` is a
    connection that was already closed.
    """
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, (OperationalError, InterfaceError)):
            return "database"
        if isinstance(error, _broker_errors()):
            return "broker"
        error = error.__cause__ or error.__context__
    return None


def part_name(part: str) -> str:
    """The part that does not answer, in the request's language."""
    return _("la base de données") if part == "database" else _("le courtier de tâches")


def _cause(error: BaseException) -> str:
    first_line = str(error).strip().splitlines()[:1]
    return f"{type(error).__name__}: {first_line[0] if first_line else ''}".strip()


def unavailable_response(request: HttpRequest, part: str, error: BaseException) -> HttpResponse:
    """503 with ``Retry-After``: JSON under /api/ and /health/, a plain page elsewhere."""
    retry_after = settings.UNAVAILABLE_RETRY_AFTER_SECONDS
    log.warning("%s %s: %s unavailable (%s)", request.method, request.path, part, _cause(error))
    message = _(
        "%(part)s ne répond pas pour l'instant ; rien n'a été enregistré par cette demande : "
        "l'envoyer de nouveau (même Idempotency-Key) dans %(seconds)s s"
    ) % {"part": part_name(part), "seconds": retry_after}
    response: HttpResponse
    if request.path.startswith(("/api/", "/health/")):
        response = JsonResponse(error_body("unavailable", message, None), status=503)
    else:
        # Rendered without the request: no context processor may touch the database. The
        # language is read from the request itself, which may fail before LocaleMiddleware ran.
        context = {"retry_after": retry_after, "part": part, "casino_name": settings.CASINO_NAME}
        with translation.override(translation.get_language_from_request(request)):
            page = render_to_string("unavailable.html", context)
        response = HttpResponse(page, status=503)
    response["Retry-After"] = str(retry_after)
    response["Cache-Control"] = "no-store"
    return response


class UnavailableMiddleware:
    """First in MIDDLEWARE (after the bench's timing, when that is on): a view that meets an
    unreachable database answers 503."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        part = unavailable_part(exception)
        if part is None:
            return None
        return unavailable_response(request, part, exception)


def server_error(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    """``handler500``: Django calls it while handling the exception, so ``sys.exc_info`` names
    it. Unreachable database: 503 as above; anything else: Django's own 500 page."""
    error = sys.exc_info()[1]
    part = unavailable_part(error)
    if part is not None and error is not None:
        return unavailable_response(request, part, error)
    return django_server_error(request, *args, **kwargs)
