"""The double-entry ledger and the cash rundown of a séance."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, IntegrityError, connection, transaction
from django.db.models import Sum

from audit.models import Anomaly
from casino.errors import Conflict, RoleRequired, SegregationViolation
from casino.floor.models import Account, CountSignature, FloatCount, Movement, Shift
from casino.floor.services import (
    Entry,
    InvalidCount,
    InvalidMovement,
    NotOnDuty,
    balance,
    count_countersign,
    count_record,
    house_account,
    ledger_post,
    rundown,
    shift_close,
    shift_open,
    table_account,
    transfer_countersign,
    transfer_record,
)
from casino.people.roles import Role
from casino.people.services import staff_create
from tests.conftest import FLOAT, close_seance

FLOAT_TOTAL = 40 * 10000 + 40 * 2500 + 100 * 500  # 550,000


def test_opening_counts_the_float_with_two_signatures_and_brings_it_from_the_cage(shift, table):
    count = shift.opening_count
    assert count.total == FLOAT_TOTAL
    assert balance(table_account(table, Account.Kind.BANK)) == FLOAT_TOTAL
    assert balance(house_account(Account.Kind.CAGE)) == -FLOAT_TOTAL


def recorded():
    return (FloatCount.objects.count(), CountSignature.objects.count(), Movement.objects.count())


def test_only_a_croupier_counts_and_only_the_director_or_comite_countersign(cast, table):
    before = recorded()
    for who in ("tailleur", "chef", "directeur", "caissier", "root"):
        with pytest.raises(RoleRequired):
            count_record(actor=getattr(cast, who), table_id=table.pk, moment="opening", chips=FLOAT)
    assert recorded() == before
    count = count_record(actor=cast.croupier, table_id=table.pk, moment="opening", chips=FLOAT)
    for who in ("croupier", "chef", "caissier", "commissaire", "root"):
        with pytest.raises(RoleRequired):
            count_countersign(actor=getattr(cast, who), count_id=count.pk)
    assert not CountSignature.objects.exists()


def test_a_seance_does_not_open_on_a_count_nobody_countersigned(cast, table):
    count = count_record(actor=cast.croupier, table_id=table.pk, moment="opening", chips=FLOAT)
    with pytest.raises(Conflict, match="awaits its countersignature"):
        shift_open(
            actor=cast.chef,
            table=table,
            count_id=count.pk,
            tailleur=cast.tailleur,
            croupiers=[cast.croupier],
        )
    assert not Shift.objects.exists()


def test_a_count_is_countersigned_once(cast, table):
    """Roles keep the counting croupier from countersigning (no croupier is director or comité);
    the attack left is a second countersignature over the first, which is refused."""
    both = staff_create(
        actor=cast.directeur,
        username="both",
        full_name="Director and comité",
        roles=[Role.DIRECTEUR, Role.COMITE],
    )
    count = count_record(actor=cast.croupier, table_id=table.pk, moment="opening", chips=FLOAT)
    count_countersign(actor=both, count_id=count.pk)
    with pytest.raises(Conflict, match="countersigned already"):
        count_countersign(actor=cast.comite, count_id=count.pk)
    assert CountSignature.objects.get(count=count).by == both


def test_fills_and_credits_are_signed_by_the_cage_and_the_table_each_in_their_own_act(cast, shift):
    before = recorded()
    for who in ("tailleur", "croupier", "directeur", "root"):
        with pytest.raises(RoleRequired):
            transfer_record(actor=getattr(cast, who), shift_id=shift.pk, kind="fill", amount=100)
    fill = transfer_record(actor=cast.caissier, shift_id=shift.pk, kind="fill", amount=100_000)
    assert recorded() == before  # recorded, not moved
    # The chef de partie cannot pay himself: signing both sides is refused...
    chef_fill = transfer_record(actor=cast.chef, shift_id=shift.pk, kind="fill", amount=900_000)
    with pytest.raises(SegregationViolation):
        transfer_countersign(actor=cast.chef, transfer_id=chef_fill.pk)
    # ...and so is the cashier signing twice.
    with pytest.raises(SegregationViolation):
        transfer_countersign(actor=cast.caissier, transfer_id=fill.pk)
    assert recorded() == before
    transfer_countersign(actor=cast.chef, transfer_id=fill.pk)
    movement = Movement.objects.get(kind="fill")
    assert (movement.amount, movement.actor, movement.reference) == (
        100_000,
        cast.chef,
        f"transfer:{fill.pk}",
    )
    transfer_countersign(actor=cast.caissier, transfer_id=chef_fill.pk, signed=False, remark="no")
    assert Movement.objects.filter(kind="fill").count() == 1


def test_a_chef_not_on_duty_there_signs_no_fill(cast, shift):
    other = staff_create(
        actor=cast.directeur,
        username="chef2",
        full_name="Chef Two",
        roles=[Role.CHEF_DE_PARTIE],
    )
    fill = transfer_record(actor=cast.caissier, shift_id=shift.pk, kind="fill", amount=100_000)
    with pytest.raises(NotOnDuty):
        transfer_countersign(actor=other, transfer_id=fill.pk)
    assert not Movement.objects.filter(kind="fill").exists()


def _fill(cast, shift, kind, amount):
    transfer = transfer_record(actor=cast.caissier, shift_id=shift.pk, kind=kind, amount=amount)
    transfer_countersign(actor=cast.chef, transfer_id=transfer.pk)


def test_a_miscounted_close_raises_cash_variance_with_the_exact_difference(cast, shift):
    _fill(cast, shift, "fill", 200_000)
    _fill(cast, shift, "credit", 50_000)
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
    figures = close_seance(cast, shift, counted)
    assert (figures.expected, figures.closing, figures.variance) == (expected, 711_000, -1_500)
    anomaly = Anomaly.objects.get(detector="cash_variance")
    assert anomaly.evidence["variance"] == -1_500
    assert anomaly.evidence["fills"] == 200_000
    assert anomaly.evidence["credits"] == 50_000
    assert anomaly.evidence["result"] == 12_500
    # Everyone who signed is involved: none of them may dismiss it.
    assert set(anomaly.involved) == {
        cast.croupier.pk,
        cast.directeur.pk,
        cast.caissier.pk,
        cast.chef.pk,
    }


def test_a_seance_closes_only_on_its_own_countersigned_closing_count(cast, shift):
    count = count_record(
        actor=cast.croupier, table_id=shift.table_id, moment="closing", chips=FLOAT
    )
    with pytest.raises(Conflict, match="awaits its countersignature"):
        shift_close(actor=cast.chef, shift=shift, count_id=count.pk)
    pending = transfer_record(actor=cast.caissier, shift_id=shift.pk, kind="fill", amount=10)
    count_countersign(actor=cast.directeur, count_id=count.pk)
    with pytest.raises(Conflict, match="awaiting its second signature"):
        shift_close(actor=cast.chef, shift=shift, count_id=count.pk)
    transfer_countersign(actor=cast.chef, transfer_id=pending.pk, signed=False, remark="no chips")
    shift_close(actor=cast.chef, shift=shift, count_id=count.pk)
    shift.refresh_from_db()
    assert shift.closed_at is not None


def test_a_correct_close_raises_nothing(cast, shift):
    figures = close_seance(cast, shift, FLOAT)
    assert figures.variance == 0
    assert not Anomaly.objects.filter(detector="cash_variance").exists()
    assert rundown(shift).closing == FLOAT_TOTAL


def test_an_absurd_count_or_amount_is_refused_cleanly(cast, shift):
    for chips in ({"10000": 10**20}, {"-5": 1}, {"x": 1}, {}):
        with pytest.raises(InvalidCount):
            count_record(
                actor=cast.croupier, table_id=shift.table_id, moment="closing", chips=chips
            )
    for amount in (0, -1, 10**20):
        with pytest.raises(InvalidMovement):
            transfer_record(actor=cast.caissier, shift_id=shift.pk, kind="fill", amount=amount)


def test_the_whole_ledger_sums_to_zero(cast, shift):
    _fill(cast, shift, "fill", 10_000)
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


@pytest.mark.django_db
def test_a_house_account_is_named_in_the_house_language_whoever_asked_first():
    """The cage's account made during an English request keeps the house's (French) name: a
    record's words do not depend on the language of the request that happened to create it."""
    from django.utils import translation

    from casino.floor.services import house_account

    with translation.override("en"):
        cage = house_account(Account.Kind.CAGE)
    assert Account.objects.get(pk=cage.pk).name == "caisse"
