"""Every change to people, their roles and their credentials. Each one is audited.

Who manages whom (README, "Roles"):

- the director manages casino staff (the comité too, and the director himself is managed by another
  director or by a comité member, never by himself);
- accounts of the police (commissaire) and of the regulator (inspecteur) are opened by the director
  but stay inactive until an active member of the same body, another person, activates them; the
  director may suspend them or ask for their credentials to be reset, which makes them inactive
  again, with no password and no second factor, until their body activates them;
- nobody sets another person's password: creation, activation and reset give a one-time setup code
  to the issuer, who hands it over; the person chooses a password on ``/account/setup/`` and, if a
  role requires it, enrols a TOTP device there;
- a superuser is for maintenance: he holds no role and manages nobody.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import secrets
import time
from collections.abc import Iterable

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, Group, User
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _
from django_otp.oath import TOTP
from django_otp.plugins.otp_totp.models import TOTPDevice

from audit.chain import audit_record
from casino import clock
from casino.errors import Conflict, NotFound, RoleRequired
from casino.i18n import either
from casino.people.errors import PasswordRefused, SecondFactorRequired, SetupCodeInvalid
from casino.people.models import ApiToken, SetupCode, StaffProfile
from casino.people.roles import OUTSIDE_ROLES, SECOND_FACTOR_ROLES, Role, check_compatible
from casino.prepared import Prepared

Actor = User | AbstractBaseUser | AnonymousUser

BODY_ROLE = {
    StaffProfile.Employer.POLICE: Role.COMMISSAIRE,
    StaffProfile.Employer.REGULATOR: Role.INSPECTEUR,
}


def _groups(roles: Iterable[Role]) -> list[Group]:
    names = sorted({r.value for r in roles})
    groups = list(Group.objects.filter(name__in=names))
    if len(groups) != len(names):
        raise RuntimeError(f"role groups missing from the database: {names} (run migrate)")
    return groups


def roles_of(user: Actor | None) -> frozenset[Role]:
    """The roles a user acts with (none for anonymous or inactive users); cached per request."""
    if user is None or not user.is_authenticated or not user.is_active:
        return frozenset()
    cached = getattr(user, "_casino_roles", None)
    if cached is None:
        cached = held_roles(user)  # type: ignore[arg-type]
        user._casino_roles = cached  # type: ignore[union-attr]
    return cached  # type: ignore[no-any-return]


# Read for every request that acts (require_role): prepared once (casino/prepared.py).
_GROUPS = Prepared(lambda user_id: Group.objects.filter(user=user_id))


def held_roles(user: User) -> frozenset[Role]:
    """The roles an account holds, active or not (what its credentials must satisfy)."""
    names = {group.name for group in _GROUPS.all(user.pk)}
    return frozenset(r for r in Role if r.value in names)


def needs_second_factor(user: User) -> bool:
    return user.is_superuser or bool(held_roles(user) & SECOND_FACTOR_ROLES)


def require_role(user: Actor | None, *allowed: Role, act: str) -> None:
    """Refuse the act unless the user holds one of ``allowed``. Superuser status grants no role."""
    if not roles_of(user) & set(allowed):
        raise RoleRequired(
            _("%(act)s : il faut le rôle %(roles)s ; %(who)s ne l'a pas")
            % {
                "act": act,
                "roles": either(r.value for r in allowed),
                "who": getattr(user, "username", None) or _("anonyme"),
            }
        )


def _employer(user: User) -> str:
    profile = StaffProfile.objects.filter(user=user).first()
    return profile.employer if profile else StaffProfile.Employer.CASINO


def _refuse_superusers(actor: Actor, user: User | None, act: str) -> None:
    if getattr(actor, "is_superuser", False):
        raise RoleRequired(
            _(
                "%(act)s : un superutilisateur sert à la maintenance, n'a aucun rôle et ne gère "
                "personne"
            )
            % {"act": act},
            where="actor",
        )
    if user is not None and user.is_superuser:
        raise RoleRequired(
            _(
                "%(act)s : %(user)s est un superutilisateur (maintenance) : aucun rôle, géré sur "
                "le serveur"
            )
            % {"act": act, "user": user.username},
            where="user",
        )


def _require_manager(actor: Actor, user: User, act: str, *, director_may_suspend: bool = False):
    """The actor may act on ``user``'s account: see the module's docstring."""
    _refuse_superusers(actor, user, act)
    if getattr(actor, "pk", None) == user.pk:
        raise RoleRequired(
            _("%(act)s : personne n'agit sur son propre compte") % {"act": act}, where="user"
        )
    body_role = BODY_ROLE.get(_employer(user))  # type: ignore[call-overload]
    if body_role is not None:
        allowed = (body_role, Role.DIRECTEUR) if director_may_suspend else (body_role,)
    elif Role.DIRECTEUR in held_roles(user):
        allowed = (Role.DIRECTEUR, Role.COMITE)
    else:
        allowed = (Role.DIRECTEUR,)
    require_role(
        actor, *allowed, act=_("%(act)s pour %(user)s") % {"act": act, "user": user.username}
    )


def _person(username: str) -> User:
    user = User.objects.filter(username=username).first()
    if user is None:
        raise NotFound(
            _("personne ne s'appelle %(username)r") % {"username": username}, where="username"
        )
    return user


# --- setup codes ------------------------------------------------------------------------------


def _code_hash(code: str) -> str:
    normal = code.replace("-", "").replace(" ", "").upper()
    return hashlib.sha256(normal.encode()).hexdigest()


def _new_code() -> str:
    """80 random bits in base32, grouped by four to be read aloud: ``ABCD-EFGH-IJKL-MNOP``."""
    raw = base64.b32encode(secrets.token_bytes(10)).decode()
    return "-".join(raw[i : i + 4] for i in range(0, len(raw), 4))


def _withdraw_codes(user: User) -> None:
    SetupCode.objects.filter(user=user, used_at=None, withdrawn_at=None).update(
        withdrawn_at=clock.now()
    )


def _issue_code(*, issuer: Actor | None, user: User) -> tuple[str, SetupCode]:
    _withdraw_codes(user)  # one live code at a time
    code = _new_code()
    now = clock.now()
    row = SetupCode.objects.create(
        user=user,
        code_hash=_code_hash(code),
        issued_by=issuer if getattr(issuer, "pk", None) else None,
        issued_at=now,
        expires_at=now + dt.timedelta(hours=settings.SETUP_CODE_HOURS),
    )
    return code, row


def _close_credentials(user: User, reason: str) -> None:
    """No password, no second factor, no token, no pending code: the account waits for a code."""
    user.set_unusable_password()
    user.save(update_fields=["password"])
    TOTPDevice.objects.filter(user=user).delete()
    _withdraw_codes(user)
    revoke_tokens(user=user, reason=reason)


def revoke_tokens(*, user: User, reason: str) -> int:
    """Revoke every live API token of ``user`` (callers audit the act that caused it)."""
    return ApiToken.objects.filter(user=user, revoked_at=None).update(
        revoked_at=clock.now(), revoked_reason=reason
    )


# --- the director's acts ----------------------------------------------------------------------


def _create(
    *, actor: Actor | None, username: str, full_name: str, roles: list[Role], licence_number: str
) -> User:
    employer = StaffProfile.Employer.CASINO
    if Role.COMMISSAIRE in roles:
        employer = StaffProfile.Employer.POLICE
    elif Role.INSPECTEUR in roles:
        employer = StaffProfile.Employer.REGULATOR
    if User.objects.filter(username=username).exists():
        raise Conflict(
            _("le nom d'utilisateur %(username)r est pris") % {"username": username},
            where="username",
        )
    # Outsiders wait for their own body (bootstrap, actor None, is that body's first act).
    active = employer == StaffProfile.Employer.CASINO or actor is None
    user = User.objects.create_user(
        username=username,
        password=None,
        is_staff=True,
        is_active=active,
        date_joined=clock.now(),  # Django's default is the real clock's
    )
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
            "employer": employer,
            "active": active,
        },
    )
    return user


@transaction.atomic
def staff_create(
    *,
    actor: Actor,
    username: str,
    full_name: str,
    roles: Iterable[Role] = (),
    licence_number: str = "",
) -> User:
    """Open an account, with no password. Casino staff are active and need a setup code
    (``staff_issue_setup_code``); a commissaire or inspecteur waits for their body's activation."""
    _refuse_superusers(actor, None, _("ouvrir un compte"))
    require_role(actor, Role.DIRECTEUR, act=_("ouvrir un compte"))
    wanted = sorted(set(roles))
    check_compatible(wanted)
    return _create(
        actor=actor,
        username=username,
        full_name=full_name,
        roles=wanted,
        licence_number=licence_number,
    )


