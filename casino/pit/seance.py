"""The séance's pages (issue 12, item 2): being built."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse


def seance_open(request: HttpRequest) -> HttpResponse:
    raise Http404("the séance's pages are being built")


def seance(request: HttpRequest, shift_id: int) -> HttpResponse:
    raise Http404("the séance's pages are being built")
