"""Admin building blocks shared by every app."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin
from django.contrib.admin.views.main import ChangeList
from django.db import connections
from django.db.models import DateTimeField, QuerySet
from django.db.models.functions import Trunc
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.utils import timezone

from casino.errors import DomainError


class DatesByIndex(QuerySet[Any]):
    """Records whose years and months, as the admin's date hierarchy asks for them (those that
    hold a record), are found one at a time through the index on the date: each is the period
    of the first record after the last one found, which the index finds at once.
    ``QuerySet.datetimes`` truncates the date of every record to keep the distinct ones: the
    whole history's (200,000 coups a month) for the first page's months. The same dates, in the
    same order, filtered the same way; a query per period (and one to find there is no more).
    A month's days are left to ``QuerySet.datetimes``: it reads one month's records, and a
    month has up to 31 days to look for."""

    def datetimes(self, field_name: str, kind: str, order: str = "ASC", tzinfo: Any = None) -> Any:
        if kind not in ("year", "month") or order != "ASC" or not settings.USE_TZ:
            return super().datetimes(field_name, kind, order, tzinfo)
        zone = tzinfo or timezone.get_current_timezone()
        # The truncated date as ``QuerySet.datetimes`` has it, so that what is shown is its own.
        truncated = self.annotate(
            period=Trunc(field_name, kind, output_field=DateTimeField(), tzinfo=zone)
        ).order_by(field_name)
        found: list[dt.datetime] = []
        probe = truncated.filter(**{f"{field_name}__isnull": False})
        while (period := probe.values_list("period", flat=True).first()) is not None:
            found.append(period)
            # Past this period: its truncated date is later (what decides), and the date is at
            # or after the next period's start (what the index reads from). The start is local
            # midnight made aware as Django makes it (the earlier reading where the clocks
            # repeat an hour, the moment they jump where they skip one): never after the
            # period's first instant.
            start = timezone.make_aware(_next_period(period.replace(tzinfo=None), kind), zone)
            probe = truncated.filter(**{"period__gt": period, f"{field_name}__gte": start})
        return found


def _next_period(start: dt.datetime, kind: str) -> dt.datetime:
    """The start of the year or month after the one that starts at ``start``.

    >>> _next_period(dt.datetime(2026, 12, 1), "month")
    datetime.datetime(2027, 1, 1, 0, 0)
    """
    if kind == "year":
        return start.replace(year=start.year + 1)
    return start.replace(year=start.year + start.month // 12, month=start.month % 12 + 1)


class ValuesByIndex(admin.AllValuesFieldListFilter):
    """The values of a column to filter by, as ``AllValuesFieldListFilter`` lists them, found one
    at a time through an index that begins with the column: each is the first value after the
    last one found (a recursive query, one probe of the index a value). ``SELECT DISTINCT`` reads
    every row: the audit log's 3.4 million events of the bench's month, for 15 actions. For a column
    of the admin's own model, whose listing is the whole table, that holds no NULL."""

    def __init__(self, field: Any, request: Any, params: Any, model: Any, *args: Any, **kw: Any):
        super().__init__(field, request, params, model, *args, **kw)
        database = connections[model._default_manager.db]
        table, column = (database.ops.quote_name(n) for n in (model._meta.db_table, field.column))
        with database.cursor() as cursor:
            cursor.execute(
                f"""WITH RECURSIVE found (value) AS (
                        (SELECT {column} FROM {table} ORDER BY {column} LIMIT 1)
                        UNION ALL
                        SELECT (SELECT {column} FROM {table} WHERE {column} > found.value
                                 ORDER BY {column} LIMIT 1)
                          FROM found WHERE found.value IS NOT NULL
                    )
                    SELECT value FROM found WHERE value IS NOT NULL"""
            )
            self.lookup_choices = [value for (value,) in cursor.fetchall()]


class RelatedReadWith(admin.RelatedFieldListFilter):
    """A filter by a related record whose records are listed as the default lists them, each
    read with what its name shows (``related``) in one query: the default reads that one record
    at a time (the séances' tables: a query for each séance of the month, 1,200)."""

    related: tuple[str, ...] = ()

    def field_choices(self, field: Any, request: Any, model_admin: Any) -> list[tuple[Any, str]]:
        ordering = self.field_admin_ordering(field, request, model_admin)
        records = field.related_model._default_manager.select_related(*self.related)
        if ordering:
            records = records.order_by(*ordering)
        return [(record.pk, str(record)) for record in records]


class PageChangeList(ChangeList):
    """A changelist whose admin reads, for its whole page at once, what the rows show beyond
    their own columns (``RecordAdmin.read_with_page``)."""

    def get_results(self, request: HttpRequest) -> None:
        super().get_results(request)
        # The page's rows, fetched once here: the table drawn next iterates these same objects.
        self.model_admin.read_with_page(list(self.result_list))


class RecordAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    """What is recorded is shown, never added, changed or deleted here (superusers included).

    Changes happen through service actions; corrections are new records.
    """

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return PageChangeList

    def get_object(self, request: HttpRequest, object_id: str, from_field: Any = None) -> Any:
        record = super().get_object(request, object_id, from_field)
        if record is not None:
            self.read_with_page([record])  # alone, a record is its own page
        return record

    def read_with_page(self, rows: list[Any]) -> None:
        """What a page's rows show beyond their columns and ``list_select_related``, read for
        the page at once and kept on each row (none here). A record's own page reads it too,
        as a page of one, so that what it shows is read one way."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def act_view(
        self,
        request: HttpRequest,
        *,
        form: forms.Form,
        act: Callable[[dict[str, Any]], tuple[str, int]],
        done_url: str,
        template: str,
        **context: Any,
    ) -> HttpResponse:
        """An admin page whose form calls one service: ``act(cleaned_data)`` returns the message
        and its level; a refusal (DomainError) is shown on the form and nothing is recorded."""
        if request.method == "POST" and form.is_valid():
            try:
                message, level = act(form.cleaned_data)
            except DomainError as exc:
                form.add_error(None, exc.message)
            else:
                self.message_user(request, message, level)
                return HttpResponseRedirect(done_url)
        page = {**self.admin_site.each_context(request), "opts": self.model._meta, "form": form}
        return render(request, template, {**page, **context})

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        # The fields a page declares (computed displays included), else every model field.
        return self.readonly_fields or [f.name for f in self.model._meta.fields]


class IndexedHistoryAdmin(RecordAdmin):
    """The records of a long history (coups, movements, audit events): their date hierarchy's
    years and months are found through the index on the date (``DatesByIndex``)."""

    def get_queryset(self, request: HttpRequest) -> DatesByIndex:
        queryset = super().get_queryset(request)
        return DatesByIndex(model=queryset.model, query=queryset.query, using=queryset.db)


class RecordInline(admin.TabularInline):  # type: ignore[type-arg]
    """Related records shown on a record's page: its ``fields``, read-only, nothing added."""

    extra = 0
    can_delete = False

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return self.fields

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
