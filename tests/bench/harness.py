"""A fresh database for the benchmarks on the configured (or embedded) server, and timing helpers."""

from __future__ import annotations

import contextlib
import os
import statistics
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

# Pharao's and Alliance's services / bulk in one transaction: printed, not held to the 5x aim,
# which their rounds meet against their rows written one durable transaction an act
# (docs/speed.md, "The aim, decided").
HELD_AGAINST_DURABILITY = "the aim is held against the acts' durability, below: docs/speed.md"


def use_bench_database() -> None:
    """Point DATABASE_URL at ``<name>_bench``, created afresh, then set Django up and migrate."""
    import psycopg

    # The benchmarks load history straight into the tables: as the owner, the one URL from then on.
    url = os.environ.pop("DATABASE_OWNER_URL", None) or os.environ["DATABASE_URL"]
    parts = urlsplit(url)
    name = parts.path.lstrip("/") + "_bench"
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    os.environ["DATABASE_URL"] = urlunsplit(parts._replace(path=f"/{name}"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casino.settings")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def median_time(fn: Callable[[], object], runs: int = 3) -> float:
    """The median wall time of ``runs`` calls, in seconds."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def interleaved_medians(*fns: Callable[[], object], runs: int = 5) -> list[float]:
    """The median wall time of each of ``fns`` over ``runs`` rounds, each round calling every one
    once in turn: on a shared machine a burst of load then falls on all of them alike, so their
    ratios hold better than with one function's runs after the other's."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(runs):
        for fn, spent in zip(fns, times, strict=True):
            started = time.perf_counter()
            fn()
            spent.append(time.perf_counter() - started)
    return [statistics.median(spent) for spent in times]


def report(title: str, rows: list[tuple[str, str]]) -> None:
    print(f"\n## {title}")
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"  {label:<{width}}  {value}")


def open_seance(*, chef, croupier, directeur, table, chips, tailleur, croupiers):  # type: ignore[no-untyped-def]
    """A séance opened as the floor opens one: the croupier counts, the director countersigns,
    the chef de partie opens with that count (three acts, three people)."""
    from casino.floor.services import count_countersign, count_record, shift_open

    count = count_record(actor=croupier, table_id=table.pk, moment="opening", chips=chips)
    count_countersign(actor=directeur, count_id=count.pk)
    return shift_open(
        actor=chef, table=table, count_id=count.pk, tailleur=tailleur, croupiers=croupiers
    )


def table_in_play(*, directeur, commissaire, caissier, staff, posted, number, seal):  # type: ignore[no-untyped-def]
    """A table in séance with a sixain opened on it, as the floor gets there: the table created,
    the séance opened (see ``open_seance``), the pack received and stored by the cashier, its seal
    verified by the commissioner, opened by the chef de partie. ``staff`` names the tailleur,
    croupier and chef de partie. Returns the séance and the pack."""
    from casino.floor.services import table_create
    from shoes import services as packs

    table = table_create(
        actor=directeur,
        number=number,
        game="trente-et-quarante",
        reglement_id=posted.pk,
        min_stake=500,
        max_stake=600_000,
    )
    shift = open_seance(
        chef=staff["chef"],
        croupier=staff["croupier"],
        directeur=directeur,
        table=table,
        chips={"10000": 50},
        tailleur=staff["tailleur"],
        croupiers=[staff["croupier"]],
    )
    pack = packs.pack_receive(
        actor=caissier,
        kind="sixain",
        maker="bench",
        maker_pack_numbers="-",
        seal_number=seal,
        sealing_authority="-",
        store_location="-",
    )
    packs.pack_store(actor=caissier, pack_id=pack.pk)
    packs.seal_verify(
        actor=commissaire, pack_id=pack.pk, seal_number_read=pack.seal_number, verdict="intact"
    )
    packs.pack_open(actor=staff["chef"], pack_id=pack.pk, shift_id=shift.pk)
    return shift, pack


def close_seance(*, chef, croupier, directeur, shift, chips):  # type: ignore[no-untyped-def]
    from casino.floor.services import count_countersign, count_record, shift_close

    count = count_record(actor=croupier, table_id=shift.table_id, moment="closing", chips=chips)
    count_countersign(actor=directeur, count_id=count.pk)
    return shift_close(actor=chef, shift=shift, count_id=count.pk)


def bulk_chained_events(
    *, subject: str, subject_id: int, count: int, head: tuple[int, str]
) -> tuple[int, str]:
    """``count`` audit events about one record, chained after ``head`` (seq, hash) and written
    with one bulk INSERT: what a bulk baseline writes beside its rows. Returns the new head."""
    import datetime as dt
    import hashlib

    from audit.canonical import canonical_json, event_bytes, format_time
    from audit.models import AuditEvent

    seq, prev = head
    events = []
    at = dt.datetime.now(dt.UTC)
    for i in range(count):
        seq += 1
        payload = canonical_json({subject.rsplit(".", 1)[1]: subject_id, "i": i})
        digest = hashlib.sha256(
            event_bytes(
                seq=seq,
                at=format_time(at),
                actor_id=None,
                actor_name="system",
                action="bench.bulk",
                subject_type=subject,
                subject_id=str(subject_id),
                prev_hash=prev,
                payload=payload,
            )
        ).hexdigest()
        events.append(
            AuditEvent(
                seq=seq,
                at=at,
                actor_name="system",
                action="bench.bulk",
                subject_type=subject,
                subject_id=str(subject_id),
                payload=payload,
                prev_hash=prev,
                hash=digest,
            )
        )
        prev = digest
    AuditEvent.objects.bulk_create(events)
    return seq, prev


def audit_head() -> tuple[int, str]:
    """The seq and hash of the chain's last event (the genesis before the first)."""
    from audit.models import AuditEvent

    last = AuditEvent.objects.order_by("-seq").first()
    return (last.seq, last.hash) if last else (0, "0" * 64)


def bulk_copy(model: Any, rows: Iterable[Any], **changes: Any) -> list[Any]:
    """Copies of ``rows`` written with one bulk INSERT: every field as it was, but the primary
    key and ``changes`` (by field name: a value, or a function of the copy's index and the row)."""
    meta = model._meta
    fields = [f for f in meta.concrete_fields if not f.primary_key]
    copies = []
    for i, row in enumerate(rows):
        values = {f.attname: getattr(row, f.attname) for f in fields}
        for name, change in changes.items():
            field = meta.get_field(name)
            value = change(i, row) if callable(change) else change
            values[field.attname] = value.pk if field.is_relation and value is not None else value
        copies.append(model(**values))
    return list(model.objects.bulk_create(copies))


def bulk_written(
    copy: Callable[[int], Any],
    *,
    copies: int,
    subject: str,
    events_each: int | Callable[[int], int],
    commits_each: int | Callable[[int], int] | None = None,
) -> list[float]:
    """The baseline of a bench through the services: ``copies`` records written by ``copy(n)``
    (plain bulk INSERTs of the rows the services wrote; it returns the new record), each with
    ``events_each`` (or ``events_each(n)``) chained audit events about it, in one transaction.
    The database's checks run statement by statement (not deferred to the commit), so each
    copy's time is whole. Returns each copy's seconds.

    With ``commits_each`` (or ``commits_each(n)``: the record's acts), each copy is written in
    that many durable transactions instead, its rows in the first and its events spread over
    all: the same rows with the durability of the acts, one commit each (issue 17's question on
    what the services are measured against)."""
    from django.db import connection, transaction

    times = []
    if commits_each is None:
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            head = audit_head()
            for n in range(copies):
                started = time.perf_counter()
                new = copy(n)
                count = events_each(n) if callable(events_each) else events_each
                head = bulk_chained_events(
                    subject=subject, subject_id=new.pk, count=count, head=head
                )
                times.append(time.perf_counter() - started)
        return times
    head = audit_head()
    for n in range(copies):
        started = time.perf_counter()
        count = events_each(n) if callable(events_each) else events_each
        commits = commits_each(n) if callable(commits_each) else commits_each
        assert count >= commits, (count, commits)  # every act writes an event
        for i in range(commits):
            with transaction.atomic():  # its checks at its commit, inside the copy's time
                if i == 0:
                    new = copy(n)
                head = bulk_chained_events(
                    subject=subject,
                    subject_id=new.pk,
                    count=count // commits + (i < count % commits),
                    head=head,
                )
        times.append(time.perf_counter() - started)
    return times


def bench_house(prefix: str) -> tuple[object, object]:
    """The house's director and commissioner: bootstrapped on the fresh database, then reused."""
    from django.contrib.auth.models import User

    from casino.people.services import people_bootstrap

    if not User.objects.filter(groups__name="directeur").exists():
        people_bootstrap(
            directeur=(f"{prefix}-directeur", "directeur"),
            commissaire=(f"{prefix}-commissaire", "commissaire"),
            inspecteur=(f"{prefix}-inspecteur", "inspecteur"),
        )
    directeur = User.objects.filter(groups__name="directeur").order_by("pk").first()
    commissaire = User.objects.filter(groups__name="commissaire").order_by("pk").first()
    return directeur, commissaire


def bench_people(prefix: str, **roles: Any) -> dict[str, Any]:
    """The house's director and commissioner (``bench_house``) and, for each ``name=Role``, a
    new person ``<prefix>-<name>`` holding it; all by name."""
    from casino.people.services import staff_create

    directeur, commissaire = bench_house(prefix)
    people = {
        name: staff_create(
            actor=directeur, username=f"{prefix}-{name}", full_name=name, roles=[role]
        )
        for name, role in roles.items()
    }
    return {"directeur": directeur, "commissaire": commissaire, **people}


@contextlib.contextmanager
def gunicorn(*, workers: int, **env: str) -> Iterator[int]:
    """The web server as production runs it, on a free port of this machine (``env``: settings
    of its own, REDIS_URL say); yields the port."""
    import subprocess
    import sys

    from casino.runtime import free_port, wait_for_port

    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "casino.wsgi",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(workers),
            "--log-level",
            "warning",
            "--no-control-socket",
        ],
        # No collectstatic here: whitenoise's warning about the missing folder is noise.
        env={**os.environ, "DEBUG": "0", "PYTHONWARNINGS": "ignore::UserWarning", **env},
    )
    try:
        wait_for_port(port, timeout=30)
        yield port
    finally:
        server.terminate()
        server.wait(timeout=30)


def act_floor(round_: Any, person: Any, post: str, runs: int = 300) -> float:
    """The median seconds of an act that does nothing but what every table act does: its
    transaction, its round (a coup, a taille, a deal) locked with ``person``'s duty as ``post``
    checked, its audit event, the commit. The floor under each act, whatever the act writes."""
    from django.db import transaction

    from audit.chain import audit_record
    from casino.floor.services import round_locked

    def act() -> float:
        started = time.perf_counter()
        with transaction.atomic():
            round_locked(type(round_), round_.pk, person, post, act="bench")
            audit_record(actor=person, action="bench.empty_act", subject=round_)
        return time.perf_counter() - started

    return statistics.median([act() for _ in range(runs)])
