"""The home page: what waits for the person signed in, one section per role held (a person may
hold several), each item a link to the page where it is done. It is the admin's index, the
first page after login (casino/people/adminsite.py); the registers' list, Django's own index,
stays a link away."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _

from casino.people.roles import Role
from casino.people.services import roles_of
from casino.pit.pages import page
from casino.pit.waiting import Section
from casino.pit.waiting_floor import caissier, chef_de_partie, table_staff
from casino.pit.waiting_oversight import auditeur, commissaire, direction, inspecteur

# Each section and the roles that show it, in the order of the page. The tailleur and the
# croupier share one (their table); so do the director and the comité (one person certifies a
# register in one capacity).
SECTIONS: list[tuple[frozenset[Role], Callable[[Any], Section]]] = [
    (frozenset({Role.TAILLEUR, Role.CROUPIER}), table_staff),
    (frozenset({Role.CHEF_DE_PARTIE}), chef_de_partie),
    (frozenset({Role.CAISSIER}), caissier),
    (frozenset({Role.COMMISSAIRE}), commissaire),
    (frozenset({Role.DIRECTEUR, Role.COMITE}), direction),
    (frozenset({Role.AUDITEUR}), auditeur),
    (frozenset({Role.INSPECTEUR}), inspecteur),
]


def sections(user: Any) -> list[Section]:
    held = roles_of(user)
    return [build(user) for roles, build in SECTIONS if roles & held]


def home(request: HttpRequest) -> HttpResponse:
    return page(
        request,
        "pit/home.html",
        title=_("Ce qui vous attend"),
        sections=sections(request.user),
    )
