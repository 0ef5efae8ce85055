"""The table page (issue 12, item 1): being built."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse


def table(request: HttpRequest, number: int) -> HttpResponse:
    raise Http404("the table page is being built")
