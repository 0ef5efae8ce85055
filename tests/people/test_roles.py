from __future__ import annotations

import doctest

import pytest
from django.contrib.auth.models import Group, User
from django.db import IntegrityError, transaction

import casino.people.roles
from audit.models import AuditEvent
from casino.errors import RoleRequired, SegregationViolation
from casino.people.roles import INCOMPATIBLE, Role, check_compatible
from casino.people.services import roles_of, staff_create, staff_set_roles


def test_role_rules_are_documented_by_their_examples():
    assert doctest.testmod(casino.people.roles).failed == 0


def test_every_role_group_exists_after_migrate(db):
    assert set(Group.objects.values_list("name", flat=True)) >= {r.value for r in Role}


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (Role.COMITE, Role.TAILLEUR),
        (Role.COMITE, Role.CHEF_DE_PARTIE),
        (Role.DIRECTEUR, Role.CROUPIER),
        (Role.COMMISSAIRE, Role.DIRECTEUR),
        (Role.COMMISSAIRE, Role.INSPECTEUR),
        (Role.INSPECTEUR, Role.AUDITEUR),
        (Role.AUDITEUR, Role.TAILLEUR),
        (Role.CAISSIER, Role.TAILLEUR),
    ],
)
def test_incompatible_duties_are_refused_by_the_service_and_the_database(cast, a, b):
    with pytest.raises(SegregationViolation):
        staff_create(actor=cast.directeur, username="double", full_name="Double", roles=[a, b])
    person = cast.by_role(a)
    with pytest.raises(SegregationViolation):
        staff_set_roles(actor=cast.directeur, user=person, roles=[a, b])
    # Around the service, straight into the membership table: PostgreSQL refuses it too.
    with pytest.raises(IntegrityError, match="segregation of duties"), transaction.atomic():
        person.groups.add(Group.objects.get(name=b.value))
    assert roles_of(person) == {a}


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (Role.TAILLEUR, Role.CROUPIER),
        (Role.CHEF_DE_PARTIE, Role.TAILLEUR),
        (Role.DIRECTEUR, Role.COMITE),
    ],
)
def test_compatible_duties_may_be_combined(cast, a, b):
    check_compatible([a, b])
    user = staff_create(actor=cast.directeur, username="both", full_name="Both", roles=[a, b])
    assert roles_of(user) == {a, b}


def test_the_incompatibility_table_is_symmetric_and_excludes_self_pairs():
    assert all(len(pair) == 2 for pair in INCOMPATIBLE)


def test_only_the_director_opens_accounts(cast):
    for actor in (cast.root, cast.chef, cast.inspecteur, cast.commissaire, cast.outsider):
        with pytest.raises(RoleRequired):
            staff_create(actor=actor, username="new", full_name="New", roles=[Role.CROUPIER])
    assert not User.objects.filter(username="new").exists()
    staff_create(actor=cast.directeur, username="new", full_name="New", roles=[Role.CROUPIER])


def test_nobody_changes_their_own_roles(cast):
    with pytest.raises(RoleRequired):
        staff_set_roles(
            actor=cast.directeur, user=cast.directeur, roles=[Role.DIRECTEUR, Role.COMITE]
        )


def test_casino_staff_cannot_be_made_commissioner(cast):
    with pytest.raises(RoleRequired):
        staff_set_roles(actor=cast.directeur, user=cast.outsider, roles=[Role.COMMISSAIRE])


def test_role_changes_are_audited(cast):
    staff_set_roles(actor=cast.directeur, user=cast.croupier, roles=[Role.CROUPIER, Role.TAILLEUR])
    event = AuditEvent.objects.filter(action="staff.roles_changed").latest("seq")
    assert event.actor_id == cast.directeur.pk
    assert '"after":["croupier","tailleur"]' in event.payload


def test_a_superuser_holds_no_role_by_being_superuser(cast):
    assert roles_of(cast.root) == frozenset()
