"""The pit's URLs, mounted by the admin site under /admin/pit/ (casino/people/adminsite.py), each
view behind the admin's login and second factor."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.urls import URLPattern, path

from casino.pit import home


def urls(protect: Callable[[Any], Any]) -> list[URLPattern]:
    return [
        path("", protect(home.home), name="pit-home"),
    ]