@transaction.atomic
def staff_set_roles(*, actor: Actor, user: User, roles: Iterable[Role]) -> None:
    _refuse_superusers(actor, user, _("changer des rôles"))
    require_role(actor, Role.DIRECTEUR, act=_("changer des rôles"))
    wanted = sorted(set(roles))
    check_compatible(wanted)
    if user.pk == getattr(actor, "pk", None):
        raise RoleRequired(_("personne ne change ses propres rôles"), where="roles")
    if _employer(user) != StaffProfile.Employer.CASINO:
        raise RoleRequired(
            _(
                "%(user)s n'est pas du personnel du casino : les comptes de son corps gardent le "
                "rôle avec lequel ils ont été ouverts (suspendez-le plutôt)"
            )
            % {"user": user.username},
            where="user",
        )
    if set(wanted) & OUTSIDE_ROLES:
        raise RoleRequired(
            _("le commissaire et les inspecteurs ne sont pas du personnel du casino"),
            where="roles",
        )
    before = sorted(held_roles(user))
    if before == wanted:
        return
    user.groups.set(_groups(wanted))
    user.__dict__.pop("_casino_roles", None)
    audit_record(
        actor=actor,
        action="staff.roles_changed",
        subject=user,
        payload={"before": [r.value for r in before], "after": [r.value for r in wanted]},
    )


