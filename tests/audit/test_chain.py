from __future__ import annotations

import doctest
import threading

import pytest
from django.core.management import call_command
from django.db import DatabaseError, connection, connections, transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import audit.canonical
from audit.canonical import GENESIS_HASH, event_bytes, event_hash, format_time
from audit.chain import AuditOutsideTransaction, audit_record, verify_chain
from audit.models import AuditEvent, ChainHead
from tests.conftest import as_owner


def append(n: int, actor=None, action: str = "test.appended") -> None:
    for i in range(n):
        with transaction.atomic():
            audit_record(actor=actor, action=action, payload={"i": i, "note": "é\nligne"})


def test_canonical_forms_are_documented_by_their_examples():
    assert doctest.testmod(audit.canonical).failed == 0


def test_events_are_chained_from_genesis(db):
    append(3)
    events = list(AuditEvent.objects.order_by("seq"))
    assert [e.seq for e in events] == [1, 2, 3]
    assert events[0].prev_hash == GENESIS_HASH
    assert events[1].prev_hash == events[0].hash
    recomputed = event_hash(
        event_bytes(
            seq=2,
            at=format_time(events[1].at),
            actor_id=None,
            actor_name="system",
            action="test.appended",
            subject_type="",
            subject_id="",
            prev_hash=events[0].hash,
            payload=events[1].payload,
        )
    )
    assert recomputed == events[1].hash
    head = ChainHead.objects.get()
    assert (head.seq, head.hash) == (3, events[2].hash)


def test_an_event_by_a_person_is_hashed_as_the_reference_hashes_it(db):
    from django.contrib.auth.models import User

    person = User.objects.create(username="croupière-1")
    with transaction.atomic():
        event = audit_record(
            actor=person, action="test.by_a_person", subject=("test.thing", 7), payload={"é": 1}
        )
    stored = AuditEvent.objects.get(seq=event.seq)
    assert (stored.actor_id, stored.actor_name) == (person.pk, "croupière-1")
    assert stored.hash == event.hash
    assert event.hash == event_hash(
        event_bytes(
            seq=stored.seq,
            at=format_time(stored.at),
            actor_id=person.pk,
            actor_name="croupière-1",
            action="test.by_a_person",
            subject_type="test.thing",
            subject_id="7",
            prev_hash=stored.prev_hash,
            payload='{"é":1}',
        )
    )


def test_audit_record_refuses_to_write_outside_a_transaction(transactional_db):
    with pytest.raises(AuditOutsideTransaction):
        audit_record(actor=None, action="test.loose")


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE audit_auditevent SET payload = '{}' WHERE seq = 1",
        "DELETE FROM audit_auditevent WHERE seq = 1",
        "TRUNCATE audit_auditevent CASCADE",
    ],
)
def test_database_refuses_to_edit_audit_events(db, statement):
    append(1)
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(statement)
    assert AuditEvent.objects.get(seq=1).payload != "{}"


def test_database_refuses_an_event_that_does_not_follow_the_head(db):
    append(2)
    with pytest.raises(DatabaseError), transaction.atomic():
        AuditEvent.objects.create(
            seq=5,
            at=AuditEvent.objects.get(seq=1).at,
            actor_name="x",
            action="forged",
            payload="{}",
            prev_hash="0" * 64,
            hash="f" * 64,
        )


def test_database_refuses_to_move_the_head_anywhere_but_the_last_event(db):
    append(2)
    with pytest.raises(DatabaseError), transaction.atomic():
        ChainHead.objects.filter(pk=1).update(seq=1, hash=AuditEvent.objects.get(seq=1).hash)


def tamper(sql: str) -> None:
    """What a superuser with psql could do (the application's role cannot): switch the triggers off
    for the session and edit. Committed, so the tests that tamper are transactional."""
    with as_owner(), connection.cursor() as cursor:
        cursor.execute("SET session_replication_role = replica")
        cursor.execute(sql)


def test_verify_audit_names_the_tampered_event(transactional_db, capsys):
    append(10)
    call_command("verify_audit")
    assert "audit chain verified: 10 events" in capsys.readouterr().out

    tamper("""UPDATE audit_auditevent SET payload = '{"i":6,"note":"forged"}' WHERE seq = 7""")
    with pytest.raises(SystemExit) as exit_:
        call_command("verify_audit")
    assert exit_.value.code == 1
    assert "BROKEN at event #7" in capsys.readouterr().err


def test_verify_detects_a_deleted_event_and_a_cut_off_tail(transactional_db):
    append(5)
    tamper("DELETE FROM audit_auditevent WHERE seq = 3")
    result = verify_chain()
    assert (result.ok, result.first_broken_seq) == (False, 3)
    assert "missing" in result.reason

    tamper("DELETE FROM audit_auditevent WHERE seq >= 3")
    result = verify_chain()
    assert (result.ok, result.first_broken_seq) == (False, 3)
    assert "head says #5" in result.reason


