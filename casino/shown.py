"""Values as people read them, in the page's language: money in the room's units, times in the
casino's zone (TIME_ZONE) written as every page writes them (casino/formats).

Storage is UTC: a time formatted without these (``f"{at:%H:%M}"``) would show UTC, and a day taken
with ``.date()`` would be UTC's day, not the casino's."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from django.utils import timezone
from django.utils.formats import date_format, number_format

from casino import clock
from casino.formats import SECONDS_FORMAT


def money(minor: int | None) -> str:
    """Minor units as the room reads them: ``12 345,00`` in French, ``12,345.00`` in English
    (exact: a Decimal, never a float); ``–`` for none."""
    if minor is None:
        return "–"
    return number_format(Decimal(minor).scaleb(-2), 2, use_l10n=True, force_grouping=True)


def moment(at: dt.datetime | None, *, seconds: bool = False) -> str:
    """``24/11/2025 22:30`` (``…:05`` with seconds) in the casino's zone; ``–`` for no time."""
    if at is None:
        return "–"
    local = timezone.localtime(at)
    return date_format(local, SECONDS_FORMAT if seconds else "DATETIME_FORMAT")


def hour(at: dt.datetime | None, *, seconds: bool = False) -> str:
    """The hour alone (``22:30``, ``22:30:05``), where the day is the page's own."""
    if at is None:
        return "–"
    return date_format(timezone.localtime(at), "H:i:s" if seconds else "TIME_FORMAT")


def day(value: dt.date | None) -> str:
    return "–" if value is None else date_format(value, "DATE_FORMAT")


def today() -> dt.date:
    """The casino's day now (at 00:30 in Paris, UTC is still on the day before)."""
    return timezone.localdate(clock.now())