@transaction.atomic
def staff_issue_setup_code(*, actor: Actor, user: User) -> str:
    """A new setup code for an active account that has no password yet (the last one expired)."""
    _require_manager(actor, user, _("délivrer un code d'installation"))
    if not user.is_active:
        raise Conflict(
            _("%(user)s est inactif : activez le compte") % {"user": user.username}, where="user"
        )
    if user.has_usable_password():
        raise Conflict(
            _("%(user)s a des identifiants : réinitialisez-les d'abord") % {"user": user.username},
            where="user",
        )
    code, row = _issue_code(issuer=actor, user=user)
    audit_record(
        actor=actor,
        action="staff.setup_code_issued",
        subject=user,
        payload={"expires_at": row.expires_at.isoformat()},
    )
    return code


@transaction.atomic
def staff_activate(*, actor: Actor, user: User) -> str | None:
    """Let the account in again. One with no password yet gets a setup code, returned once."""
    _require_manager(actor, user, _("activer un compte"))
    if user.is_active:
        raise Conflict(_("%(user)s est déjà actif") % {"user": user.username}, where="user")
    user.is_active = True
    user.save(update_fields=["is_active"])
    code = None
    if not user.has_usable_password():
        code, _row = _issue_code(issuer=actor, user=user)
    audit_record(
        actor=actor,
        action="staff.activated",
        subject=user,
        payload={"setup_code_issued": code is not None},
    )
    return code


@transaction.atomic
def staff_deactivate(*, actor: Actor, user: User, reason: str) -> None:
    """Close the door: no login, no token; the person stays on record."""
    _require_manager(actor, user, _("désactiver un compte"), director_may_suspend=True)
    if not reason.strip():
        raise Conflict(_("dites pourquoi le compte est désactivé"), where="reason")
    if not user.is_active:
        raise Conflict(_("%(user)s est déjà inactif") % {"user": user.username}, where="user")
    user.is_active = False
    user.save(update_fields=["is_active"])
    _withdraw_codes(user)
    revoked = revoke_tokens(user=user, reason="deactivated")
    audit_record(
        actor=actor,
        action="staff.deactivated",
        subject=user,
        payload={"reason": reason, "tokens_revoked": revoked},
    )


