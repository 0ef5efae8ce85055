"""The fixed cast of every test: one person per role, a superuser and an outsider.

Like healthchecks' alice/bob/charlie: tests name who acts, and the names say why they may or may not.
The cast is made as a real house is: ``people_bootstrap`` gives the first director, commissioner
and inspector; the director opens the other accounts; everyone (root too, through the maintenance
command's service) chooses ``PASSWORD`` with their setup code and enrols a TOTP device when a role
requires one, through the service the setup page calls.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.test import Client
from django_otp.oath import TOTP
from django_otp.plugins.otp_totp.models import TOTPDevice

from casino.people.roles import Role
from casino.people.services import (
    account_setup,
    maintenance_setup_code,
    needs_second_factor,
    new_totp_key,
    people_bootstrap,
    staff_create,
    staff_issue_setup_code,
)


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
STEP = 30


def totp_at(key_hex: str, step: int) -> str:
    totp = TOTP(bytes.fromhex(key_hex))
    totp.time = step * STEP
    return f"{totp.token():06d}"


def set_up(user: User, code: str, password: str = PASSWORD) -> User:
    """What the person does on /account/setup/ with the code they were handed."""
    key = new_totp_key() if needs_second_factor(user) else None
    # The previous step's code (still accepted): the device's next two steps stay free for logins.
    # Not in the last second of a step: the code would be two steps old when checked.
    if time.time() % STEP > STEP - 1:
        time.sleep(1.1)
    token = totp_at(key, int(time.time()) // STEP - 1) if key else None
    return account_setup(
        username=user.username, code=code, password=password, totp_key=key, otp_token=token
    )


def otp_code(user: User) -> str:
    """A TOTP code the user's device accepts now and has not accepted before."""
    while True:
        device = TOTPDevice.objects.get(user=user, confirmed=True)
        now = int(time.time()) // STEP + device.drift
        step = max(now, device.last_t + 1)
        if step <= now + device.tolerance:
            return totp_at(device.key, step)
        time.sleep(STEP - time.time() % STEP + 0.1)  # every fresh code spent: the next step


def login_admin(client: Client, user: User, password: str = PASSWORD) -> Client:
    """Log into the admin as a person does: password, and the TOTP code when one is required."""
    data = {"username": user.username, "password": password}
    if TOTPDevice.objects.filter(user=user, confirmed=True).exists():
        data["otp_token"] = otp_code(user)
    response = client.post("/admin/login/", data)
    assert response.status_code == 302, response.content.decode()[-2000:]
    return client


def admin_client(user: User) -> Client:
    return login_admin(Client(), user)


def hire(directeur: User, username: str, *roles: Role, full_name: str = "") -> User:
    """A new casino employee, opened by the director, set up with ``PASSWORD``."""
    user = staff_create(
        actor=directeur, username=username, full_name=full_name or username.title(), roles=roles
    )
    set_up(user, staff_issue_setup_code(actor=directeur, user=user))
    user.refresh_from_db()
    return user


def make_cast() -> Cast:
    root = User.objects.create_superuser("root", "", None)
    set_up(root, maintenance_setup_code(username="root"))
    codes = people_bootstrap(
        directeur=("directeur", "Directeur"),
        commissaire=("commissaire", "Commissaire"),
        inspecteur=("inspecteur", "Inspecteur"),
    )
    first = {}
    for username, code in codes.items():
        first[username] = set_up(User.objects.get(username=username), code)
    directeur = first["directeur"]

    def person(username: str, *roles: Role) -> User:
        return hire(directeur, username, *roles)

    return Cast(
        root=User.objects.get(pk=root.pk),
        directeur=User.objects.get(pk=directeur.pk),
        comite=person("comite", Role.COMITE),
        chef=person("chef", Role.CHEF_DE_PARTIE),
        tailleur=person("tailleur", Role.TAILLEUR),
        croupier=person("croupier", Role.CROUPIER),
        caissier=person("caissier", Role.CAISSIER),
        commissaire=User.objects.get(username="commissaire"),
        inspecteur=User.objects.get(username="inspecteur"),
        auditeur=person("auditeur", Role.AUDITEUR),
        auditeur2=person("auditeur2", Role.AUDITEUR),
        outsider=person("outsider"),
    )
