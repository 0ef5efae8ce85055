"""What waits for the floor's staff: the table staff their table, the chef de partie his séances,
their fills and credits and the disputes to decide, the cashier the packs to store and the fills
and credits to sign."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from django.utils.translation import gettext as _

from casino.disputes.api import DisputeList
from casino.disputes.models import DisputeState
from casino.disputes.services import recorders
from casino.floor.api import DutyList, ShiftList, TransferList
from casino.floor.models import Duty, Shift
from casino.pit.cage import Transfer, transfers
from casino.pit.cardroom import demands
from casino.pit.templatetags.pit_cash import money, person
from casino.pit.waiting import Group, Item, Link, Section, quoted
from shoes.api import PackList
from shoes.models import PackState

DEALING_POSTS = (Duty.Post.TAILLEUR, Duty.Post.CROUPIER)


def table_staff(user: Any) -> Section:
    """The tailleur or croupier on duty: his table page, the one place where he works."""
    duties = (
        DutyList.readable_by(user)
        .filter(person=user, post__in=DEALING_POSTS, end__isnull=True)
        .filter(shift__closed_at__isnull=True)
        .select_related("shift__table")
    )
    items = [
        Item(
            _("%(table)s : vous y êtes de service comme %(post)s")
            % {"table": duty.shift.table, "post": duty.get_post_display()},
            reverse("admin:pit-table", args=[duty.shift.table.number]),
            at=duty.started_at,
        )
        for duty in duties
    ]
    return Section(
        "table",
        _("À la table"),
        [Group("duty", _("Votre table"), items, _("Vous n'êtes de service à aucune table."))],
    )


def chef_de_partie(user: Any) -> Section:
    seances = list(
        ShiftList.readable_by(user)
        .filter(
            closed_at__isnull=True,
            duties__person=user,
            duties__post=Duty.Post.CHEF_DE_PARTIE,
            duties__end__isnull=True,
        )
        .select_related("table")
        .order_by("table__number")
        .distinct()
    )
    to_sign = [
        t
        for t in _open_transfers(user, shift__in=seances)
        if t.waiting_for == "table"  # the cage recorded it: the chef on duty signs for the table
    ]
    return Section(
        "chef_de_partie",
        _("Chef de partie"),
        [
            Group(
                "seances",
                _("Vos séances ouvertes"),
                [_seance(shift) for shift in seances],
                _("Aucune séance n'est ouverte à votre nom."),
                act=Link(_("Ouvrir une séance"), reverse("admin:pit-seance-open")),
            ),
            Group(
                "table-signatures",
                _("Apports et retours à signer pour la table"),
                [
                    _transfer(t, reverse("admin:pit-seance", args=[t.record.shift_id]))
                    for t in to_sign
                ],
                _("Aucun apport ni retour n'attend la signature de vos tables."),
            ),
            Group(
                "disputes",
                _("Contestations à examiner ou à décider"),
                _disputes(user),
                _("Aucune contestation n'attend de décision en première instance."),
            ),
        ],
    )


def caissier(user: Any) -> Section:
    to_store = PackList.readable_by(user).filter(state=PackState.RECEIVED).order_by("received_at")
    to_sign = [t for t in _open_transfers(user) if t.waiting_for == "cage"]
    card_room = reverse("admin:pit-card-room")
    withdrawn = set(
        PackList.readable_by(user).filter(state=PackState.WITHDRAWN).values_list("pk", flat=True)
    )
    return Section(
        "caissier",
        _("Caisse"),
        [
            Group(
                "cage-signatures",
                _("Apports et retours à signer pour la caisse"),
                [_transfer(t, reverse("admin:pit-cage")) for t in to_sign],
                _("Aucun apport ni retour n'attend la signature de la caisse."),
                act=Link(_("La caisse"), reverse("admin:pit-cage")),
            ),
            Group(
                "to-store",
                _("Jeux reçus, à ranger en magasin"),
                [
                    Item(
                        _("%(kind)s scellé %(seal)s, reçu par %(by)s")
                        % {
                            "seal": p.seal_number,
                            "kind": p.get_kind_display(),
                            "by": person(p.received_by),
                        },
                        reverse("admin:pit-pack", args=[p.pk]),
                        at=p.received_at,
                    )
                    for p in to_store.select_related("received_by")
                ],
                _("Aucun jeu reçu n'attend d'être rangé."),
                act=Link(_("Recevoir une livraison"), f"{card_room}#delivery"),
            ),
            Group(
                "demands",
                _("Jeux neufs demandés aux tables"),
                [
                    Item(
                        _("%(table)s demande un jeu scellé neuf (le jeu %(seal)s est retiré)")
                        % {"table": p.table, "seal": p.seal_number},
                        f"{card_room}#demand-{p.pk}",
                        urgent=True,
                    )
                    for p in demands()
                    if p.pk in withdrawn
                ],
                _("Aucune table n'attend de jeu neuf."),
            ),
        ],
    )


# --- the parts -----------------------------------------------------------------------------------


def _seance(shift: Shift) -> Item:
    return Item(
        str(shift.table),
        reverse("admin:pit-seance", args=[shift.pk]),
        at=shift.opened_at,
        note=_("séance ouverte"),
        also=(Link(_("page de la table"), reverse("admin:pit-table", args=[shift.table.number])),),
    )


def _open_transfers(user: Any, **where: Any) -> list[Transfer]:
    """The fills and credits of the séances still open, as the pages show them."""
    readable = TransferList.readable_by(user).filter(shift__closed_at__isnull=True, **where)
    return transfers(readable)


def _transfer(transfer: Transfer, page: str) -> Item:
    return Item(
        _("%(kind)s de %(amount)s pour %(table)s, enregistré par %(by)s")
        % {
            "kind": transfer.kind.capitalize(),
            "amount": money(transfer.record.amount),
            "table": transfer.record.shift.table,
            "by": person(transfer.record.recorded_by),
        },
        f"{page}#transfer-{transfer.record.pk}",
        at=transfer.record.at,
    )


def _disputes(user: Any) -> list[Item]:
    """Disputes in the first instance, oldest first: to review (open) or to decide (under
    review). One the chef raised or whose contested act he recorded is another chef's to decide
    (the service refuses him): it is shown, said so, not as his."""
    found = (
        DisputeList.readable_by(user)
        .filter(state__in=[DisputeState.OPEN, DisputeState.UNDER_REVIEW])
        .order_by("raised_at", "id")
    )
    items = []
    for dispute in found:
        kept_apart = dispute.raised_by_id == user.pk or user.pk in recorders(dispute)
        act = "review" if dispute.state == DisputeState.OPEN else "decide"
        items.append(
            Item(
                _("Contestation n° %(number)s : « %(claim)s »")
                % {"number": dispute.pk, "claim": quoted(dispute.claim)},
                reverse("admin:disputes_dispute_act", args=[dispute.pk, act]),
                at=dispute.raised_at,
                note=(
                    _("vous y êtes partie : un autre chef de partie en décide")
                    if kept_apart
                    else _("à examiner")
                    if act == "review"
                    else _("à décider")
                ),
            )
        )
    return items
