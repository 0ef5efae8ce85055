"""The export writes part of its text the fast way (PostgreSQL; the C encoder, in
``tests/test_json_text.py``): the same text as the standard library's, for any value (issue 17)."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from types import SimpleNamespace
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.db.models import BooleanField, CharField, IntegerField, Value

from audit.canonical import format_time
from audit.chain import audit_record
from audit.models import AuditEvent
from casino.reports.export import TIME_TEXT, TimeText, _events_jsonl, _records
from tests.test_json_text import AWKWARD


@pytest.mark.parametrize(
    "at",
    [
        dt.datetime(2026, 11, 22, 2, 0, tzinfo=dt.UTC),
        dt.datetime(2026, 3, 29, 2, 30, 0, 5, tzinfo=ZoneInfo("Europe/Paris")),  # summer time
        dt.datetime(2026, 10, 25, 2, 59, 59, 999999, tzinfo=ZoneInfo("Europe/Paris"), fold=1),
        dt.datetime(1999, 12, 31, 23, 59, 59, 120000, tzinfo=dt.timezone(dt.timedelta(hours=-5))),
    ],
)
def test_postgresql_writes_times_as_the_audit_chain_does(db, at):
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {TIME_TEXT % '%s'}", [at])
        assert cursor.fetchone()[0] == format_time(at)


def test_postgresql_writes_the_events_lines_as_json_dumps_does(cast):
    with transaction.atomic():
        first = audit_record(
            actor=cast.tailleur, action="test.awkward", payload={"note": AWKWARD, "n": [1, None]}
        )
        audit_record(actor=None, action=f"test.{AWKWARD}", subject=("test.thing", AWKWARD))
        last = audit_record(actor=cast.chef, action="test.plain", payload={})
    events = AuditEvent.objects.filter(seq__gte=first.seq, seq__lte=last.seq).order_by("seq")
    expected = "".join(
        json.dumps({**e, "at": format_time(e["at"])}, ensure_ascii=False) + "\n"
        for e in events.values(
            "seq",
            "at",
            "actor_id",
            "actor_name",
            "action",
            "subject_type",
            "subject_id",
            "prev_hash",
            "payload",
            "hash",
        )
    )
    events_range = SimpleNamespace(chain_from=first.seq, chain_to=last.seq)
    written = b"".join(_events_jsonl(events_range)).decode()  # type: ignore[arg-type]
    assert written == expected
    assert AWKWARD in json.loads(written.split("\n")[1])["subject_id"]


# Texts the CSV writer quotes (a comma, a quote, a carriage return, a line feed) and texts it
# leaves as they are (the empty text, spaces, a tab, a backslash, the rest of AWKWARD).
CSV_TEXTS = [
    AWKWARD,
    "a,b",
    'say "hi"',
    '"',
    "two\nlines",
    "cr\rhere",
    "\r\n",
    "",
    " ",
    "\t",
    "é ü",
]


def _written_by_python(query, columns):  # type: ignore[no-untyped-def]
    """The records' CSV as Python wrote it before PostgreSQL did."""
    rows = list(query.values_list(*columns.values()))
    if not rows:
        return ""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(columns)
    writer.writerows(rows)
    return out.getvalue()


def test_postgresql_writes_the_records_csv_as_the_csv_writer_does(cast):
    people = User.objects.order_by("id")
    for person, text in zip(people, CSV_TEXTS * len(people), strict=False):
        User.objects.filter(pk=person.pk).update(first_name=text, last_name=text[::-1])
    columns = {
        "id": "id",
        "username": "username",
        "first_name": "first_name",
        "last_name": "last_name",
        "staff": "is_staff",
        "joined": TimeText("date_joined"),
        "none": Value(None, output_field=CharField()),
        "empty": Value("", output_field=CharField()),
        "minus": Value(-12, output_field=IntegerField()),
        "nothing": Value(None, output_field=IntegerField()),
        "yes": Value(True, output_field=BooleanField()),
        "unknown": Value(None, output_field=BooleanField()),
        **{f"given {i}": Value(text, output_field=CharField()) for i, text in enumerate(CSV_TEXTS)},
    }
    assert people.count() >= len(CSV_TEXTS)
    assert _records(people, columns) == _written_by_python(people, columns)
    assert _records(people.filter(pk__lt=0), columns) == ""


def test_rows_with_and_without_a_text_to_quote_are_each_written_as_the_csv_writer_does(cast):
    # A row's texts are tested together, then each on its own where one needs quoting: rows
    # needing none, rows where only one text does, and a row of numbers alone.
    people = User.objects.order_by("id")
    texts = [*CSV_TEXTS, "plain"]
    for i, person in enumerate(people):
        User.objects.filter(pk=person.pk).update(
            first_name=texts[i % len(texts)], last_name="plain" if i % 3 else texts[-i % len(texts)]
        )
    assert people.count() >= len(texts)
    columns = {"id": "id", "first_name": "first_name", "staff": "is_staff", "last": "last_name"}
    assert _records(people, columns) == _written_by_python(people, columns)
    numbers = {"id": "id", "joined": TimeText("date_joined"), "staff": "is_staff"}
    assert _records(people, numbers) == _written_by_python(people, numbers)


def test_the_records_csv_refuses_a_type_postgresql_would_write_otherwise(cast):
    with pytest.raises(TypeError, match="no CSV text"):
        _records(User.objects.order_by("id"), {"joined": "date_joined"})
