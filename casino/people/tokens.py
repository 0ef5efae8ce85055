"""API tokens of our own: the key is shown once and stored as its SHA-256; a token lives one shift
(``API_TOKEN_HOURS``) and dies at logout, at deactivation and at any change of the password."""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction

from audit.chain import audit_record
from casino import clock
from casino.people.models import ApiToken


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


@transaction.atomic
def token_issue(*, user: User) -> tuple[ApiToken, str]:
    """A new token for ``user`` (whose credentials were just checked) and its key, given once."""
    key = secrets.token_hex(20)
    now = clock.now()
    token = ApiToken.objects.create(
        user=user,
        key_hash=key_hash(key),
        prefix=key[:8],
        created_at=now,
        expires_at=now + dt.timedelta(hours=settings.API_TOKEN_HOURS),
        auth_hash=user.get_session_auth_hash(),
    )
    audit_record(
        actor=user,
        action="token.issued",
        subject=user,
        payload={"prefix": token.prefix, "expires_at": token.expires_at.isoformat()},
    )
    return token, key


@transaction.atomic
def token_revoke(*, user: User, token: ApiToken, reason: str = "logout") -> None:
    updated = ApiToken.objects.filter(pk=token.pk, user=user, revoked_at=None).update(
        revoked_at=clock.now(), revoked_reason=reason
    )
    if updated:
        audit_record(
            actor=user,
            action="token.revoked",
            subject=user,
            payload={"prefix": token.prefix, "reason": reason},
        )
