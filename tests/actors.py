"""The fixed cast of every test: one person per role, a superuser and an outsider.

Like healthchecks' alice/bob/charlie: tests name who acts, and the names say why they may or may not.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User

from casino.people.roles import Role
from casino.people.services import staff_create


@dataclass
class Cast:
    root: User  # superuser, holds no role
    directeur: User
    comite: User
    chef: User
    tailleur: User
    croupier: User
    caissier: User
    commissaire: User
    inspecteur: User
    auditeur: User
    auditeur2: User
    outsider: User  # staff login, no role at all

    def by_role(self, role: Role) -> User:
        return {
            Role.DIRECTEUR: self.directeur,
            Role.COMITE: self.comite,
            Role.CHEF_DE_PARTIE: self.chef,
            Role.TAILLEUR: self.tailleur,
            Role.CROUPIER: self.croupier,
            Role.CAISSIER: self.caissier,
            Role.COMMISSAIRE: self.commissaire,
            Role.INSPECTEUR: self.inspecteur,
            Role.AUDITEUR: self.auditeur,
        }[role]


PASSWORD = "correct-horse-battery"


def make_cast() -> Cast:
    root = User.objects.create_superuser("root", "", PASSWORD)

    def person(username: str, *roles: Role) -> User:
        return staff_create(
            actor=root,
            username=username,
            full_name=username.title(),
            roles=roles,
            password=PASSWORD,
        )

    return Cast(
        root=root,
        directeur=person("directeur", Role.DIRECTEUR),
        comite=person("comite", Role.COMITE),
        chef=person("chef", Role.CHEF_DE_PARTIE),
        tailleur=person("tailleur", Role.TAILLEUR),
        croupier=person("croupier", Role.CROUPIER),
        caissier=person("caissier", Role.CAISSIER),
        commissaire=person("commissaire", Role.COMMISSAIRE),
        inspecteur=person("inspecteur", Role.INSPECTEUR),
        auditeur=person("auditeur", Role.AUDITEUR),
        auditeur2=person("auditeur2", Role.AUDITEUR),
        outsider=person("outsider"),
    )
