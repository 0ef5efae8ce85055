"""Records counted by a key in one query: what a list shows of each of its rows' own records (a
séance's rounds, a pack's cards laid, a taille's draws), read for the whole list at once."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, QuerySet


def count_by(records: QuerySet[Any], key: str) -> dict[Any, int]:
    """How many of ``records`` there are for each value of ``key`` (a field, or a path to one);
    a value without any is left out."""
    return dict(records.order_by().values(key).annotate(n=Count("pk")).values_list(key, "n"))
