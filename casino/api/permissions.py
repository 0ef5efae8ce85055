"""Who may read what over the API. Writes check roles in their services, not here."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _
from rest_framework.permissions import BasePermission

from casino.people.roles import Role
from casino.people.services import roles_of


class HoldsRole(BasePermission):
    """Grants access to users holding any of the view's ``read_roles``."""

    message = _("vos rôles ne donnent pas accès à cette ressource")

    def has_permission(self, request: Any, view: Any) -> bool:
        allowed: tuple[Role, ...] = getattr(view, "read_roles", ())
        return bool(roles_of(request.user) & set(allowed))


# Those who oversee everything read everything.
OVERSIGHT = (Role.INSPECTEUR, Role.AUDITEUR, Role.DIRECTEUR, Role.COMITE, Role.COMMISSAIRE)
# The pit boss reads the whole floor (he decides disputes about any table); the cage reads the
# séances, their cash and the card room; the dealers read the séances they worked.
PIT = (*OVERSIGHT, Role.CHEF_DE_PARTIE)
CAGE_AND_PIT = (*PIT, Role.CAISSIER)
DEALERS = (Role.TAILLEUR, Role.CROUPIER)
FLOOR_READERS = (*CAGE_AND_PIT, *DEALERS)
EVERYONE = tuple(Role)
