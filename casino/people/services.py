"""Every change to people and their roles. Each one is audited."""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, Group, User
from django.db import transaction

from audit.chain import audit_record
from casino.errors import RoleRequired
from casino.people.models import StaffProfile
from casino.people.roles import OUTSIDE_ROLES, Role, check_compatible

Actor = User | AbstractBaseUser | AnonymousUser


def _groups(roles: Iterable[Role]) -> list[Group]:
    names = sorted({r.value for r in roles})
    groups = list(Group.objects.filter(name__in=names))
    if len(groups) != len(names):
        raise RuntimeError(f"role groups missing from the database: {names} (run migrate)")
    return groups


def roles_of(user: Actor | None) -> frozenset[Role]:
    """The roles a user holds (none for anonymous users); cached on the user object per request."""
    if user is None or not user.is_authenticated or not user.is_active:
        return frozenset()
    cached = getattr(user, "_casino_roles", None)
    if cached is None:
        names = set(Group.objects.filter(user=user).values_list("name", flat=True))
        cached = frozenset(r for r in Role if r.value in names)
        user._casino_roles = cached  # type: ignore[union-attr]
    return cached  # type: ignore[no-any-return]


def require_role(user: Actor | None, *allowed: Role, act: str) -> None:
    """Refuse the act unless the user holds one of ``allowed``. Superuser status grants no role."""
    if not roles_of(user) & set(allowed):
        who = getattr(user, "username", None) or "anonymous"
        wanted = " or ".join(r.value for r in allowed)
        raise RoleRequired(f"{act} requires the role {wanted}; {who} does not hold it")


def _require_staff_manager(actor: Actor) -> None:
    # The director appoints staff; a superuser may bootstrap a house that has no director yet.
    if getattr(actor, "is_superuser", False):
        return
    require_role(actor, Role.DIRECTEUR, act="managing staff")


@transaction.atomic
def staff_create(
    *,
    actor: Actor,
    username: str,
    full_name: str,
    roles: Iterable[Role] = (),
    licence_number: str = "",
    password: str | None = None,
) -> User:
    _require_staff_manager(actor)
    roles = sorted(set(roles))
    check_compatible(roles)
    employer = StaffProfile.Employer.CASINO
    if Role.COMMISSAIRE in roles:
        employer = StaffProfile.Employer.POLICE
    elif Role.INSPECTEUR in roles:
        employer = StaffProfile.Employer.REGULATOR
    user = User.objects.create_user(username=username, password=password, is_staff=True)
    StaffProfile.objects.create(
        user=user, full_name=full_name, licence_number=licence_number, employer=employer
    )
    user.groups.set(_groups(roles))
    audit_record(
        actor=actor,
        action="staff.created",
        subject=user,
        payload={
            "username": username,
            "full_name": full_name,
            "licence_number": licence_number,
            "roles": [r.value for r in roles],
        },
    )
    return user


@transaction.atomic
def staff_set_roles(*, actor: Actor, user: User, roles: Iterable[Role]) -> None:
    _require_staff_manager(actor)
    wanted = sorted(set(roles))
    check_compatible(wanted)
    if user.pk == getattr(actor, "pk", None) and not getattr(actor, "is_superuser", False):
        raise RoleRequired("nobody changes their own roles", where="roles")
    before = sorted(roles_of(user))
    if before == wanted:
        return
    profile = getattr(user, "staff_profile", None)
    if set(wanted) & OUTSIDE_ROLES and profile and profile.employer == StaffProfile.Employer.CASINO:
        raise RoleRequired("the commissioner and regulators are not casino staff", where="roles")
    user.groups.set(_groups(wanted))
    user.__dict__.pop("_casino_roles", None)
    audit_record(
        actor=actor,
        action="staff.roles_changed",
        subject=user,
        payload={"before": [r.value for r in before], "after": [r.value for r in wanted]},
    )
