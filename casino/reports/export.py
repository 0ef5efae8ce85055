"""The regulator's export of a séance or a gaming day: one zip with everything needed to check it
without our database.

- ``report.pdf``: the signed report (``python manage.py verify_report`` or any PAdES validator);
- ``coups.csv|json``, ``stakes.csv``, ``settlements.csv``, ``movements.csv``: the records;
- ``replay/<seal>-<taille>.json``: each talon (a pack from a cut to the cards passing) in the
  replay format (REPLAY.md): every card of the sixain, the prisoners carried in, the stakes, so
  that ``python -m casino.games replay < replay/<seal>-<taille>.json`` reproduces every coup
  (a coup cancelled by the chef de partie has no place in that format: a talon with one is
  exported all the same, and its replay differs from that coup on);
- ``talons.csv``: one row per talon, saying where its undealt cards come from (``undealt``):
  ``recorded`` (the tailleur's count when the cards passed, in the order recorded: ``method``
  scanned is the talon's order, counted the listing's), ``none_left`` (nothing was undealt),
  ``recorded_not_reconciled`` (the count differs from the pack: the cards short and over are
  named, each a critical anomaly, and the replay lists the cards the pack says remain, so that it
  still reproduces the coups as they were settled), or ``not_recorded`` (a talon passed before
  the count was recorded, or still in play: the replay lists the cards the pack says remain, in
  the pack's order; their order is never dealt, so it changes no coup);
- ``audit/events.jsonl`` with ``audit/canonical.py`` and ``audit/verify_events.py``: the audit
  events of the report's range, and a standard-library script that recomputes their hashes and
  checks they link up to the head hash signed in the report;
- ``replay/<seal>-<taille>.json`` for the rounds of the other games, as their package writes them
  (``GameModule.replay_documents``): a Pharao taille is the document the floor rebuilds it from,
  its cards with the bottom card last, its stakes and acts, the approvals named, so that
  ``python -m casino.games replay`` gives back its recorded draws and settlements; and their
  records (``GameModule.export_records``): ``pharao_tailles|draws|stakes|acts|approvals|
  settlements.csv``, the stakes' ids those of the replay documents.
"""

from __future__ import annotations

import csv
import io
import json
import queue
import threading
import time
import zipfile
import zlib
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

from django.contrib.postgres.aggregates import StringAgg
from django.db import connection
from django.db.models import (
    BooleanField,
    CharField,
    Expression,
    ExpressionWrapper,
    F,
    Func,
    IntegerField,
    JSONField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    TextField,
)
from django.db.models.fields.json import KeyTextTransform
from isal import isal_zlib
from psycopg.abc import Buffer
from psycopg.adapt import Loader

from audit import canonical
from audit.canonical import format_time
from audit.models import AuditEvent
from casino.disputes.models import about_seances
from casino.floor.coups import rules_of
from casino.floor.models import Coup, Movement, Settlement, Shift, Stake
from casino.floor.registry import game_module
from casino.json_text import indented
from casino.reports.models import Report
from shoes.models import CardLaid, Pack, TalonCount
from shoes.services import composition

TalonKey = tuple[int, int]  # (pack id, taille)


# audit.canonical.format_time's text (UTC, to the microsecond: 2026-11-22T02:00:00.123456Z), as
# PostgreSQL writes it (tests/reports/test_export_text.py holds the two to the same text).
TIME_TEXT = "to_char(%s AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"


class TimeText(Func):
    """A date and time as ``format_time`` writes it, written by PostgreSQL. A day's export
    writes 200,000 of them: read as datetimes, then formatted again, they cost a third of its
    time."""

    template = TIME_TEXT % "%(expressions)s"
    output_field = CharField()


def _shifts(report: Report) -> QuerySet[Shift]:
    if report.shift_id is not None:  # a séance's report or an addendum to it
        return Shift.objects.filter(pk=report.shift_id)
    from casino.reports.daily_register import shifts_of_day

    assert report.day is not None
    return shifts_of_day(report.day)


