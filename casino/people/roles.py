"""The roles of the house (DESIGN.md, Roles) and the duties they may not combine.

Roles are Django groups of the same name. Holding a role is never implied: a superuser who holds no
role cannot act as a tailleur or decide a dispute; being superuser only opens the admin's menus.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from casino.errors import SegregationViolation


class Role(StrEnum):
    DIRECTEUR = "directeur"
    COMITE = "comite"
    CHEF_DE_PARTIE = "chef_de_partie"
    TAILLEUR = "tailleur"
    CROUPIER = "croupier"
    CAISSIER = "caissier"
    COMMISSAIRE = "commissaire"
    INSPECTEUR = "inspecteur"
    AUDITEUR = "auditeur"

    @property
    def label(self) -> str:
        return str(ROLE_LABELS[self])


ROLE_LABELS = {
    Role.DIRECTEUR: gettext_lazy("Directeur"),
    Role.COMITE: gettext_lazy("Comité de direction"),
    Role.CHEF_DE_PARTIE: gettext_lazy("Chef de partie"),
    Role.TAILLEUR: gettext_lazy("Tailleur"),
    Role.CROUPIER: gettext_lazy("Croupier"),
    Role.CAISSIER: gettext_lazy("Caissier"),
    Role.COMMISSAIRE: gettext_lazy("Commissaire de police"),
    Role.INSPECTEUR: gettext_lazy("Inspecteur (lecture seule)"),
    Role.AUDITEUR: gettext_lazy("Auditeur interne"),
}

# Who records play or handles its money.
GAMING_ROLES = frozenset({Role.CHEF_DE_PARTIE, Role.TAILLEUR, Role.CROUPIER})
MONEY_ROLES = frozenset({Role.CAISSIER})
# Those outside the house hold no other role at all.
OUTSIDE_ROLES = frozenset({Role.COMMISSAIRE, Role.INSPECTEUR})
# Who signs, decides or oversees proves it is them with a second factor (TOTP), as do superusers.
SECOND_FACTOR_ROLES = frozenset(
    {Role.DIRECTEUR, Role.COMITE, Role.COMMISSAIRE, Role.AUDITEUR, Role.INSPECTEUR}
)


def _incompatible_pairs() -> frozenset[frozenset[Role]]:
    pairs: set[frozenset[Role]] = set()
    # Whoever records play does not approve it: the director and the comité sign the registers,
    # internal audit reviews the anomalies of play; none of them records play or handles its cash.
    for overseer in (Role.DIRECTEUR, Role.COMITE, Role.AUDITEUR):
        for doer in GAMING_ROLES | MONEY_ROLES:
            pairs.add(frozenset({overseer, doer}))
    # The commissioner is not casino staff, and a regulator inspects everyone.
    for outsider in OUTSIDE_ROLES:
        for other in Role:
            if other != outsider:
                pairs.add(frozenset({outsider, other}))
    # The cashier's counterpart at the table must be another person.
    for doer in GAMING_ROLES:
        pairs.add(frozenset({Role.CAISSIER, doer}))
    return frozenset(pairs)


INCOMPATIBLE = _incompatible_pairs()


def check_compatible(roles: Iterable[Role | str]) -> None:
    """Refuse a set of roles one person may not hold together.

    >>> check_compatible([Role.TAILLEUR, Role.CROUPIER])
    >>> check_compatible([Role.COMITE, Role.TAILLEUR])
    Traceback (most recent call last):
    ...
    casino.errors.SegregationViolation: comite and tailleur may not be held by one person
    """
    held = sorted({Role(r) for r in roles})
    for i, a in enumerate(held):
        for b in held[i + 1 :]:
            if frozenset({a, b}) in INCOMPATIBLE:
                raise SegregationViolation(
                    _("%(first)s et %(second)s ne peuvent pas être tenus par une même personne")
                    % {"first": a.value, "second": b.value},
                    where="roles",
                )


# What each role may see in the admin. Writes never come from model permissions: every act is a
# service that checks the actor's role itself; "change" permissions below only open the admin pages
# whose actions call those services.
_VIEW_ALL = (
    "audit.view_auditevent",
    "audit.view_anomaly",
    "audit.view_anomalyreview",
    "audit.view_chainverification",
    "auth.view_user",
    "people.view_staffprofile",
    "outbox.view_outboxmessage",
    "floor.view_table",
    "floor.view_shift",
    "floor.view_postedreglement",
    "floor.view_floatcount",
    "floor.view_account",
    "floor.view_movement",
    "floor.view_coup",
    "floor.view_stake",
    "floor.view_settlement",
    "floor.view_coupresult",
    "floor.view_taille",
    "floor.view_pharaostake",
    "floor.view_pharaoapproval",
    "floor.view_deal",
    "floor.view_cercleseat",
    "shoes.view_pack",
    "shoes.view_sealverification",
    "shoes.view_packevent",
    "shoes.view_cardlaid",
    "shoes.view_registervisa",
    "shoes.view_reconciliation",
    "shoes.view_taloncount",
    "floor.view_duty",
    "disputes.view_dispute",
    "disputes.view_disputestep",
    "disputes.view_evidence",
    "disputes.view_decision",
    "police.view_observation",
    "police.view_followup",
    "reports.view_report",
    "reports.view_registersignoff",
)
# The pack register for those who handle packs.
_PACKS = (
    "shoes.view_pack",
    "shoes.view_packevent",
    "shoes.view_sealverification",
    "shoes.view_taloncount",
    "floor.view_table",
    "floor.view_shift",
    "floor.view_postedreglement",
    "floor.view_coup",
    "floor.view_stake",
    "floor.view_settlement",
    "floor.view_taille",
    "floor.view_pharaostake",
    "floor.view_pharaoapproval",
    "floor.view_duty",
    "disputes.view_dispute",  # floor staff raise disputes and follow them
    "disputes.view_disputestep",
    "disputes.view_evidence",
    "disputes.view_decision",
)
# The cercle's deals and seats for those who work the tables: a deal's hands are the players'
# secret, so the cashier does not read them, and a croupier reads only the deals of the séances
# he worked (casino/floor/play/alliance/admin.py).
_CERCLE = ("floor.view_deal", "floor.view_cercleseat")
# The director appoints staff (roles through staff_set_roles, which checks segregation).
_STAFF_MANAGEMENT = (
    "auth.add_user",
    "auth.change_user",
    "people.add_staffprofile",
    "people.change_staffprofile",
)
ROLE_PERMISSIONS: dict[Role, tuple[str, ...]] = {
    Role.DIRECTEUR: (*_VIEW_ALL, *_STAFF_MANAGEMENT, "audit.change_anomaly"),
    Role.COMITE: _VIEW_ALL,
    Role.CHEF_DE_PARTIE: (
        "audit.view_anomaly",
        "people.view_staffprofile",
        "reports.view_report",
        *_PACKS,
        *_CERCLE,
    ),
    Role.TAILLEUR: (*_PACKS, *_CERCLE),
    Role.CROUPIER: (*_PACKS, *_CERCLE),
    Role.CAISSIER: _PACKS,
    Role.COMMISSAIRE: (*_VIEW_ALL, "audit.change_anomaly"),
    Role.INSPECTEUR: _VIEW_ALL,
    Role.AUDITEUR: (*_VIEW_ALL, "audit.change_anomaly"),
}


def sync_role_permissions(**_: Any) -> None:
    """Give each role group exactly the permissions of ROLE_PERMISSIONS (run after every migrate,
    once per application migrated, and after every test that commits: so it reads everything in
    three queries and writes only what differs)."""
    from django.contrib.auth.models import Group, Permission

    codenames = {code.split(".")[1] for codes in ROLE_PERMISSIONS.values() for code in codes}
    known = {
        f"{p.content_type.app_label}.{p.codename}": p.pk
        for p in Permission.objects.filter(codename__in=codenames).select_related("content_type")
    }
    groups = {
        g.name: g
        for g in Group.objects.filter(
            name__in=[r.value for r in ROLE_PERMISSIONS]
        ).prefetch_related("permissions")
    }
    for role, codes in ROLE_PERMISSIONS.items():
        group = groups.get(role.value) or Group.objects.create(name=role.value)
        # A permission of a later migration's model is not there yet: the next run adds it.
        wanted = {known[code] for code in codes if code in known}
        if {p.pk for p in group.permissions.all()} != wanted:
            group.permissions.set(wanted)
