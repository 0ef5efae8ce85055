"""Who is calling: our own API tokens (``Authorization: Token <key>``), or an admin session.

A token is refused once expired, revoked, or issued before the person's password last changed (the
session hash stored at issue no longer matches), and for an inactive person.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.utils.crypto import constant_time_compare
from django.utils.translation import gettext as _
from drf_spectacular.authentication import SessionScheme
from rest_framework import exceptions
from rest_framework.authentication import SessionAuthentication, TokenAuthentication

from casino import clock
from casino.people.models import ApiToken
from casino.people.services import needs_second_factor
from casino.people.tokens import key_hash
from casino.prepared import Prepared

# Marking a token used costs a write: once a minute is enough to see it is alive.
LAST_USED_EVERY = dt.timedelta(minutes=1)

# Every terminal request begins here: prepared once (casino/prepared.py).
_TOKEN = Prepared(lambda hashed: ApiToken.objects.select_related("user").filter(key_hash=hashed))


class TokenRefused(exceptions.AuthenticationFailed):
    pass


class ApiTokenAuthentication(TokenAuthentication):
    keyword = "Token"

    def authenticate_credentials(self, key: str) -> tuple[Any, ApiToken]:
        token = _TOKEN.first(key_hash(key))
        if token is None:
            raise TokenRefused(_("jeton inconnu : reconnectez-vous"), code="token_invalid")
        now = clock.now()
        if token.revoked_at is not None:
            raise TokenRefused(
                _("le jeton %(prefix)s… a été révoqué (%(reason)s) : reconnectez-vous")
                % {"prefix": token.prefix, "reason": token.revoked_reason},
                code="token_revoked",
            )
        if token.expires_at <= now:
            raise TokenRefused(
                _("le jeton %(prefix)s… a expiré à %(at)s : reconnectez-vous")
                % {"prefix": token.prefix, "at": token.expires_at.isoformat()},
                code="token_expired",
            )
        user = token.user
        if not user.is_active:
            raise TokenRefused(
                _("le compte de %(username)s est inactif") % {"username": user.username},
                code="account_inactive",
            )
        if not constant_time_compare(token.auth_hash, user.get_session_auth_hash()):
            raise TokenRefused(
                _(
                    "le jeton %(prefix)s… est antérieur à un changement de mot de passe : "
                    "reconnectez-vous"
                )
                % {"prefix": token.prefix},
                code="token_revoked",
            )
        if token.last_used_at is None or now - token.last_used_at > LAST_USED_EVERY:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return user, token


class VerifiedSessionAuthentication(SessionAuthentication):
    """The admin's session, for the browsable API: for the roles that require a second factor,
    only a session that gave it (the admin's login always asks it; this guards the rest)."""

    def authenticate(self, request: Any) -> tuple[Any, None] | None:
        result = super().authenticate(request)
        if result is None:
            return None
        user = result[0]
        verified = getattr(request._request.user, "is_verified", lambda: False)()
        if needs_second_factor(user) and not verified:
            return None
        return result


class VerifiedSessionScheme(SessionScheme):
    """The schema names the admin session as drf-spectacular names Django's own."""

    target_class = "casino.api.authentication.VerifiedSessionAuthentication"
