"""A day filter (``date=``) is the day's range in the current time zone: the rows ``__date``
would find, read through an index (``casino.api.resources.on_day``)."""

from __future__ import annotations

import datetime as dt
import io
import re
import zoneinfo

import pytest
from django.utils import timezone

from casino.api.resources import on_day
from casino.people.models import LoginAttempt

pytestmark = pytest.mark.django_db

UTC = dt.UTC
# Around midnight in UTC and in Paris, and across Paris's two clock changes of 2026.
MOMENTS = [
    dt.datetime(2026, 3, 28, 22, 59, 59, 999_999, tzinfo=UTC),
    dt.datetime(2026, 3, 28, 23, 0, tzinfo=UTC),
    dt.datetime(2026, 3, 28, 23, 59, 59, tzinfo=UTC),
    dt.datetime(2026, 3, 29, 0, 0, tzinfo=UTC),
    dt.datetime(2026, 3, 29, 21, 59, 59, tzinfo=UTC),
    dt.datetime(2026, 3, 29, 22, 0, tzinfo=UTC),
    dt.datetime(2026, 10, 24, 22, 0, tzinfo=UTC),
    dt.datetime(2026, 10, 25, 0, 30, tzinfo=UTC),
    dt.datetime(2026, 10, 25, 1, 30, tzinfo=UTC),
    dt.datetime(2026, 10, 25, 22, 59, 59, tzinfo=UTC),
    dt.datetime(2026, 10, 25, 23, 0, tzinfo=UTC),
]


@pytest.mark.parametrize("zone", ["UTC", "Europe/Paris", "America/Havana"])
def test_the_day_range_finds_what_the_date_lookup_finds(zone):
    LoginAttempt.objects.bulk_create(
        LoginAttempt(username=f"u{i}", at=at, ok=True, where="api") for i, at in enumerate(MOMENTS)
    )
    days = {at.astimezone(zoneinfo.ZoneInfo(zone)).date() for at in MOMENTS}
    days |= {day + dt.timedelta(days=1) for day in days} | {dt.date(2026, 6, 1)}
    with timezone.override(zoneinfo.ZoneInfo(zone)):
        for day in sorted(days):
            by_range = set(
                LoginAttempt.objects.filter(on_day("at")(day)).values_list("username", flat=True)
            )
            by_date = set(
                LoginAttempt.objects.filter(at__date=day).values_list("username", flat=True)
            )
            assert by_range == by_date, (zone, day)
    with timezone.override(zoneinfo.ZoneInfo("Europe/Paris")):
        found = LoginAttempt.objects.filter(on_day("at")(dt.date(2026, 3, 29)))
        assert sorted(found.values_list("username", flat=True)) == ["u1", "u2", "u3", "u4"]


def test_the_day_range_is_a_range_an_index_can_serve():
    sql = str(LoginAttempt.objects.filter(on_day("at")(dt.date(2026, 3, 29))).query)
    assert "::date" not in sql
    assert "AT TIME ZONE" not in sql
    assert '"at" >= ' in sql
    assert '"at" < ' in sql


@pytest.mark.parametrize("zone", ["UTC", "Europe/Paris"])
def test_a_day_bounded_by_its_first_id_finds_what_the_range_finds(zone):
    """The bound by the day's first id (``on_day(field, model)``) leaves out none of the day's
    rows, even where ids do not follow the clock (a row stamped earlier, written later)."""
    shuffled = MOMENTS[5:] + MOMENTS[:5]  # ids out of the clock's order
    LoginAttempt.objects.bulk_create(
        LoginAttempt(username=f"u{i}", at=at, ok=True, where="api") for i, at in enumerate(shuffled)
    )
    days = {at.astimezone(zoneinfo.ZoneInfo(zone)).date() for at in MOMENTS}
    days |= {dt.date(2026, 6, 1)}  # a day without a row: nothing found
    with timezone.override(zoneinfo.ZoneInfo(zone)):
        for day in sorted(days):
            by_range = LoginAttempt.objects.filter(on_day("at")(day)).order_by("id")
            bounded = LoginAttempt.objects.filter(on_day("at", LoginAttempt)(day)).order_by("id")
            assert list(bounded) == list(by_range), (zone, day)


def test_a_days_first_page_starts_from_the_days_first_id(cast, posted):
    """The ledger's page of a day is read from the day's first id up its primary key, never from
    the ledger's first movement (issue 17's month: 1.6 million rows before the last day's)."""
    from django.core.management import call_command
    from django.db import connection

    from casino.floor.models import Movement

    call_command("simulate", tables=1, hours=0.05, seed=11, stdout=io.StringIO())
    day = timezone.localdate(Movement.objects.latest("at").at)
    with connection.cursor() as cursor:  # the primary key's walk, priced as the month's planner
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_bitmapscan = off")
        cursor.execute("SET LOCAL enable_sort = off")
    page = Movement.objects.filter(on_day("at", Movement)(day)).order_by("id")[:101]
    plan = page.explain()
    assert "Index Scan using floor_movement_pkey" in plan
    # The bound is the day's first id, a parameter of the plan: ``$0`` on PostgreSQL 15,
    # ``(InitPlan 1).col1`` on 18.
    assert re.search(r"Index Cond: \(id >= (\$\d|\(InitPlan \d+\)\.col\d)", plan), plan
    assert len(page) == min(101, Movement.objects.filter(on_day("at")(day)).count()) > 0