def _csv(rows: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    if rows:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return out.getvalue()


COUP_FIELDS = (
    "id",
    "shift__table__number",
    "shift_id",
    "pack__seal_number",
    "taille",
    "number",
    "reglement__name",
    "reglement__version",
    "phase",
    "outcome__id",
    "outcome__noir_total",
    "outcome__rouge_total",
    "outcome__result",
    "outcome__couleur",
    "outcome__void",
    "outcome__last",
)


class CardsText(Func):
    """A JSON list of card codes as one text, the codes between spaces, written by PostgreSQL: a
    day's 6,600 coups' rows read 20,000 JSON values, 30 of their 85 ms."""

    template = "array_to_string(ARRAY(SELECT jsonb_array_elements_text(%(expressions)s)), ' ')"
    output_field = TextField()


# What a coup's row reads besides its ``COUP_FIELDS``, each as its text.
COUP_TEXTS = {
    "opened_text": TimeText("opened_at"),
    "noir_text": CardsText("outcome__noir_cards"),
    "rouge_text": CardsText("outcome__rouge_cards"),
    "announced": KeyTextTransform("result", "outcome__announcement"),
}


def _coup_row(c: dict[str, Any]) -> dict[str, Any]:
    """A coup's row of ``coups.csv|json``, from its ``COUP_FIELDS`` and ``COUP_TEXTS``."""
    settled = c["outcome__id"] is not None
    return {
        "id": c["id"],
        "table": c["shift__table__number"],
        "shift": c["shift_id"],
        "pack": c["pack__seal_number"],
        "taille": c["taille"],
        "number": c["number"],
        "reglement": f"{c['reglement__name']} v{c['reglement__version']}",
        "opened_at": c["opened_text"],
        "phase": c["phase"],
        "noir_cards": c["noir_text"] if settled else "",
        "noir_total": c["outcome__noir_total"] if settled else "",
        "rouge_cards": c["rouge_text"] if settled else "",
        "rouge_total": c["outcome__rouge_total"] if settled else "",
        "result": c["outcome__result"] if settled else "",
        "couleur": c["outcome__couleur"] if settled else "",
        "void": c["outcome__void"] if settled else "",
        "last": c["outcome__last"] if settled else "",
        "announcement": c["announced"] if settled else "",
    }


UndealtSource = Literal["recorded", "recorded_not_reconciled", "none_left", "not_recorded"]


@dataclass(frozen=True)
class Talon:
    """One talon as the export tells it: the cards dealt from it, the undealt cards its replay
    lists, and where those come from (``talons.csv``'s ``undealt``)."""

    dealt: list[str]
    undealt: list[str]
    source: UndealtSource
    count: TalonCount | None


def talon_of(pack: Pack, taille: int) -> Talon:
    """The talon of one taille: the undealt cards the tailleur recorded when the cards passed,
    when they reconcile with the pack; otherwise those the pack says remain (composition less
    the cards laid and burned), in the pack's order."""
    return talons_of({pack.pk: pack}, [(pack.pk, taille)])[pack.pk, taille]


def talons_of(packs: dict[int, Pack], keys: Iterable[TalonKey]) -> dict[TalonKey, Talon]:
    """The talons ``keys`` of ``packs`` (by id), as ``talon_of`` tells each, read together: the
    cards laid from those packs, then their counts."""
    laid: dict[TalonKey, list[tuple[str, bool]]] = defaultdict(list)
    for pack_id, taille, code, burned in (
        CardLaid.objects.filter(pack__in=list(packs))
        .order_by("pack_id", "taille", "seq")
        .values_list("pack_id", "taille", "card", "burned")
    ):
        laid[pack_id, taille].append((code, burned))
    counts = {
        (count.pack_id, count.taille): count
        for count in TalonCount.objects.filter(pack__in=list(packs)).select_related("counted_by")
    }
    return {
        key: _talon(packs[key[0]], laid.get(key, []), counts.get(key))
        for key in dict.fromkeys(keys)
    }


def _talon(pack: Pack, laid: list[tuple[str, bool]], count: TalonCount | None) -> Talon:
    """The talon whose cards ``laid`` (code, burned) came out in that order; ``count``: the
    tailleur's count when the cards passed, if recorded."""
    dealt = [code for code, burned in laid if not burned]
    if count is not None and count.balanced:
        return Talon(dealt, list(count.cards), "recorded", count)
    # Counted by code: a code hashes in C, a card (a dataclass) in Python.
    remaining = composition(pack).codes_left(Counter(code for code, _burned in laid))
    if count is not None:
        return Talon(dealt, remaining, "recorded_not_reconciled", count)
    return Talon(dealt, remaining, "not_recorded" if remaining else "none_left", None)


def replay_document(pack: Pack, taille: int = 1, *, talon: Talon | None = None) -> dict[str, Any]:
    """One talon of the pack (a taille: from a cut to the cards passing) in the replay format of
    REPLAY.md, so that ``python -m casino.games replay`` reproduces its recorded coups: every
    card of the sixain after the burn, the undealt ones included (as the tailleur recorded them
    when the cards passed, or else as the pack says they remain: see ``talon_of``), the
    prisoners carried in, and every stake. Stake ids are the stakes' ids in ``stakes.csv``. The
    règlement is the coup's posted version with the limits it was played under, every parameter
    spelled out."""
    key = (pack.pk, taille)
    return replay_documents({key: talon or talon_of(pack, taille)})[key]


def replay_documents(talons: dict[TalonKey, Talon]) -> dict[TalonKey, dict[str, Any]]:
    """``replay_document`` of each of ``talons``, read together: the first coup of each talon
    (its règlement, and the prison it found), then their stakes."""
    pack_ids = list({pack_id for pack_id, _taille in talons})
    firsts = {
        (coup.pack_id, coup.taille): coup
        for coup in _first_coups(pack_ids)
        if (coup.pack_id, coup.taille) in talons
    }
    stakes = _replay_stakes(pack_ids)
    return {
        key: {
            "game": "trente-et-quarante",
            "reglement": {"preset": "baden-1854", "overrides": _overrides(firsts[key])},
            "cards": talon.dealt + talon.undealt,
            "prison": list(firsts[key].prison_before or []),
            "stakes": stakes.get(key, []),
        }
        for key, talon in talons.items()
    }


def _first_coups(pack_ids: list[int]) -> QuerySet[Coup]:
    """The first coup of each talon of the packs, with its règlement and ``prison_before``: the
    table's prison as that coup found it (REPLAY.md ``prison``), what the last coup settled at
    its table before it left there, carried from sixain to sixain."""
    # The last result at the table before it is that of the last coup there that has one: a
    # table has one coup in progress at a time, so its coups are settled in their order. Looked
    # up by coup, PostgreSQL reads the coups back from this one; looked up by result, it read
    # the results back from the room's newest (a month of them, for the month's first day).
    last_settled_before = (
        Coup.objects.filter(
            shift__table_id=OuterRef("shift__table_id"),
            id__lt=OuterRef("pk"),
            outcome__isnull=False,
        )
        .order_by("-id")
        .values("outcome__prison_after")[:1]
    )
    firsts = (
        Coup.objects.filter(pack__in=pack_ids)
        .order_by("pack_id", "taille", "number")
        .distinct("pack_id", "taille")  # PostgreSQL's DISTINCT ON: the first row of each talon
        .values("pk")
    )
    # The prison is looked up for the first coups alone: beside DISTINCT ON, PostgreSQL would
    # look it up for every coup of the packs before keeping the first of each talon.
    return (
        Coup.objects.filter(pk__in=firsts)
        .select_related("reglement")
        .annotate(prison_before=Subquery(last_settled_before, output_field=JSONField()))
    )


def _overrides(coup: Coup) -> dict[str, Any]:
    """The règlement of the coup, with its limits, every parameter spelled out (its name is
    the preset's)."""
    rules = json.loads(rules_of(coup).to_json())
    rules.pop("name")
    return rules


def _coups_between(ids: list[int], field: str = "coup__id") -> Q:
    """``field`` (a coup's id) between the first and last of ``ids``, the coups a query is
    about, said besides them (nothing without a coup). A day's coups are a few thousand in a
    row; told only which, PostgreSQL read the month's 700,000 stakes (or settlements, or 200,000
    coups' results) to keep a day's, where a range of ids is read by index: 0.13 s of a day's
    export, in four reads."""
    if not ids:
        return Q()
    return Q(**{f"{field}__range": (min(ids), max(ids))})


def _replay_stakes(pack_ids: list[int]) -> dict[TalonKey, list[dict[str, Any]]]:
    """The stakes of each talon of the packs as the replay lists them, in the order of their
    coups; a stake withdrawn before the first card has no place there."""
    stakes: dict[TalonKey, list[dict[str, Any]]] = defaultdict(list)
    # The ids themselves (3 ms): PostgreSQL's MIN(id) of the packs' coups walked the month's
    # coups by id, from the first, to the first of the packs' (17 ms).
    coups = list(Coup.objects.filter(pack__in=pack_ids).values_list("id", flat=True))
    for pack_id, taille, number, pk, chance, amount, insured, on_refait in (
        Stake.objects.filter(
            _coups_between(coups), coup__pack__in=pack_ids, withdrawal__isnull=True
        )
        .order_by("coup__pack_id", "coup__taille", "coup__number", "id")
        .values_list(
            "coup__pack_id",
            "coup__taille",
            "coup__number",
            "id",
            "chance",
            "amount",
            "insured",
            "on_refait",
        )
    ):
        item: dict[str, Any] = {"id": str(pk), "coup": number, "chance": chance, "amount": amount}
        if insured:
            item["insured"] = True
        if on_refait:
            item["on_refait"] = on_refait
        stakes[pack_id, taille].append(item)
    return stakes


def _named(cards: dict[str, int]) -> str:
    return " ".join(f"{code}x{n}" for code, n in cards.items())


def _talon_row(pack: Pack, taille: int, file: str, talon: Talon) -> dict[str, Any]:
    count = talon.count
    return {
        "pack": pack.seal_number,
        "taille": taille,
        "replay": file,
        "dealt": len(talon.dealt),
        "undealt": talon.source,
        "undealt_in_replay": len(talon.undealt),
        "method": count.method if count else "",
        "counted_by": count.counted_by.username if count else "",
        "counted_at": format_time(count.at) if count else "",
        "expected": count.expected if count else "",
        "counted": len(count.cards) if count else "",
        "missing": _named(count.missing) if count else "",
        "extra": _named(count.extra) if count else "",
        "recorded_cards": " ".join(count.cards) if count else "",
    }


# A field of a row as Python's ``csv.writer`` writes it (its defaults: QUOTE_MINIMAL, a quote
# doubled), by the field's type, written by PostgreSQL: None as nothing, a number as ``str``
# writes it (and a time's ``TimeText``: neither ever holds what is quoted), a flag as True or
# False, a text as it is unless it holds a comma, a quote, a carriage return or a line feed (then
# quoted). tests/reports/test_export_text.py holds the two to the same text.
TO_QUOTE = r"""E'[",\r\n]'"""  # what a text is quoted for
CSV_FIELDS = {
    "plain": "COALESCE(({0})::text, '')",
    "flag": "CASE ({0})::boolean WHEN true THEN 'True' WHEN false THEN 'False' ELSE '' END",
    "text": f"""CASE WHEN {{0}} ~ {TO_QUOTE} THEN '"' || replace({{0}}, '"', '""') || '"'
        ELSE COALESCE({{0}}, '') END""",
}


def _csv_kind(expression: Any) -> str | None:
    """The ``CSV_FIELDS`` kind of a column, by its field's type (a foreign key's, by the field it
    points to); None for a type Python writes otherwise (a date, a decimal)."""
    if isinstance(expression, TimeText):
        return "plain"
    field = expression.output_field
    field = getattr(field, "target_field", field)
    if isinstance(field, BooleanField):
        return "flag"
    if isinstance(field, IntegerField):  # the auto fields and every integer field derive from it
        return "plain"
    if isinstance(field, (CharField, TextField)):
        return "text"
    return None


class CsvRow(Func):
    """The fields of a row of ``csv.writer`` (``CSV_FIELDS``), joined by commas, without its
    line terminator. A type the table does not name (a date, a decimal) is refused: Python
    writes it otherwise."""

    output_field = TextField()

    def as_sql(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list[Any]]:
        compiled = []
        for expression in self.get_source_expressions():
            kind = _csv_kind(expression)
            if kind is None:
                raise TypeError(f"no CSV text for {expression.output_field!r} in PostgreSQL")
            sql, params = compiler.compile(expression)
            compiled.append((kind, sql, list(params)))
        quoted, quoted_params = self._row(compiled)
        texts = [(sql, params) for kind, sql, params in compiled if kind == "text"]
        if not texts:
            return quoted, quoted_params
        # Nearly every row of a day's records holds nothing to quote: its texts are tested once,
        # together, and each on its own only in a row that holds something to quote. A test a
        # text made the day's three reads 411 ms, against 327 (issue 17, one process, 15 each).
        plain, plain_params = self._row(
            [("plain" if kind == "text" else kind, sql, params) for kind, sql, params in compiled]
        )
        together = ", ".join(sql for sql, _params in texts)
        return (
            f"CASE WHEN concat({together}) ~ {TO_QUOTE} THEN {quoted} ELSE {plain} END",
            [*(p for _sql, params in texts for p in params), *quoted_params, *plain_params],
        )

    @staticmethod
    def _row(compiled: list[tuple[str, str, list[Any]]]) -> tuple[str, list[Any]]:
        """The fields joined by commas, each written as its kind is (``CSV_FIELDS``)."""
        fields, params = [], []
        for kind, sql, field_params in compiled:
            template = CSV_FIELDS[kind]
            fields.append(template.format(sql))
            params.extend(field_params * template.count("{0}"))
        return " || ',' || ".join(fields), params


def _records(query: QuerySet[Any], columns: dict[str, str | Expression]) -> str:
    """``query``'s records as CSV, the text of ``_csv`` of the same rows as dicts (nothing at all
    without a row): ``columns`` names each column of the header and the field (or expression)
    it is read from. The rows are written by PostgreSQL (``CsvRow``), in the query's order, in
    one text: a day's stakes, settlements and movements, read as rows and written by the C
    writer, took 0.3 s of Python's time."""
    fields = [F(column) if isinstance(column, str) else column for column in columns.values()]
    text = query.aggregate(
        rows=StringAgg(CsvRow(*fields), delimiter="\r\n", order_by=query.query.order_by)
    )["rows"]
    if text is None:  # no row: no header either, as ``_csv``
        return ""
    header = io.StringIO()
    csv.writer(header).writerow(columns)
    return f"{header.getvalue()}{text}\r\n"


# One line of ``audit/events.jsonl`` per event, written by PostgreSQL: 114,000 a day, which
# Python took a second to read and write again. The text of ``json.dumps(event,
# ensure_ascii=False)`` and its line feed: the keys in this order, ", " and ": " between them,
# each text escaped as ``to_json`` and ``json.dumps`` both escape it (\" \\ \b \f \n \r \t,
# other control characters as \u00xx, everything else as it is);
# tests/reports/test_export_text.py holds them together. Every field goes through ``to_json``,
# the hashes too: they are hex digests when our writer made them, but the export must say
# exactly what is stored, an edited row included, for the verifier to name it. The
# lines come in rows of 256: a row each cost Python 0.1 s more of a day's export to take in, the
# lines of a part in one text (``string_agg`` sorting them all) cost PostgreSQL 0.15 s more.
EVENT_LINES = f"""
SELECT string_agg(
    '{{"seq": ' || seq
    || ', "at": "' || {TIME_TEXT % "at"}
    || '", "actor_id": ' || COALESCE(actor_id::text, 'null')
    || ', "actor_name": ' || to_json(actor_name)
    || ', "action": ' || to_json(action)
    || ', "subject_type": ' || to_json(subject_type)
    || ', "subject_id": ' || to_json(subject_id)
    || ', "prev_hash": ' || to_json(prev_hash)
    || ', "payload": ' || to_json(payload)
    || ', "hash": ' || to_json(hash)
    || E'}}\n',
    '' ORDER BY seq
)
FROM {AuditEvent._meta.db_table}
WHERE seq BETWEEN %s AND %s
GROUP BY seq / 256
ORDER BY seq / 256
"""
# Events read at a time: each part is deflated while PostgreSQL writes the next (a day's 114,000
# in 7 parts of 7 MiB).
EVENTS_AT_A_TIME = 16_384


class _TextAsBytes(Loader):
    """A text as PostgreSQL sends it (UTF-8), for the zip: not decoded to be encoded again."""

    def load(self, data: Buffer) -> bytes:
        return bytes(data)


def _events_jsonl(report: Report) -> Iterator[bytes]:
    """The audit events of the report's range, one JSON object a line, in parts."""
    with connection.cursor() as cursor:
        cursor.cursor.adapters.register_loader("text", _TextAsBytes)
        for first in range(report.chain_from, report.chain_to + 1, EVENTS_AT_A_TIME):
            cursor.execute(EVENT_LINES, [first, min(first + EVENTS_AT_A_TIME - 1, report.chain_to)])
            yield b"".join([lines for (lines,) in cursor.fetchall()])


class _EventsAhead:
    """``_events_jsonl`` read from the start on a thread with a database connection of its own,
    while the caller reads and writes the records: two PostgreSQL processes then work at once,
    and the deflater (``_Deflater``) takes the parts as they come. Another connection reads what
    is committed alone, which is all of a report's range: its events were appended and committed
    before the report named them, and never change (``events_of`` says when it is used).

    Read on the caller's connection, the events' seven reads took 0.3 s of a day's export, and
    their deflating (0.2 s) came after everything else: 1.06 s through the API, against 0.88 s
    read ahead (``make bench BENCH=month``)."""

    def __init__(self, report: Report) -> None:
        # A part, then None at the end, or what the reading raised.
        self._parts: queue.SimpleQueue[bytes | BaseException | None] = queue.SimpleQueue()
        self._thread = threading.Thread(
            target=self._read, args=(report,), name="export-events", daemon=True
        )
        self._thread.start()

    def _read(self, report: Report) -> None:
        try:
            try:
                for part in _events_jsonl(report):
                    self._parts.put(part)
            finally:
                connection.close()  # this thread's own
        except BaseException as error:  # raised again where the parts are taken
            self._parts.put(error)
        else:
            self._parts.put(None)

    def __iter__(self) -> Iterator[bytes]:
        while (part := self._parts.get()) is not None:
            if isinstance(part, BaseException):
                raise part
            yield part


def events_of(report: Report) -> Iterable[bytes]:
    """The report's ``audit/events.jsonl``, in parts: read ahead (``_EventsAhead``) unless the
    caller is inside a transaction (a test's), which another connection would not see: then on
    the caller's connection, as the records."""
    if connection.in_atomic_block:
        return _events_jsonl(report)
    return _EventsAhead(report)


class _Deflater:
    """The zip's members written (deflated, their CRC computed) on a thread of its own, in the
    order they are given: ISA-L's deflate lets go of the GIL (as zlib's does), so a member is
    deflated on the second core while the next one (or the next part of it) is read and
    written. The caller's connection is used on the caller's thread alone: a member's parts are
    read there, unless they are read ahead on a connection of their own (``_EventsAhead``)."""

    def __init__(self, archive: zipfile.ZipFile) -> None:
        self._archive = archive
        # A member's name (the previous member is complete), a part of its text, its parts read
        # ahead, or None: the end. Unbounded: the day's text is held anyway.
        self._items: queue.SimpleQueue[tuple[str, str | bytes | _EventsAhead] | None] = (
            queue.SimpleQueue()
        )
        self._failed: BaseException | None = None
        self._thread = threading.Thread(target=self._write, name="export-deflate", daemon=True)
        self._thread.start()

    def writestr(self, name: str, text: str | bytes) -> None:
        self.write_parts(name, [text])

    def write_parts(self, name: str, parts: Iterable[str | bytes]) -> None:
        """The member ``name``, its text in ``parts``: read on the caller's thread, or taken by
        the deflater as they come when they are read ahead (the caller goes on)."""
        self._items.put(("member", name))
        if isinstance(parts, _EventsAhead):
            self._items.put(("ahead", parts))
            return
        for part in parts:
            self._items.put(("part", part))

    def close(self) -> None:
        """Waits for every member to be written; raises what the writing raised."""
        self._items.put(None)
        self._thread.join()
        if self._failed is not None:
            raise self._failed

    def _write(self) -> None:
        member: IO[bytes] | None = None
        while (item := self._items.get()) is not None:
            if self._failed is not None:  # after a failure, what is left is only drained
                continue
            try:
                match item:
                    case ("member", str(name)):
                        if member is not None:
                            member.close()
                        member = _deflated_by_isal(self._archive.open(self._info(name), "w"))
                    case ("part", str(text)):
                        member.write(text.encode())  # type: ignore[union-attr]
                    case ("part", bytes(data)):
                        member.write(data)  # type: ignore[union-attr]
                    case ("ahead", _EventsAhead() as ahead):
                        for data in ahead:
                            member.write(data)  # type: ignore[union-attr]
            except BaseException as error:  # raised again by close, on the caller's thread
                self._failed = error
        if member is not None:
            # After a failure too: the caller then closes the zip (to throw it away), which
            # refuses to close with a member open, and that refusal would hide what failed.
            try:
                member.close()
            except BaseException as error:
                self._failed = self._failed or error

    def _info(self, name: str) -> zipfile.ZipInfo:
        """The member's entry as ``ZipFile.writestr`` makes it (its time, its mode, the archive's
        compression and level), for a text written in parts."""
        info = zipfile.ZipInfo(name, date_time=time.localtime(time.time())[:6])
        info.compress_type = self._archive.compression
        info._compresslevel = self._archive.compresslevel  # type: ignore[attr-defined]
        info.external_attr = 0o600 << 16
        return info


# ISA-L's deflate at its level 1: a day's events (48 MiB of text) in 81 ms where zlib's fastest
# level takes 273, into 8.9 MiB where zlib gives 9.5 (issue 17, fourteenth round). The same raw
# deflate stream: any unzip reads it, zipfile's CRC checks it.
ISAL_LEVEL = 1


def _deflated_by_isal(member: IO[bytes]) -> IO[bytes]:
    """``member``, opened by ``ZipFile.open(..., "w")``, deflated by ISA-L (``isal``) instead of
    zlib: zipfile makes the member's compressor itself (``_compressor``, in CPython 3.11's
    zipfile), replaced here before the first byte is written. A member that is not deflated is left as
    it is; so is one whose compressor zipfile no longer keeps there (then zlib deflates it)."""
    if isinstance(getattr(member, "_compressor", None), _ZLIB_COMPRESS):
        member._compressor = isal_zlib.compressobj(  # type: ignore[attr-defined]
            ISAL_LEVEL, isal_zlib.DEFLATED, -15
        )
    return member


_ZLIB_COMPRESS = type(zlib.compressobj())


@contextmanager
def _deflating(archive: zipfile.ZipFile) -> Iterator[_Deflater]:
    deflater = _Deflater(archive)
    try:
        yield deflater
    finally:
        deflater.close()


def export_zip(report: Report) -> bytes:
    events = events_of(report)  # read ahead, from the start
    shifts = list(_shifts(report))
    disputes_refs = [d.reference for d in about_seances([s.pk for s in shifts])]
    buffer = io.BytesIO()
    # Deflate's fastest level: a day's 66 MiB of text deflated at zlib's default level (6) took
    # 0.4 s more of the export's 2.4 s, for a zip 15% smaller (issue 17: 10.7 against 9.1 MiB);
    # ISA-L deflates it (``_deflated_by_isal``).
    with (
        zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zipped,
        _deflating(zipped) as archive,
    ):
        if report.rendered_at is not None:
            with report.pdf.open("rb") as pdf:
                archive.writestr("report.pdf", pdf.read())
        # First, to be deflated as they come, while the records are read.
        archive.write_parts("audit/events.jsonl", events)
        # The records of a day run to tens of thousands of rows: read as values, not as model
        # instances (with their related ones), which cost most of the export's time.
        # The day's coups: their ids bound the reads below; their packs and tailles are the talons.
        day_coups = list(
            Coup.objects.filter(shift__in=shifts).values_list("id", "pack_id", "taille")
        )
        coup_ids = [pk for pk, _pack, _taille in day_coups]
        coup_rows = [
            _coup_row(c)
            for c in Coup.objects.filter(_coups_between(coup_ids, "id"), shift__in=shifts)
            .order_by("id")
            .values(*COUP_FIELDS, **COUP_TEXTS)
        ]
        archive.writestr("coups.csv", _csv(coup_rows))
        archive.writestr("coups.json", indented(coup_rows))
        archive.writestr(
            "stakes.csv",
            _records(
                Stake.objects.filter(_coups_between(coup_ids), coup__shift__in=shifts).order_by(
                    "id"
                ),
                {
                    "id": "id",
                    "coup": "coup_id",
                    "ref": "ref",
                    "holder": "holder__code",
                    "chance": "chance",
                    "amount": "amount",
                    "insured": "insured",
                    "on_refait": "on_refait",
                    "withdrawn": ExpressionWrapper(
                        Q(withdrawal__isnull=False), output_field=BooleanField()
                    ),
                    "placed_by": "placed_by__username",
                    "placed_at": TimeText("placed_at"),
                },
            ),
        )
        archive.writestr(
            "settlements.csv",
            _records(
                Settlement.objects.filter(
                    _coups_between(coup_ids), coup__shift__in=shifts
                ).order_by("id"),
                {
                    "coup": "coup_id",
                    "stake": "stake_id",
                    "outcome": "outcome",
                    "paid": "paid",
                    "returned": "returned",
                    "to_bank": "to_bank",
                    "premium": "premium",
                    "held": "held",
                    "level": "level",
                },
            ),
        )
        archive.writestr(
            "movements.csv",
            _records(
                Movement.objects.filter(
                    Q(shift__in=shifts) | Q(reference__in=disputes_refs)
                ).order_by("id"),
                {
                    "id": "id",
                    "at": TimeText("at"),
                    "kind": "kind",
                    "from": "credit__code",
                    "to": "debit__code",
                    "amount": "amount",
                    "shift": "shift_id",  # none: the CSV writer writes None as ""
                    "reference": "reference",
                    "idempotency_key": "idempotency_key",
                    "actor": "actor__username",
                },
            ),
        )
        keys = sorted({(pack_id, taille) for _pk, pack_id, taille in day_coups})
        packs = Pack.objects.in_bulk({pack_id for pack_id, _taille in keys})
        talons = talons_of(packs, keys)
        documents = replay_documents(talons)
        talon_rows = []
        for (pack_id, taille), talon in talons.items():
            pack = packs[pack_id]
            file = f"replay/{pack.seal_number}-{taille}.json"
            archive.writestr(file, indented(documents[pack_id, taille]))
            talon_rows.append(_talon_row(pack, taille, file, talon))
        archive.writestr("talons.csv", _csv(talon_rows))
        # The rounds each game keeps its own way (a Pharao taille...), as its package writes them.
        for game in sorted({s.table.game for s in shifts}):
            module = game_module(game)
            for name, document in module.replay_documents(shifts):
                archive.writestr(f"replay/{name}", indented(document))
            for stem, rows in module.export_records(shifts).items():
                archive.writestr(f"{stem}.csv", _csv(rows))
        archive.writestr("audit/canonical.py", Path(canonical.__file__).read_text())
        archive.writestr(
            "audit/verify_events.py", (Path(__file__).parent / "verify_events.py").read_text()
        )
        archive.writestr(
            "README.txt",
            f"{report}\n\n{__doc__}\nHead hash signed in the report: {report.head_hash} "
            f"(event #{report.chain_to}).\n"
            f"cd audit && python verify_events.py {report.head_hash}\n",
        )
    return buffer.getvalue()
