"""Who may read a page of the séance, the cage and the card room: the API's read scopes
(casino/api/permissions.py), so that a page never shows what the API would refuse. Acts are
not decided here: each is its service's to refuse."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _

from casino.api.permissions import CAGE_AND_PIT, FLOOR_READERS
from casino.floor.models import Duty, Shift
from casino.people.roles import Role
from casino.people.services import roles_of
from casino.pit.pages import page

__all__ = ["CAGE_AND_PIT", "FLOOR_READERS", "holds", "refused", "worked"]


def holds(user: Any, *roles: Role) -> bool:
    return bool(roles_of(user) & set(roles))


def worked(user: Any, shift: Shift) -> bool:
    """A tailleur or a croupier reads the séances he has been on duty at."""
    return Duty.objects.filter(shift=shift, person=user).exists()


def refused(request: HttpRequest) -> HttpResponse:
    """The page is not for this person: said in the admin's frame, with a 403."""
    response = page(
        request,
        "pit/seance_refused.html",
        title=_("Accès refusé"),
        reason=_("vos rôles ne donnent pas accès à cette page"),
    )
    response.status_code = 403
    return response