@transaction.atomic
def staff_reset_credentials(*, actor: Actor, user: User) -> str | None:
    """Password, second factor and tokens are gone. Casino staff get a setup code from the actor
    (returned once); a commissaire or inspecteur becomes inactive until their body activates them."""
    _require_manager(actor, user, _("réinitialiser des identifiants"), director_may_suspend=True)
    _close_credentials(user, reason="credentials reset")
    code = None
    if _employer(user) != StaffProfile.Employer.CASINO:
        user.is_active = False
        user.save(update_fields=["is_active"])
    elif user.is_active:
        code, _row = _issue_code(issuer=actor, user=user)
    audit_record(
        actor=actor,
        action="staff.credentials_reset",
        subject=user,
        payload={"setup_code_issued": code is not None, "active": user.is_active},
    )
    return code


@transaction.atomic
def staff_change_profile(
    *, actor: Actor, user: User, full_name: str, licence_number: str
) -> StaffProfile:
    """Name and licence only: the employer follows from the roles at creation, for good."""
    _require_manager(actor, user, _("changer un profil"))
    if not full_name.strip():
        raise Conflict(_("une personne a un nom"), where="full_name")
    profile = StaffProfile.objects.select_for_update().get(user=user)
    before = {"full_name": profile.full_name, "licence_number": profile.licence_number}
    after = {"full_name": full_name.strip(), "licence_number": licence_number.strip()}
    if before == after:
        return profile
    profile.full_name, profile.licence_number = after["full_name"], after["licence_number"]
    profile.save(update_fields=["full_name", "licence_number"])
    audit_record(
        actor=actor,
        action="staff.profile_changed",
        subject=user,
        payload={"before": before, "after": after},
    )
    return profile


# --- the person's own acts --------------------------------------------------------------------


def new_totp_key() -> str:
    """A fresh TOTP secret, hex as django-otp stores it."""
    return secrets.token_hex(20)


def totp_secret_base32(key_hex: str) -> str:
    return base64.b32encode(bytes.fromhex(key_hex)).decode()


def _totp_step(key_hex: str, token: str, tolerance: int = 1) -> int | None:
    """The time step ``token`` is valid at (now ± tolerance), or None."""
    totp = TOTP(bytes.fromhex(key_hex))
    totp.time = time.time()
    try:
        number = int(token)
    except (TypeError, ValueError):
        return None
    return totp.t() if totp.verify(number, tolerance) else None


def _password_checked(password: str, user: User) -> None:
    try:
        validate_password(password, user)
    except ValidationError as exc:
        raise PasswordRefused(" ".join(exc.messages), where="password") from None


def setup_code_holder(*, username: str, code: str) -> User:
    """The account a live setup code opens (the setup page's first step); nothing is written."""
    user = User.objects.filter(username=username).first()
    row = (
        SetupCode.objects.filter(
            code_hash=_code_hash(code),
            user=user,
            used_at=None,
            withdrawn_at=None,
            expires_at__gt=clock.now(),
        ).first()
        if user is not None
        else None
    )
    if row is None or not user.is_active:  # type: ignore[union-attr]
        raise SetupCodeInvalid(
            _(
                "ce nom d'utilisateur et ce code d'installation ne correspondent à aucun code "
                "valable (utilisé, expiré ou retiré ?) ; demandez-en un nouveau"
            ),
            where="code",
        )
    return user  # type: ignore[return-value]


