"""The audit events of an export are read ahead, on a thread with a database connection of its
own, while the records are read: the same lines, the same zip, and what fails there fails the
export."""

from __future__ import annotations

import io
import json
import zipfile
from types import SimpleNamespace

import pytest
from django.db import transaction

from audit.chain import audit_record
from casino.reports import export
from casino.reports.export import _events_jsonl, _EventsAhead, events_of, export_zip
from casino.round_trips import send_held
from tests.apart import apart
from tests.reports.test_shift_report import closed_seance, rendered
from tests.test_json_text import AWKWARD


def test_the_events_read_ahead_on_a_connection_of_their_own_are_the_same_lines(
    transactional_db, cast, monkeypatch
):
    monkeypatch.setattr(export, "EVENTS_AT_A_TIME", 2)
    # Committed (no test transaction around): the export reads them on a thread with a connection
    # of its own.
    with transaction.atomic():
        first = audit_record(actor=cast.tailleur, action="test.ahead", payload={"note": AWKWARD})
        for n in range(4):
            last = audit_record(actor=None, action="test.ahead", payload={"n": n})
    events_range = SimpleNamespace(chain_from=first.seq, chain_to=last.seq)
    ahead = events_of(events_range)  # type: ignore[arg-type]
    assert isinstance(ahead, _EventsAhead)
    parts = list(ahead)
    assert [part.count(b"\n") for part in parts] == [2, 2, 1]
    assert parts == list(_events_jsonl(events_range))  # type: ignore[arg-type]


def test_inside_a_transaction_the_events_are_read_in_it(cast):
    # Another connection would not see what the caller's transaction wrote and has not committed.
    with transaction.atomic():
        event = audit_record(actor=cast.chef, action="test.uncommitted", payload={})
        send_held()  # appended now, not with the commit: its place in the chain is known
        events_range = SimpleNamespace(chain_from=event.seq, chain_to=event.seq)
        lines = b"".join(events_of(events_range))  # type: ignore[arg-type]
    assert json.loads(lines)["action"] == "test.uncommitted"


def test_what_the_read_ahead_raises_is_raised_to_the_export(transactional_db):
    broken = SimpleNamespace(chain_from=None, chain_to=1)  # no range: the thread's reading fails
    with (
        pytest.raises(TypeError),
        zipfile.ZipFile(io.BytesIO(), "w") as zipped,
        export._deflating(zipped) as archive,
    ):
        archive.write_parts("audit/events.jsonl", _EventsAhead(broken))  # type: ignore[arg-type]


def test_a_seance_exported_with_its_events_read_ahead_is_the_same_zip(transactional_db, cast):
    # Signed apart: pyHanko's asyncio.run cannot run where the browser tests' event loop runs,
    # which is this thread when they ran before (transactional tests run last, together).
    report = apart(rendered, closed_seance(hours=0.3, seed=5))
    ahead = zipfile.ZipFile(io.BytesIO(export_zip(report)))  # committed: read ahead
    with transaction.atomic():  # inside a transaction: read on the caller's connection
        inline = zipfile.ZipFile(io.BytesIO(export_zip(report)))
    assert ahead.namelist() == inline.namelist()
    assert ahead.namelist()[:2] == ["report.pdf", "audit/events.jsonl"]
    for name in ahead.namelist():
        assert ahead.read(name) == inline.read(name), name
    events = ahead.read("audit/events.jsonl").decode().splitlines()
    assert len(events) == report.chain_to - report.chain_from + 1