def test_verify_detects_an_altered_time(transactional_db):
    append(3)
    tamper("UPDATE audit_auditevent SET at = at + interval '1 second' WHERE seq = 2")
    assert verify_chain().first_broken_seq == 2


def test_verify_detects_a_forged_hash_a_broken_link_and_a_reordered_event(transactional_db):
    append(4)
    tamper("UPDATE audit_auditevent SET hash = repeat('f', 64) WHERE seq = 4")
    result = verify_chain()
    assert (result.first_broken_seq, result.head_seq) == (4, 3)
    assert "altered" in result.reason

    tamper("UPDATE audit_auditevent SET prev_hash = repeat('0', 64) WHERE seq = 3")
    result = verify_chain()
    assert result.first_broken_seq == 3
    assert "does not link to event #2" in result.reason

    # Events 2 and 3 swap places: each keeps its own hash, so the first out of place is #2.
    tamper(
        "UPDATE audit_auditevent SET seq = 100 WHERE seq = 2;"
        "UPDATE audit_auditevent SET seq = 2 WHERE seq = 3;"
        "UPDATE audit_auditevent SET seq = 3 WHERE seq = 100"
    )
    assert verify_chain().first_broken_seq == 2


def test_a_break_found_early_leaves_the_callers_transaction_usable(transactional_db):
    """The verifier stops at the first broken event, with most of the chain still streaming: the
    query is cancelled, and the caller (the outbox runs the hourly check in its transaction) goes
    on in its own transaction as if the verifier had read nothing."""
    append(2)
    tamper(  # a long tail, so that the stream is still under way when the verifier stops
        "INSERT INTO audit_auditevent (seq, at, actor_name, action, subject_type, subject_id,"
        " payload, prev_hash, hash) SELECT g, now(), 'system', 'test.tail', '', '', '{}',"
        " repeat('0', 64), md5(g::text) FROM generate_series(3, 50000) g"
    )
    tamper("UPDATE audit_auditevent SET payload = '{}' WHERE seq = 1")
    with transaction.atomic():
        result = verify_chain()
        assert (result.ok, result.first_broken_seq) == (False, 1)
        assert AuditEvent.objects.filter(action="test.tail").count() == 49_998
    assert verify_chain().first_broken_seq == 1  # outermost, too
    assert AuditEvent.objects.count() == 50_000


@pytest.mark.django_db(transaction=True)
def test_concurrent_writers_make_one_gapless_chain():
    writers, per_writer = 8, 200
    errors: list[BaseException] = []
    start = threading.Barrier(writers)

    def writer(n: int) -> None:
        try:
            start.wait()
            append(per_writer, action=f"test.writer{n}")
        except BaseException as exc:  # surfaced below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    seqs = list(AuditEvent.objects.order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(1, writers * per_writer + 1))
    for n in range(writers):
        assert AuditEvent.objects.filter(action=f"test.writer{n}").count() == per_writer
    result = verify_chain()
    assert result.ok, result.reason
    assert result.events == writers * per_writer


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=8,
)


@settings(
    max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None
)
@given(
    payload=st.dictionaries(st.text(max_size=10), json_values, max_size=4),
    action=st.from_regex(r"[a-z_.]{1,30}", fullmatch=True),
    subject_id=st.text(alphabet="abc123-", max_size=10),
)
def test_postgres_renders_and_hashes_exactly_the_canonical_bytes_of_the_reference(
    db, payload, action, subject_id
):
    from audit.chain import _rows

    with transaction.atomic():
        event = audit_record(
            actor=None,
            action=action,
            subject=("test.thing", subject_id) if subject_id else None,
            payload=payload,
        )
    rendered = {seq: data for seq, _prev, _hash, data in _rows()}[event.seq]
    reference = event_bytes(
        seq=event.seq,
        at=format_time(event.at),
        actor_id=None,
        actor_name="system",
        action=action,
        subject_type=event.subject_type,
        subject_id=event.subject_id,
        prev_hash=event.prev_hash,
        payload=event.payload,
    )
    assert rendered == reference
    # The writer hashed in PostgreSQL what the exported verifier hashes in Python.
    assert event.hash == event_hash(reference) == AuditEvent.objects.get(seq=event.seq).hash
    assert verify_chain().ok


@pytest.mark.django_db(transaction=True)
def test_an_act_committed_while_the_chain_is_read_does_not_break_it(monkeypatch):
    """The verifier reads the events and the head in one snapshot: an act committed between the
    two reads (the worker's own report, in the demo) is not "events cut off the end"."""
    import audit.chain

    append(3)
    streamed = audit.chain._rows

    def rows_then_an_act(*args, **kwargs):
        yield from streamed(*args, **kwargs)
        other = threading.Thread(target=lambda: (append(1), connections.close_all()))
        other.start()
        other.join()

    monkeypatch.setattr(audit.chain, "_rows", rows_then_an_act)
    result = verify_chain()
    assert result.ok, result.reason
    assert result.events == 3
    assert AuditEvent.objects.count() == 4
    monkeypatch.undo()
    assert verify_chain().ok
