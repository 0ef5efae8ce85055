"""The admin's date hierarchy read through the index (``DatesByIndex``, issue 17): the years and
months Django finds, across the house's clock changes and in another time zone."""

from __future__ import annotations

import datetime as dt
import doctest

import pytest
from django.db import transaction
from django.utils import timezone

import casino.admin_base
from audit.chain import audit_record
from audit.models import AuditEvent
from casino.admin_base import DatesByIndex, ValuesByIndex
from casino.clock import ManualClock

UTC = dt.UTC
# Moments where a month or a year starts at a different instant in UTC and in the house's time,
# or where the clocks change; every other one is recorded under another action (filtered out).
MOMENTS = [
    dt.datetime(2025, 12, 31, 23, 30, tzinfo=UTC),  # 1 January 2026, 00:30 in Paris
    dt.datetime(2026, 1, 15, 12, 0, tzinfo=UTC),
    dt.datetime(2026, 3, 29, 0, 59, tzinfo=UTC),  # the clocks go forward at 1:00 UTC
    dt.datetime(2026, 3, 31, 22, 30, tzinfo=UTC),  # 1 April, 00:30 in Paris
    dt.datetime(2026, 4, 30, 21, 59, tzinfo=UTC),  # still April in Paris
    dt.datetime(2026, 10, 25, 0, 30, tzinfo=UTC),  # 2:30 in Paris, before the clocks go back
    dt.datetime(2026, 10, 25, 1, 30, tzinfo=UTC),  # 2:30 again, after
    dt.datetime(2026, 10, 31, 23, 0, tzinfo=UTC),  # 1 November, midnight in Paris
    dt.datetime(2027, 2, 28, 23, 30, tzinfo=UTC),  # 1 March, 00:30 in Paris
    dt.datetime(2028, 12, 31, 23, 59, tzinfo=UTC),  # 2029 in Paris
]


@pytest.fixture
def dated(db):
    with ManualClock(MOMENTS[0]) as clock:
        for i, moment in enumerate(MOMENTS):
            clock.move_to(moment)
            with transaction.atomic():
                audit_record(actor=None, action="test.other" if i % 3 == 1 else "test.dated")
    return AuditEvent.objects.filter(action="test.dated")


@pytest.mark.parametrize("zone", ["Europe/Paris", "America/Santiago", "UTC"])
@pytest.mark.parametrize("kind", ["year", "month"])
def test_the_years_and_months_read_by_index_are_those_django_finds(dated, zone, kind):
    with timezone.override(zone):
        expected = list(dated.datetimes("at", kind))
        found = DatesByIndex(model=AuditEvent, query=dated.query).datetimes("at", kind)
    assert len(expected) >= 3
    assert found == expected
    assert [d.tzinfo for d in found] == [d.tzinfo for d in expected]


def test_the_days_and_an_empty_listing_are_djangos(dated):
    by_index = DatesByIndex(model=AuditEvent, query=dated.query)
    assert list(by_index.datetimes("at", "day")) == list(dated.datetimes("at", "day"))
    assert DatesByIndex(model=AuditEvent, query=dated.none().query).datetimes("at", "month") == []


def test_the_periods_are_documented_by_their_examples():
    assert doctest.testmod(casino.admin_base).failed == 0


def test_the_values_found_through_the_index_are_those_django_lists(db):
    """The audit log's filters by action and by kind of subject (``ValuesByIndex``) offer what
    ``AllValuesFieldListFilter`` offers, in its order: the empty kind and accents included."""
    from django.contrib import admin
    from django.contrib.auth.models import User
    from django.test import RequestFactory

    from audit.admin import AuditEventAdmin

    person = User.objects.create_user("subject")
    for action, subject in [
        ("z.last", None),
        ("coup.settled", person),
        ("é.accent", None),
        ("coup.settled", None),
        ("A.upper", person),
    ]:
        with transaction.atomic():
            audit_record(actor=None, action=action, subject=subject)
    model_admin = AuditEventAdmin(AuditEvent, admin.site)
    request = RequestFactory().get("/admin/audit/auditevent/")
    for name in ("action", "subject_type"):
        field = AuditEvent._meta.get_field(name)
        by_index = ValuesByIndex(field, request, {}, AuditEvent, model_admin, field_path=name)
        by_django = admin.AllValuesFieldListFilter(
            field, request, {}, AuditEvent, model_admin, field_path=name
        )
        assert len(by_index.lookup_choices) >= 2
        assert list(by_index.lookup_choices) == list(by_django.lookup_choices)
