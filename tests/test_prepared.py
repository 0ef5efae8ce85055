"""``casino.prepared``: a queryset compiled once and run with new values gives what the ORM gives,
as do a prepared tree (a row and its reverse relations), a prepared INSERT (of one row or many)
and a prepared UPDATE; an answer's serializer works its fields out once, and one kept serializer
writes every answer; ``round_locked``, the table acts' one prepared statement (the round
locked, the actor's duty). How their statements reach the server: tests/test_round_trips.py."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection, transaction
from django.db.models import Exists, Model, OuterRef, Value
from django.test.utils import CaptureQueriesContext, isolate_apps

from audit.models import Anomaly, AuditEvent
from casino import round_trips
from casino.floor.models import Coup, CoupResult, Duty, DutyEnd, Movement
from casino.floor.services import NotOnDuty, duty_end, round_locked
from casino.prepared import Prepared, PreparedInsert
from casino.round_trips import send_held
from shoes.models import CardLaid
from tests.conftest import lay_in_coups

pytestmark = pytest.mark.django_db

# Noir K 7 9 2 5 = 33, rouge T Q A 4 3 9 = 37: noir wins; eleven cards.
A_COUP = ["KS", "7H", "9D", "2C", "5S", "TH", "QD", "AS", "4C", "3H", "9S"]


@pytest.fixture
def coup(cast, shift, sixain_in_play) -> Coup:  # type: ignore[no-untyped-def]
    """A coup played and settled at table 1 (it has its result), two stakes on it (settled)."""
    from casino.floor.coups import coup_open, stake_place

    opened = coup_open(actor=cast.tailleur, shift_id=shift.pk)
    for ref, chance in (("n", "noir"), ("r", "rouge")):
        stake_place(
            actor=cast.croupier, coup_id=opened.pk, ref=ref, holder="1", chance=chance, amount=1000
        )
    lay_in_coups(cast, shift, A_COUP)
    return Coup.objects.get(shift=shift)


def columns(instance: Model) -> dict[str, tuple[type, Any]]:
    """Every column of the instance as loaded: its Python type and its value."""
    return {
        field.attname: (type(getattr(instance, field.attname)), getattr(instance, field.attname))
        for field in instance._meta.concrete_fields
    }


def coup_on_duty(pk: int, person_id: int) -> Any:
    """A coup with its séance, table, pack and règlement, and whether the person is on duty
    at its séance (the shape of the table acts' lock)."""
    return (
        Coup.objects.select_related("shift__table", "pack", "reglement")
        .annotate(
            on_duty=Exists(
                Duty.objects.filter(
                    shift_id=OuterRef("shift_id"), person_id=person_id, end__isnull=True
                )
            )
        )
        .filter(pk=pk)
    )


# --- Prepared ------------------------------------------------------------------------------------


def test_a_prepared_query_gives_the_instance_the_orm_gives(cast, coup):
    prepared = Prepared(coup_on_duty)
    for person, on_duty in ((cast.tailleur, True), (cast.outsider, False)):
        want = coup_on_duty(coup.pk, person.pk).get()
        got = prepared.first(coup.pk, person.pk)
        assert type(got) is Coup
        assert columns(got) == columns(want)
        assert (got.on_duty, want.on_duty) == (on_duty, on_duty)
        assert (got._state.db, got._state.adding) == ("default", False)  # saved as an update
        with CaptureQueriesContext(connection) as queries:
            related = [got.shift, got.shift.table, got.pack, got.reglement]
        assert queries.captured_queries == []  # select_related: populated from the one row
        expected = [want.shift, want.shift.table, want.pack, want.reglement]
        assert [columns(r) for r in related] == [columns(r) for r in expected]
        assert got.reglement.parameters == want.reglement.parameters != {}


def test_a_prepared_query_gives_none_when_no_row_matches(cast, coup):
    prepared = Prepared(coup_on_duty)
    assert prepared.first(coup.pk, cast.tailleur.pk) is not None  # compiled, then run again
    missing = Coup.objects.order_by("-pk").values_list("pk", flat=True).first() + 1
    assert prepared.first(missing, cast.tailleur.pk) is None


def test_two_values_each_land_in_their_own_place(cast, coup):
    """The second value comes first in the SQL (the select list, before the where clause): each
    is put where its placeholder was, not in the order given."""
    prepared = Prepared(
        lambda seq, shown: AuditEvent.objects.annotate(shown=Value(shown)).filter(seq=seq)
    )
    low, high = AuditEvent.objects.order_by("seq").values_list("seq", flat=True)[:2]
    one, other = prepared.first(low, high), prepared.first(high, low)
    assert (one.seq, one.shown) == (low, high)
    assert (other.seq, other.shown) == (high, low)
    assert columns(one) == columns(AuditEvent.objects.get(seq=low))


def test_json_and_datetime_columns_are_converted_as_the_orm_converts_them(cast, coup):
    prepared = Prepared(
        lambda coup_id: CoupResult.objects.select_related("coup__reglement", "settled_by").filter(
            coup_id=coup_id
        )
    )
    got = prepared.first(coup.pk)
    want = CoupResult.objects.select_related("coup__reglement", "settled_by").get(coup=coup)
    assert columns(got) == columns(want)
    assert got.noir_cards == ["KS", "7H", "9D", "2C", "5S"]  # a list, not its JSON text
    assert isinstance(got.announcement, dict)
    assert got.announcement == want.announcement
    assert got.settled_at == want.settled_at
    assert got.settled_at.utcoffset() is not None
    assert columns(got.coup.reglement) == columns(want.coup.reglement)  # JSON of a related row
    assert isinstance(got.coup.reglement.articles, list)
    assert got.settled_by.username == "croupier"


def test_for_update_is_sent_when_the_queryset_asks_for_it(cast, coup):
    locking = Prepared(lambda pk: Coup.objects.select_for_update(of=("self",)).filter(pk=pk))
    plain = Prepared(lambda pk: Coup.objects.filter(pk=pk))
    with CaptureQueriesContext(connection) as queries:
        assert locking.first(coup.pk).pk == plain.first(coup.pk).pk == coup.pk
    locked, read = (q["sql"] for q in queries.captured_queries)
    assert locked.endswith('FOR UPDATE OF "floor_coup"')
    assert "FOR UPDATE" not in read


@pytest.mark.parametrize(
    "build",
    [
        pytest.param(lambda pk: Coup.objects.filter(pk=pk, shift_id=pk), id="a value used twice"),
        pytest.param(lambda pk, shift_id: Coup.objects.filter(pk=pk), id="a value left out"),
        pytest.param(lambda pk: Coup.objects.filter(pk=pk + 1), id="a value computed on"),
    ],
)
def test_a_shape_that_does_not_use_each_value_once_is_refused(build):
    arity = build.__code__.co_argcount
    with (
        CaptureQueriesContext(connection) as queries,
        pytest.raises(ValueError, match="each value must appear once"),
    ):
        Prepared(build).first(*range(1, arity + 1))
    assert queries.captured_queries == []  # refused before anything is sent


# --- round_locked --------------------------------------------------------------------------------


def written() -> tuple[int, ...]:
    return (AuditEvent.objects.count(), Anomaly.objects.count(), Movement.objects.count())


def test_the_round_is_locked_with_its_seance_for_a_person_on_duty(cast, coup):
    with CaptureQueriesContext(connection) as queries:
        found = round_locked(Coup, coup.pk, cast.tailleur, Duty.Post.TAILLEUR, act="lay a card")
    assert (found.pk, found.shift.table.number, found.actor_on_duty) == (coup.pk, 1, True)
    (sql,) = (q["sql"] for q in queries.captured_queries)
    assert 'FOR UPDATE OF "floor_coup"' in sql


@pytest.mark.parametrize(
    ("who", "posts"),
    [
        pytest.param("croupier", (Duty.Post.TAILLEUR,), id="on duty in another post"),
        pytest.param("outsider", (Duty.Post.TAILLEUR, Duty.Post.CROUPIER), id="never on duty"),
    ],
)
def test_a_person_not_on_duty_is_refused_and_nothing_is_written(cast, coup, who, posts):
    person = getattr(cast, who)
    before = written()
    with (
        CaptureQueriesContext(connection) as queries,
        pytest.raises(NotOnDuty, match=f"{person.username} is not on duty") as refused,
    ):
        round_locked(Coup, coup.pk, person, *posts, act="lay a card")
    assert refused.value.code == "not_on_duty"
    assert [q["sql"].split()[0] for q in queries.captured_queries] == ["SELECT"]
    assert written() == before


def test_a_person_whose_duty_ended_is_refused(cast, coup):
    duty = Duty.objects.get(shift=coup.shift, person=cast.croupier)
    assert round_locked(Coup, coup.pk, cast.croupier, Duty.Post.CROUPIER, act="settle")
    duty_end(actor=cast.chef, duty_id=duty.pk, reason="pause")
    assert DutyEnd.objects.filter(duty=duty).exists()
    with pytest.raises(NotOnDuty):
        round_locked(Coup, coup.pk, cast.croupier, Duty.Post.CROUPIER, act="settle")


def test_a_missing_round_gives_none(cast, coup):
    missing = Coup.objects.order_by("-pk").values_list("pk", flat=True).first() + 1
    for person in (cast.tailleur, cast.outsider):
        assert round_locked(Coup, missing, person, Duty.Post.TAILLEUR, act="lay a card") is None


@pytest.mark.parametrize(
    ("values", "refusal"),
    [
        pytest.param(
            (1, 1), r"types \['int', 'int'\] for a query prepared with \['int'\]", id="two"
        ),
        pytest.param(("1",), r"types \['str'\] for a query prepared with \['int'\]", id="text"),
        pytest.param((1.0,), "integers and strings, not 1.0", id="a float"),
        pytest.param((True,), "integers and strings, not True", id="a boolean"),
    ],
)
def test_a_prepared_query_refuses_other_values_than_it_was_prepared_with(
    cast, coup, values, refusal
):
    prepared = Prepared(lambda pk: Coup.objects.filter(pk=pk))
    assert prepared.first(coup.pk).pk == coup.pk
    with CaptureQueriesContext(connection) as queries, pytest.raises(ValueError, match=refusal):
        prepared.first(*values)
    assert queries.captured_queries == []


def test_a_text_value_lands_in_its_place_and_is_sent_as_a_parameter(cast, coup):
    from django.contrib.auth.models import User

    prepared = Prepared(lambda name: User.objects.filter(username=name))
    assert prepared.first("croupier").pk == cast.croupier.pk
    assert prepared.first("tailleur").pk == cast.tailleur.pk
    assert prepared.first("croupier' OR '1'='1") is None  # a value, never SQL
    assert prepared.first("%s") is None


def test_all_gives_every_instance_the_orm_gives_in_its_order(cast, coup):
    prepared = Prepared(lambda coup_id: CardLaid.objects.filter(coup_id=coup_id))
    got, want = prepared.all(coup.pk), list(CardLaid.objects.filter(coup_id=coup.pk))
    assert [columns(c) for c in got] == [columns(c) for c in want]
    assert [c.card for c in got] == A_COUP
    missing = Coup.objects.order_by("-pk").values_list("pk", flat=True).first() + 1
    assert prepared.all(missing) == []


# --- PreparedTree --------------------------------------------------------------------------------


def test_a_tree_reads_a_coup_as_prefetch_related_does_and_nothing_more(cast, coup, monkeypatch):
    from casino.floor.play.trente_et_quarante.api import _COUP_ANSWERED, COUPS, CoupSerializer

    want = COUPS.get(pk=coup.pk)
    sent = []
    send = round_trips._send
    monkeypatch.setattr(round_trips, "_send", lambda *a, **k: sent.append(a[2]) or send(*a, **k))
    with CaptureQueriesContext(connection) as reads:
        got = _COUP_ANSWERED.get(coup.pk)
    assert len(reads.captured_queries) == 4  # the coup, its stakes, settlements and cards
    assert [len(statements) for statements in sent] == [4]  # in one round trip
    with CaptureQueriesContext(connection) as more:
        answer = CoupSerializer(got).data
        back = {s.coup.pk for s in got.stakes.all()} | {s.coup.pk for s in got.settlements.all()}
    assert more.captured_queries == []
    assert answer == CoupSerializer(want).data
    assert answer["cards"] == A_COUP
    assert back == {coup.pk}
    assert [s["ref"] for s in answer["stakes"]] == ["n", "r"]
    assert len(answer["settlements"]) == 2
    assert [columns(s) for s in got.stakes.all()] == [columns(s) for s in want.stakes.all()]


def test_a_tree_of_a_missing_coup_is_does_not_exist(cast, coup):
    from casino.floor.play.trente_et_quarante.api import _COUP_ANSWERED

    missing = Coup.objects.order_by("-pk").values_list("pk", flat=True).first() + 1
    with pytest.raises(Coup.DoesNotExist):
        _COUP_ANSWERED.get(missing)


# --- PreparedInsert ------------------------------------------------------------------------------


def test_an_insert_writes_the_row_and_gives_the_instance_create_gives(cast, coup):
    from casino.api.models import IdempotentRequest

    fields = {"user": cast.croupier, "fingerprint": "f" * 64, "status": 201, "body": {"a": [1]}}
    got = PreparedInsert(IdempotentRequest).create(key="prepared", **fields)
    want = IdempotentRequest.objects.create(key="orm", **fields)
    assert got.pk is not None
    assert (got._state.adding, got._state.db) == (False, "default")
    stored = {r.key: r for r in IdempotentRequest.objects.filter(pk__in=[got.pk, want.pk])}
    for instance in (got, stored["prepared"]):
        same = {**columns(instance), "id": None, "key": None, "created_at": None}
        assert same == {**columns(want), "id": None, "key": None, "created_at": None}
    assert columns(stored["prepared"]) == columns(got)  # what was written is what it gave


def test_an_insert_refuses_an_unknown_field_and_a_duplicate_writes_nothing(cast, coup):
    from django.db import IntegrityError

    from casino.api.models import IdempotentRequest

    insert = PreparedInsert(IdempotentRequest)
    fields = {"user": cast.croupier, "key": "k", "fingerprint": "f", "status": 0, "body": {}}
    with pytest.raises(TypeError, match="unexpected keyword"):
        insert.create(**fields, colour="red")
    insert.create(**fields)
    with pytest.raises(IntegrityError), transaction.atomic():
        insert.create(**fields)
    assert IdempotentRequest.objects.filter(key="k").count() == 1


def test_insert_all_writes_the_rows_bulk_create_writes_with_their_ids_in_order(cast, coup):
    from casino.api.models import IdempotentRequest

    def made(prefix: str) -> list[IdempotentRequest]:
        return [
            IdempotentRequest(
                user=cast.croupier, key=f"{prefix}{i}", fingerprint="f", status=i, body={"i": i}
            )
            for i in range(3)
        ]

    insert = PreparedInsert(IdempotentRequest)
    assert insert.insert_all([]) == []
    got = insert.insert_all(made("prepared"))
    want = IdempotentRequest.objects.bulk_create(made("orm"))
    assert [g.pk for g in got] == sorted(g.pk for g in got)  # ids in the instances' order
    stored = {r.pk: r for r in IdempotentRequest.objects.filter(pk__in=[g.pk for g in got])}
    for g, w in zip(got, want, strict=True):
        assert (g._state.adding, g._state.db) == (False, "default")
        assert columns(stored[g.pk]) == columns(g)
        ignore = {"id": None, "key": None, "created_at": None}
        assert {**columns(g), **ignore} == {**columns(w), **ignore}
    again = insert.insert_all(made("again"))  # the same number of rows: the kept statement
    assert [r.status for r in again] == [0, 1, 2]


def test_an_update_writes_what_save_with_update_fields_writes_and_nothing_else(cast, coup, shift):
    from django.db import DatabaseError

    from casino.floor.coups import coup_open
    from casino.floor.models import CoupPhase
    from casino.prepared import PreparedUpdate

    opened = coup_open(actor=cast.tailleur, shift_id=shift.pk)
    before = Coup.objects.get(pk=opened.pk)
    changed = Coup.objects.get(pk=opened.pk)
    changed.phase, changed.number = CoupPhase.CLOSED, 999  # only the phase is written
    with CaptureQueriesContext(connection) as sent:
        PreparedUpdate(Coup, "phase").save(changed)
        assert sent.captured_queries == []  # held: it goes with the act's next statement
        send_held()
    assert len(sent.captured_queries) == 1
    after = Coup.objects.get(pk=opened.pk)
    assert after.phase == CoupPhase.CLOSED
    assert {**columns(after), "phase": None} == {**columns(before), "phase": None}
    changed.pk = Coup.objects.order_by("-pk").values_list("pk", flat=True).first() + 1
    with pytest.raises(DatabaseError, match="did not affect any rows"):
        PreparedUpdate(Coup, "phase").save(changed)
        send_held()


# --- FieldsOnce ----------------------------------------------------------------------------------


def _fields_once() -> list[type]:
    from casino import urls  # noqa: F401  (every API module, so every serializer, imported)
    from casino.api.serializers import FieldsOnce

    found, todo = [], [FieldsOnce]
    while todo:
        found += (subclasses := todo.pop().__subclasses__())
        todo += subclasses
    return sorted(set(found), key=lambda c: c.__qualname__)


@pytest.mark.parametrize("serializer_class", _fields_once(), ids=lambda c: c.__name__)
def test_an_answers_serializer_has_the_fields_drf_works_out_its_own_each_time(serializer_class):
    from django.utils import translation
    from rest_framework import serializers

    for language in ("en", "fr", "en"):  # a label is given or not by the language's words
        with translation.override(language):
            one, other = serializer_class(), serializer_class()
            worked_out = serializers.ModelSerializer.get_fields(one)  # DRF's own, made afresh
            assert repr(dict(one.fields)) == repr(dict(other.fields)) == repr(worked_out)
        for name, field in one.fields.items():
            assert field is not other.fields[name]
            assert field.parent is one


def test_a_kept_serializer_answers_as_a_serializer_made_for_each_answer(cast, coup, shift):
    """``Answer``: one serializer kept for every answer writes what a fresh one writes, coup
    after coup (settled, then open with no stake), whatever the language of the request."""
    from django.utils import translation

    from casino.api.serializers import Answer
    from casino.floor.coups import coup_open
    from casino.floor.play.trente_et_quarante.api import COUPS, CoupSerializer

    answer = Answer(CoupSerializer)
    later = coup_open(actor=cast.tailleur, shift_id=shift.pk)
    for language, pk in (("fr", coup.pk), ("en", later.pk), ("en", coup.pk)):
        with translation.override(language):
            instance = COUPS.get(pk=pk)
            assert answer(instance) == CoupSerializer(instance).data
    assert answer(COUPS.get(pk=coup.pk))["outcome"]["result"] == "noir"
    assert answer(COUPS.get(pk=later.pk))["outcome"] is None


@isolate_apps("casino.api")
def test_an_insert_refuses_a_model_some_of_whose_columns_the_database_writes():
    from django.db import models
    from django.db.models.functions import Now

    class Stamped(Model):
        at = models.DateTimeField(db_default=Now())

        class Meta:
            app_label = "api"

        def __str__(self) -> str:
            return str(self.at)

    with pytest.raises(ValueError, match=r"the database writes \['at'\]"):
        PreparedInsert(Stamped)
