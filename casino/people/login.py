"""Logging in, for the admin's login form and the API's token endpoint alike.

Password, then (for the roles that require it, and superusers) the TOTP code of a confirmed device.
Every try is recorded; after ``LOGIN_FAILURE_LIMIT`` failures of one username from one address within
``LOGIN_LOCKOUT_MINUTES``, counted since its last success, that pair is refused until the window
passes. The counter lives in PostgreSQL so every web worker sees it.
"""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.contrib.auth import authenticate
from django.contrib.auth.models import User
from django.db.models import Max
from django.utils.translation import gettext as _
from django_otp.plugins.otp_totp.models import TOTPDevice

from casino import clock
from casino.people.errors import InvalidCredentials, SecondFactorRequired, TooManyAttempts
from casino.people.models import LoginAttempt
from casino.people.services import needs_second_factor


def _wrong() -> str:
    """One message for any wrong credential: it does not say which one was wrong."""
    return _(
        "le nom d'utilisateur, le mot de passe ou le code TOTP est faux (le code TOTP est demandé "
        "aux rôles qui signent, décident ou contrôlent)"
    )


# Attempts are stamped and counted by the machine's time, never a simulation's: a clock set in the
# past would let the attempts it stamps fall out of the window, and the lock would not hold.


def _failures(username: str, ip: str | None) -> int:
    since = clock.wall() - dt.timedelta(minutes=settings.LOGIN_LOCKOUT_MINUTES)
    tries = LoginAttempt.objects.filter(username=username, ip=ip, at__gt=since)
    last_ok = tries.filter(ok=True).aggregate(at=Max("at"))["at"]
    if last_ok is not None:
        tries = tries.filter(at__gt=last_ok)
    return tries.filter(ok=False).count()


def _record(username: str, ip: str | None, ok: bool, where: str) -> None:
    LoginAttempt.objects.create(username=username, ip=ip, at=clock.wall(), ok=ok, where=where)


def login_check(*, username: str, password: str, otp: str, ip: str | None, where: str) -> User:
    """The user these credentials open, with ``user.otp_device`` set when a code was checked."""
    if _failures(username, ip) >= settings.LOGIN_FAILURE_LIMIT:
        raise TooManyAttempts(
            _(
                "trop de connexions manquées pour %(username)r depuis cette adresse : réessayez "
                "dans %(minutes)s minutes"
            )
            % {"username": username, "minutes": settings.LOGIN_LOCKOUT_MINUTES},
            where="username",
        )
    user = authenticate(username=username, password=password)
    if user is None:
        _record(username, ip, False, where)
        raise InvalidCredentials(_wrong(), where="password")
    if needs_second_factor(user):
        device = TOTPDevice.objects.filter(user=user, confirmed=True).first()
        if device is None:
            # Only someone who knows the password learns this; it is not a failed guess.
            raise SecondFactorRequired(
                _(
                    "les rôles de %(username)s demandent un second facteur et aucun n'est "
                    "enregistré : utilisez votre code d'installation sur /account/setup/ "
                    "(demandez-en un à votre responsable)"
                )
                % {"username": username},
                where="otp",
            )
        if not otp or not device.verify_token(otp.strip()):
            _record(username, ip, False, where)
            raise InvalidCredentials(_wrong(), where="otp")
        user.otp_device = device  # type: ignore[attr-defined]  # django_otp.login() keeps it
    _record(username, ip, True, where)
    return user  # type: ignore[return-value]


def client_ip(request: object) -> str | None:
    # The address the web server saw; behind a proxy, the proxy must set REMOTE_ADDR.
    return getattr(request, "META", {}).get("REMOTE_ADDR") or None
