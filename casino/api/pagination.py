"""Pages of at most ``MAX_LIMIT`` rows; a ``limit`` or ``offset`` that is not one is refused by name.

DRF's ``LimitOffsetPagination`` takes any size (one request could ask for the whole history) and
passes a huge number on to PostgreSQL, which fails with a 500 (bigint out of range).
"""

from __future__ import annotations

import re

from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request

from casino.errors import DomainError

MAX_LIMIT = 500
MAX_OFFSET = 2**62  # room left in a bigint for offset + limit
_WHOLE_NUMBER = re.compile(r"[0-9]{1,19}")


class InvalidPage(DomainError):
    """The page asked for is not one the API serves."""

    code = "invalid_page"


def _whole_number(request: Request, name: str, *, low: int, high: int) -> int | None:
    raw = request.query_params.get(name)
    if raw is None:
        return None
    if not _WHOLE_NUMBER.fullmatch(raw) or not low <= int(raw) <= high:
        raise InvalidPage(
            f"{name}={raw[:40]!r} must be a whole number from {low} to {high}", where=name
        )
    return int(raw)


class CappedLimitOffsetPagination(LimitOffsetPagination):
    max_limit = MAX_LIMIT

    def get_limit(self, request: Request) -> int | None:
        limit = _whole_number(request, self.limit_query_param, low=1, high=MAX_LIMIT)
        return self.default_limit if limit is None else limit

    def get_offset(self, request: Request) -> int:
        offset = _whole_number(request, self.offset_query_param, low=0, high=MAX_OFFSET)
        return offset or 0