@transaction.atomic
def account_setup(
    *,
    username: str,
    code: str,
    password: str,
    totp_key: str | None = None,
    otp_token: str | None = None,
) -> User:
    """The person, with the code they were handed, chooses a password and (if a role requires it)
    enrols the TOTP device whose first code they give. The code is then spent."""
    user = setup_code_holder(username=username, code=code)
    row = SetupCode.objects.select_for_update().get(code_hash=_code_hash(code))
    if row.used_at is not None or row.withdrawn_at is not None:  # spent by a concurrent request
        raise SetupCodeInvalid(_("ce code d'installation vient d'être utilisé"), where="code")
    _password_checked(password, user)
    second_factor = needs_second_factor(user)
    step = None
    if second_factor:
        if not totp_key or not otp_token:
            raise SecondFactorRequired(
                _(
                    "les rôles de %(username)s demandent un second facteur : enregistrez "
                    "l'appareil TOTP et donnez son premier code"
                )
                % {"username": username},
                where="otp",
            )
        step = _totp_step(totp_key, otp_token)
        if step is None:
            raise SecondFactorRequired(
                _("le code %(code)r n'est pas le code actuel de l'appareil") % {"code": otp_token},
                where="otp",
            )
    TOTPDevice.objects.filter(user=user).delete()
    if step is not None:
        # The code just given is spent: it cannot open the admin afterwards.
        TOTPDevice.objects.create(user=user, name="TOTP", key=totp_key, confirmed=True, last_t=step)
    user.set_password(password)
    user.save(update_fields=["password"])
    row.used_at = clock.now()
    row.save(update_fields=["used_at"])
    revoke_tokens(user=user, reason="password set")
    audit_record(
        actor=user,
        action="account.setup_completed",
        subject=user,
        payload={
            "code_issued_by": row.issued_by.username if row.issued_by else "system",
            "second_factor": step is not None,
        },
    )
    return user


@transaction.atomic
def account_password_change(*, user: User, old_password: str, new_password: str) -> None:
    """One's own password, knowing the old one; every API token of the person dies with it."""
    if not user.check_password(old_password):
        raise PasswordRefused(_("le mot de passe actuel est faux"), where="old_password")
    _password_checked(new_password, user)
    user.set_password(new_password)
    user.save(update_fields=["password"])
    revoked = revoke_tokens(user=user, reason="password changed")
    audit_record(
        actor=user,
        action="account.password_changed",
        subject=user,
        payload={"tokens_revoked": revoked},
    )


# --- maintenance (management commands, run on the server) -------------------------------------


Person = tuple[str, str] | tuple[str, str, str]  # username, full name[, licence number]


@transaction.atomic
def people_bootstrap(
    *, directeur: Person, commissaire: Person, inspecteur: Person
) -> dict[str, str]:
    """A house with nobody yet: its first director, commissioner and inspector, and their setup
    codes (username -> code). Refused once anyone holds one of those roles."""
    first = {Role.DIRECTEUR: directeur, Role.COMMISSAIRE: commissaire, Role.INSPECTEUR: inspecteur}
    taken = Group.objects.filter(name__in=[r.value for r in first], user__isnull=False)
    if taken.exists():
        raise Conflict(
            _(
                "la maison est déjà installée : %(roles)s attribués ; les personnes sont gérées "
                "par le directeur et par leurs corps"
            )
            % {"roles": ", ".join(sorted(set(taken.values_list("name", flat=True))))},
            where="bootstrap",
        )
    codes = {}
    for role, (username, full_name, *licence) in first.items():
        user = _create(
            actor=None,
            username=username,
            full_name=full_name,
            roles=[role],
            licence_number=licence[0] if licence else "",
        )
        codes[username], _row = _issue_code(issuer=None, user=user)
    audit_record(actor=None, action="people.bootstrapped", payload={"people": sorted(codes)})
    return codes


@transaction.atomic
def maintenance_setup_code(*, username: str) -> str:
    """A setup code for a superuser (maintenance), whose second factor is enrolled with it."""
    user = _person(username)
    if not user.is_superuser or held_roles(user):
        raise RoleRequired(
            _(
                "%(username)s n'est pas un superutilisateur sans rôle : les personnes reçoivent "
                "leurs codes de ceux qui les gèrent"
            )
            % {"username": username},
            where="username",
        )
    code, row = _issue_code(issuer=None, user=user)
    audit_record(
        actor=None,
        action="maintenance.setup_code_issued",
        subject=user,
        payload={"expires_at": row.expires_at.isoformat()},
    )
    return code
