"""The double-entry ledger and the cash rundown of a séance."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, IntegrityError, connection, transaction
from django.db.models import Sum

from audit.models import Anomaly
from casino.errors import RoleRequired
from casino.floor.models import Account, FloatCount, Movement
from casino.floor.services import (
    Entry,
    InvalidCount,
    InvalidMovement,
    balance,
    house_account,
    ledger_post,
    rundown,
    shift_close,
    shift_credit,
    shift_fill,
    shift_open,
    table_account,
)
from tests.conftest import FLOAT

FLOAT_TOTAL = 40 * 10000 + 40 * 2500 + 100 * 500  # 550,000


def test_opening_counts_the_float_with_two_signatures_and_brings_it_from_the_cage(shift, table):
    count = FloatCount.objects.get(shift=shift, moment="opening")
    assert count.total == FLOAT_TOTAL
    assert balance(table_account(table, Account.Kind.BANK)) == FLOAT_TOTAL
    assert balance(house_account(Account.Kind.CAGE)) == -FLOAT_TOTAL


@pytest.mark.parametrize(
    ("counted_by", "countersigned_by", "error"),
    [
        ("tailleur", "directeur", InvalidCount),  # a croupier counts
        ("croupier", "chef", InvalidCount),  # the director or a comité member countersigns
        ("croupier", "croupier", InvalidCount),
    ],
)
def test_the_float_count_needs_the_right_two_people(
    cast, table, counted_by, countersigned_by, error
):
    with pytest.raises(error):
        shift_open(
            actor=cast.chef,
            table=table,
            chips=FLOAT,
            counted_by=getattr(cast, counted_by),
            countersigned_by=getattr(cast, countersigned_by),
            tailleur=cast.tailleur,
            croupiers=[cast.croupier],
        )


def test_the_database_wants_two_different_signatures(cast, shift):
    with pytest.raises(IntegrityError), transaction.atomic():
        FloatCount.objects.create(
            shift=shift,
            moment="closing",
            chips={},
            total=0,
            counted_by=cast.croupier,
            countersigned_by=cast.croupier,
            at=shift.opened_at,
        )


def test_fills_and_credits_need_the_cashier_and_the_chef(cast, shift):
    with pytest.raises(RoleRequired):
        shift_fill(actor=cast.chef, shift_id=shift.pk, amount=100_000, table_party=cast.chef)
    with pytest.raises(RoleRequired):
        shift_fill(
            actor=cast.caissier, shift_id=shift.pk, amount=100_000, table_party=cast.tailleur
        )
    shift_fill(actor=cast.caissier, shift_id=shift.pk, amount=100_000, table_party=cast.chef)
    assert Movement.objects.get(kind="fill").reference == "fill by caissier with chef"


def test_a_miscounted_close_raises_cash_variance_with_the_exact_difference(cast, shift):
    shift_fill(actor=cast.caissier, shift_id=shift.pk, amount=200_000, table_party=cast.chef)
    shift_credit(actor=cast.caissier, shift_id=shift.pk, amount=50_000, table_party=cast.chef)
    # Play won the bank 12,500 (a loss collected from a seat), recorded as movements.
    seat = Account.objects.create(code="seat:1:3", kind=Account.Kind.SEAT)
    ledger_post(
        actor=cast.tailleur,
        shift=shift,
        entries=[
            Entry(
                Movement.Kind.LOSS_COLLECTED,
                seat,
                table_account(shift.table, Account.Kind.BANK),
                12_500,
            )
        ],
    )
    expected = FLOAT_TOTAL + 200_000 - 50_000 + 12_500  # 712,500
    counted = {"10000": 50, "2500": 40, "500": 222}  # 500,000 + 100,000 + 111,000 = 711,000
    figures = shift_close(
        actor=cast.chef,
        shift=shift,
        chips=counted,
        counted_by=cast.croupier,
        countersigned_by=cast.comite,
    )
    assert (figures.expected, figures.closing, figures.variance) == (expected, 711_000, -1_500)
    anomaly = Anomaly.objects.get(detector="cash_variance")
    assert anomaly.evidence["variance"] == -1_500
    assert anomaly.evidence["fills"] == 200_000
    assert anomaly.evidence["credits"] == 50_000
    assert anomaly.evidence["result"] == 12_500


def test_a_correct_close_raises_nothing(cast, shift):
    figures = shift_close(
        actor=cast.chef,
        shift=shift,
        chips=FLOAT,
        counted_by=cast.croupier,
        countersigned_by=cast.directeur,
    )
    assert figures.variance == 0
    assert not Anomaly.objects.filter(detector="cash_variance").exists()
    assert rundown(shift).closing == FLOAT_TOTAL


def test_the_whole_ledger_sums_to_zero(cast, shift):
    shift_fill(actor=cast.caissier, shift_id=shift.pk, amount=10_000, table_party=cast.chef)
    seat = Account.objects.create(code="seat:1:1", kind=Account.Kind.SEAT)
    ledger_post(
        actor=cast.tailleur,
        shift=shift,
        entries=[
            Entry(
                Movement.Kind.STAKE_PLACED,
                seat,
                table_account(shift.table, Account.Kind.LAYOUT),
                1000,
            ),
            Entry(
                Movement.Kind.LOSS_COLLECTED,
                table_account(shift.table, Account.Kind.LAYOUT),
                table_account(shift.table, Account.Kind.BANK),
                1000,
            ),
        ],
    )
    assert sum(balance(a) for a in Account.objects.all()) == 0
    totals = Movement.objects.aggregate(s=Sum("amount"))["s"]
    assert totals == FLOAT_TOTAL + 10_000 + 2000


@pytest.mark.parametrize("amount", [0, -5, 1.5, True])
def test_a_movement_must_move_a_positive_integer(cast, shift, amount):
    seat = Account.objects.create(code="seat:1:2", kind=Account.Kind.SEAT)
    with pytest.raises(InvalidMovement):
        ledger_post(
            actor=cast.tailleur,
            shift=shift,
            entries=[
                Entry(
                    Movement.Kind.STAKE_PLACED,
                    seat,
                    table_account(shift.table, Account.Kind.LAYOUT),
                    amount,
                )
            ],
        )


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE floor_movement SET amount = amount + 1",
        "DELETE FROM floor_movement",
        "INSERT INTO floor_movement (at, debit_id, credit_id, amount, kind, reference, "
        "idempotency_key, actor_id) SELECT at, debit_id, credit_id, -1, kind, '', 'neg', actor_id "
        "FROM floor_movement LIMIT 1",
        "INSERT INTO floor_movement (at, debit_id, credit_id, amount, kind, reference, "
        "idempotency_key, actor_id) SELECT at, debit_id, debit_id, 1, kind, '', 'same', actor_id "
        "FROM floor_movement LIMIT 1",
    ],
)
def test_the_database_refuses_what_must_never_happen_to_money(shift, sql):
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql)


def test_a_retried_movement_key_is_refused_by_the_database(cast, shift):
    seat = Account.objects.create(code="seat:9", kind=Account.Kind.SEAT)
    layout = table_account(shift.table, Account.Kind.LAYOUT)
    entry = Entry(Movement.Kind.STAKE_PLACED, seat, layout, 500, key="coup:1:stake:a")
    ledger_post(actor=cast.tailleur, shift=shift, entries=[entry])
    with pytest.raises(IntegrityError), transaction.atomic():
        ledger_post(actor=cast.tailleur, shift=shift, entries=[entry])
    assert balance(layout) == 500
