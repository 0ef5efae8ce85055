"""The API speaks UTC: every time it answers carries ``Z``, whatever the casino's zone.

The admin shows the casino's time (TIME_ZONE); a client reads instants, and an offset such as
Paris's before 1911 (+00:09:21) is no RFC 3339 offset at all.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils import timezone


class ApiInUtc:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path.startswith("/api/"):
            return self.get_response(request)
        with timezone.override(dt.UTC):
            return self.get_response(request)
