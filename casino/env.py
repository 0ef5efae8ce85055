"""Reading settings from the environment, failing loudly on a bad value.

Every reader names the variable in its error, so a misconfigured server stops at start with a message
that says what to fix (healthchecks' ``envbool``/``envint`` and its ``*_FILE`` secrets).
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str | None = None) -> str | None:
    """The variable's value, or the content of the file named by ``<name>_FILE`` (for secrets)."""
    file_name = os.environ.get(f"{name}_FILE")
    if file_name:
        try:
            return Path(file_name).read_text().strip()
        except OSError as exc:
            raise ImproperlyConfigured(f"{name}_FILE={file_name!r} cannot be read: {exc}") from exc
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(
        f"{name}={raw!r} is not a boolean (use 1/0, true/false, yes/no, on/off)"
    )


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={raw!r} must be at least {minimum}")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def database_from_url(name: str, url: str) -> dict[str, object]:
    """A Django DATABASES entry for a ``postgres://`` URL; anything else is refused by name.

    PostgreSQL is the only database: the integrity rules (append-only triggers, state machines)
    live in it, so a URL of another engine is a configuration error, not a fallback.
    """
    import dj_database_url

    parts = urlsplit(url)
    if parts.scheme not in {"postgres", "postgresql", "pgsql"}:
        raise ImproperlyConfigured(
            f"{name}={_redact(url)!r} is not a PostgreSQL URL "
            "(expected postgresql://user:password@host:port/database)"
        )
    try:
        # casino.backend: Django's, with the writes casino.round_trips holds sent in order.
        config = dj_database_url.parse(
            url, engine="casino.backend", conn_max_age=60, conn_health_checks=True
        )
        _ = parts.port  # raises ValueError on a malformed port
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name}={_redact(url)!r} is malformed: {exc}") from None
    if not config.get("NAME"):
        raise ImproperlyConfigured(
            f"{name}={_redact(url)!r} names no database (…/database at the end)"
        )
    return dict(config)


def redis_url(name: str, url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in {"redis", "rediss", "redis+socket", "unix"}:
        raise ImproperlyConfigured(
            f"{name}={_redact(url)!r} is not a Redis URL (expected redis://host:port/db)"
        )
    try:
        _ = parts.port
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name}={_redact(url)!r} is malformed: {exc}") from None
    return url


def _redact(url: str) -> str:
    parts = urlsplit(url)
    if parts.password:
        return url.replace(f":{parts.password}@", ":***@")
    return url
