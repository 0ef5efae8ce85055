"""Who is on duty at a séance: only they act there; reliefs and the close end duties."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction

from casino.errors import Conflict, RoleRequired
from casino.floor.coups import coup_open, stake_place
from casino.floor.models import Coup, Duty, Stake
from casino.floor.services import (
    NotOnDuty,
    duty_assign,
    duty_end,
    shift_open,
    table_create,
)
from casino.people.roles import Role
from tests.actors import hire
from tests.conftest import FLOAT, close_seance, open_seance


@pytest.fixture
def relief(cast):
    """A second tailleur, not on duty anywhere yet."""
    return hire(cast.directeur, "relief", Role.TAILLEUR)


def on_duty(shift):
    """Who deals and counts at the table (the chef de partie on duty is asserted apart)."""
    duties = shift.duties.filter(end__isnull=True).exclude(post=Duty.Post.CHEF_DE_PARTIE)
    return sorted((d.person.username, d.post) for d in duties)


def test_a_seance_opens_staffed(cast, shift):
    assert on_duty(shift) == [("croupier", "croupier"), ("tailleur", "tailleur")]


def test_holding_the_role_is_not_enough_to_act_at_a_table(cast, shift, sixain_in_play, relief):
    with pytest.raises(NotOnDuty, match="relief is not on duty there as tailleur"):
        coup_open(actor=relief, shift_id=shift.pk)
    assert Coup.objects.count() == 0


def test_a_relief_takes_over_the_deal(cast, shift, sixain_in_play, relief):
    duty_assign(actor=cast.chef, shift_id=shift.pk, person=relief, post="tailleur")
    assert on_duty(shift) == [("croupier", "croupier"), ("relief", "tailleur")]
    ended = Duty.objects.get(person=cast.tailleur).end
    assert (ended.by, ended.reason) == (cast.chef, "relieved by relief")
    with pytest.raises(NotOnDuty):
        coup_open(actor=cast.tailleur, shift_id=shift.pk)
    coup = coup_open(actor=relief, shift_id=shift.pk)
    # A croupier taken off duty places no more stakes.
    croupier_duty = Duty.objects.get(person=cast.croupier)
    duty_end(actor=cast.chef, duty_id=croupier_duty.pk, reason="pause")
    with pytest.raises(NotOnDuty):
        stake_place(
            actor=cast.croupier, coup_id=coup.pk, ref="a", holder="1", chance="noir", amount=1000
        )
    assert Stake.objects.count() == 0


def test_nobody_is_on_duty_at_two_tables(cast, shift, posted):
    other = table_create(
        actor=cast.directeur,
        number=2,
        game="trente-et-quarante",
        reglement_id=posted.pk,
        min_stake=500,
        max_stake=600_000,
    )
    with pytest.raises(Conflict, match="already on duty at Table 1"):
        open_seance(cast, other)


def test_who_may_staff_a_seance(cast, shift, relief):
    with pytest.raises(RoleRequired):
        duty_assign(actor=cast.tailleur, shift_id=shift.pk, person=relief, post="tailleur")
    with pytest.raises(NotOnDuty, match="does not hold the role croupier"):
        duty_assign(actor=cast.chef, shift_id=shift.pk, person=relief, post="croupier")
    with pytest.raises(NotOnDuty, match="at least one croupier"):
        shift_open(actor=cast.chef, table=shift.table, count_id=1, tailleur=relief, croupiers=[])


def test_closing_the_seance_ends_every_duty(cast, shift):
    close_seance(cast, shift, FLOAT)
    assert on_duty(shift) == []
    assert {d.end.reason for d in shift.duties.all()} == {"séance closed"}
    with pytest.raises(Conflict, match="is closed"):
        duty_assign(actor=cast.chef, shift_id=shift.pk, person=cast.tailleur, post="tailleur")


def test_duties_are_never_edited(cast, shift):
    for sql in ("UPDATE floor_duty SET post = 'croupier'", "DELETE FROM floor_duty"):
        with (
            pytest.raises(DatabaseError, match="permission denied"),
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            cursor.execute(sql)
    assert on_duty(shift) == [("croupier", "croupier"), ("tailleur", "tailleur")]


def test_the_terminal_staffs_a_seance_over_the_api(api, cast, shift, relief):
    chef = api(cast.chef)
    answer = chef.post(
        "/api/v1/duties",
        {"shift": shift.pk, "person": "relief", "post": "tailleur"},
        format="json",
        HTTP_IDEMPOTENCY_KEY="relief-1",
    )
    assert answer.status_code == 201, answer.json()
    duty = answer.json()
    assert (duty["shift"], duty["person"], duty["post"], duty["assigned_by"], duty["ended_at"]) == (
        shift.pk,
        "relief",
        "tailleur",
        "chef",
        None,
    )
    seance = chef.get(f"/api/v1/shifts/{shift.pk}").json()
    staff = {(d["person"], d["post"], d["end_reason"]) for d in seance["staff"]}
    assert staff == {
        ("tailleur", "tailleur", "relieved by relief"),
        ("croupier", "croupier", None),
        ("relief", "tailleur", None),
        ("chef", "chef_de_partie", None),
    }
    refused = api(cast.croupier).post(
        "/api/v1/duties",
        {"shift": shift.pk, "person": "relief", "post": "tailleur"},
        format="json",
        HTTP_IDEMPOTENCY_KEY="relief-2",
    )
    assert refused.status_code == 403
    assert refused.json()["code"] == "role_required"
