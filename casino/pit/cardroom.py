"""The cage and the card room (issue 12, item 3): being built."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse


def cage(request: HttpRequest) -> HttpResponse:
    raise Http404("the cage's page is being built")


def card_room(request: HttpRequest) -> HttpResponse:
    raise Http404("the card room is being built")


def pack(request: HttpRequest, pack_id: int) -> HttpResponse:
    raise Http404("the card room is being built")
