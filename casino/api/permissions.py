"""Who may read what over the API. Writes check roles in their services, not here."""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import BasePermission

from casino.people.roles import Role
from casino.people.services import roles_of


class HoldsRole(BasePermission):
    """Grants access to users holding any of the view's ``read_roles``."""

    message = "your roles do not give access to this resource"

    def has_permission(self, request: Any, view: Any) -> bool:
        allowed: tuple[Role, ...] = getattr(view, "read_roles", ())
        return bool(roles_of(request.user) & set(allowed))


# Those who oversee everything read everything.
OVERSIGHT = (Role.INSPECTEUR, Role.AUDITEUR, Role.DIRECTEUR, Role.COMITE, Role.COMMISSAIRE)
