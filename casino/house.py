"""The house on every page: its name (CASINO_NAME) and the zone its times are shown in."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest


def house(request: HttpRequest) -> dict[str, Any]:
    """A context processor: the admin's pages, the pit's, the login, 403 and 404 alike."""
    return {"casino_name": settings.CASINO_NAME, "time_zone_name": settings.TIME_ZONE}
