"""Health endpoints for a load balancer, a process manager or a table terminal.

``/health/live``: the process answers (nothing else is touched: a web server whose database is
down is alive, and restarting it would not bring the database back).
``/health/ready``: it can serve, the database answers a query and the broker a ping; 503 with
``Retry-After`` and the usual ``{code, message, where}`` (``where``: the first part that does not
answer) otherwise. Acts do not need the broker, but the reports and anomaly detection wait for it,
so a deployment that sees it unready knows where to look. Both answer in bounded time: the
database gives up connecting after ``DATABASE_CONNECT_TIMEOUT``, the broker after
``HEALTH_BROKER_TIMEOUT``.
"""

from __future__ import annotations

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from casino.api.errors import error_body
from casino.unavailable import part_name

HEALTH_BROKER_TIMEOUT = 0.5  # seconds: a local Redis answers a ping in well under a millisecond


def database_check() -> str | None:
    """None when the database answers; else the cause."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # any failure is "not ready"; the cause is reported, not raised
        connection.close_if_unusable_or_obsolete()
        return f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc) else ''}"
    return None


def broker_check() -> str | None:
    """None when the broker answers a ping; else the cause."""
    import redis

    client = redis.Redis.from_url(
        settings.REDIS_URL,
        socket_connect_timeout=HEALTH_BROKER_TIMEOUT,
        socket_timeout=HEALTH_BROKER_TIMEOUT,
    )
    try:
        client.ping()
    except redis.RedisError as exc:
        return f"{type(exc).__name__}: {exc}"
    finally:
        client.close()
    return None


@never_cache
@require_GET
def live(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "live"})


@never_cache
@require_GET
def ready(request: HttpRequest) -> JsonResponse:
    failures = {
        part: cause
        for part, cause in (("database", database_check()), ("broker", broker_check()))
        if cause is not None
    }
    if not failures:
        return JsonResponse({"status": "ready", "database": "ok", "broker": "ok"})
    message = " ; ".join(
        _("%(part)s injoignable (%(cause)s)") % {"part": part_name(part), "cause": cause}
        for part, cause in failures.items()
    )
    response = JsonResponse(error_body("unavailable", message, next(iter(failures))), status=503)
    response["Retry-After"] = str(settings.UNAVAILABLE_RETRY_AFTER_SECONDS)
    return response
