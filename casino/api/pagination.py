"""Pages of a collection by cursor: ``?page_size=`` (at most ``MAX_PAGE_SIZE``) and the ``next``
link's ``?cursor=``. A cursor names a place in the collection's fixed order (its reference), so a
client walking a growing collection (the audit log, the coups of a séance in play) never sees a row
twice or misses one, and no page costs more than its rows (an offset makes PostgreSQL walk every row
before it). A ``page_size`` or ``cursor`` that is not one is refused by name.
"""

from __future__ import annotations

import re
from typing import Any

from django.utils.translation import gettext as _
from rest_framework.pagination import Cursor, CursorPagination
from rest_framework.request import Request

from casino.errors import DomainError

MAX_PAGE_SIZE = 500
DEFAULT_PAGE_SIZE = 100
_WHOLE_NUMBER = re.compile(r"[0-9]{1,4}")


class InvalidPage(DomainError):
    """The page asked for is not one the API serves."""

    code = "invalid_page"
    http_status = 400


class ReferenceCursorPagination(CursorPagination):
    """Ordered by the view's ``ordering`` (by default its reference, oldest first)."""

    page_size = DEFAULT_PAGE_SIZE
    page_size_query_param = "page_size"
    max_page_size = MAX_PAGE_SIZE
    ordering = "id"

    def get_page_size(self, request: Request) -> int:
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        if not _WHOLE_NUMBER.fullmatch(raw) or not 1 <= int(raw) <= MAX_PAGE_SIZE:
            raise InvalidPage(
                _("page_size=%(value)r doit être un nombre entier de 1 à %(max)s")
                % {"value": raw[:40], "max": MAX_PAGE_SIZE},
                where="page_size",
            )
        return int(raw)

    def get_ordering(self, request: Request, queryset: Any, view: Any) -> tuple[str, ...]:
        ordering = getattr(view, "ordering", self.ordering)
        return (ordering,) if isinstance(ordering, str) else tuple(ordering)

    def get_paginated_response_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        link = {"type": ["string", "null"], "format": "uri"}
        return {
            "type": "object",
            "required": ["next", "previous", "results"],
            "properties": {
                "next": {**link, "description": "the next page, null on the last"},
                "previous": {**link, "description": "the page before, null on the first"},
                "results": schema,
            },
            "additionalProperties": False,
        }

    def decode_cursor(self, request: Request) -> Cursor | None:
        raw = request.query_params.get(self.cursor_query_param)
        try:
            return super().decode_cursor(request)
        except Exception:  # DRF answers a bad cursor with a bare 404
            raise InvalidPage(
                _("cursor=%(value)r n'est pas un curseur donné par cette collection")
                % {"value": (raw or "")[:40]},
                where="cursor",
            ) from None
