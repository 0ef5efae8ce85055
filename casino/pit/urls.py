"""The pit's URLs, mounted by the admin site under /admin/pit/ (casino/people/adminsite.py), each
view behind the admin's login and second factor. Reverse them as ``admin:pit-…``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.urls import URLPattern, path

from casino.pit import alliance, cage, cardroom, home, pharao, seance, table


def urls(protect: Callable[[Any], Any]) -> list[URLPattern]:
    return [
        path("", protect(home.home), name="pit-home"),
        # The table page: the tailleur and croupiers on duty play the coups there.
        path("table/<int:number>/", protect(table.table), name="pit-table"),
        # Its panel, polled; and its acts, each one POST through the service the API calls.
        path("table/<int:number>/panel/", protect(table.panel), name="pit-table-panel"),
        path("table/<int:number>/coup/", protect(table.coup_open), name="pit-table-coup"),
        path("table/<int:number>/stakes/", protect(table.stake_place), name="pit-table-stake"),
        path(
            "table/<int:number>/stakes/<int:stake_id>/withdraw/",
            protect(table.stake_withdraw),
            name="pit-table-withdraw",
        ),
        path(
            "table/<int:number>/close-betting/",
            protect(table.close_betting),
            name="pit-table-close-betting",
        ),
        path("table/<int:number>/cards/", protect(table.card_lay), name="pit-table-card"),
        path("table/<int:number>/settle/", protect(table.settle), name="pit-table-settle"),
        path("table/<int:number>/pass/", protect(table.pass_cards), name="pit-table-pass"),
        path("table/<int:number>/cancel/", protect(table.cancel), name="pit-table-cancel"),
        # A Pharao table's acts (its page is the table page above, by the table's game).
        path("table/<int:number>/taille/", protect(pharao.taille_open), name="pit-pharao-taille"),
        path(
            "table/<int:number>/ranks/stakes/",
            protect(pharao.stake_place),
            name="pit-pharao-stake",
        ),
        path(
            "table/<int:number>/ranks/stakes/<int:stake_id>/approve/",
            protect(pharao.approve),
            name="pit-pharao-approve",
        ),
        path(
            "table/<int:number>/ranks/stakes/<int:stake_id>/<slug:name>/",
            protect(pharao.stake_act),
            name="pit-pharao-stake-act",
        ),
        path("table/<int:number>/draws/", protect(pharao.card_lay), name="pit-pharao-card"),
        # A cercle table's acts (Alliance): the seats, then each deal act by act.
        path("table/<int:number>/seats/", protect(alliance.seat_take), name="pit-cercle-seat"),
        path(
            "table/<int:number>/seats/leave/",
            protect(alliance.seat_leave),
            name="pit-cercle-leave",
        ),
        path("table/<int:number>/deal/", protect(alliance.deal_open), name="pit-cercle-deal"),
        path(
            "table/<int:number>/deal/cards/",
            protect(alliance.deal_cards),
            name="pit-cercle-cards",
        ),
        path("table/<int:number>/deal/calls/", protect(alliance.deal_call), name="pit-cercle-call"),
        path(
            "table/<int:number>/deal/contract/",
            protect(alliance.deal_declare),
            name="pit-cercle-contract",
        ),
        path("table/<int:number>/deal/plays/", protect(alliance.deal_play), name="pit-cercle-play"),
        # The séance: opened, staffed, filled and credited, counted and closed. Each form posts
        # to an act beside its page (``…/<act>/``), which answers with the page again.
        path("seance/open/", protect(seance.seance_open), name="pit-seance-open"),
        path(
            "seance/open/<slug:act_name>/",
            protect(seance.seance_open_act),
            name="pit-seance-open-act",
        ),
        path("seance/<int:shift_id>/", protect(seance.seance), name="pit-seance"),
        path(
            "seance/<int:shift_id>/<slug:act_name>/",
            protect(seance.seance_act),
            name="pit-seance-act",
        ),
        # The cage: fills and credits to sign, packs to receive.
        path("cage/", protect(cage.cage), name="pit-cage"),
        path("cage/<slug:act_name>/", protect(cage.cage_act), name="pit-cage-act"),
        # The card room: every pack, and each pack's custody act by act.
        path("cards/", protect(cardroom.card_room), name="pit-card-room"),
        path("cards/<int:pack_id>/", protect(cardroom.pack), name="pit-pack"),
        path(
            "cards/<int:pack_id>/<slug:act_name>/",
            protect(cardroom.pack_act),
            name="pit-pack-act",
        ),
        path("cards/<slug:act_name>/", protect(cardroom.card_room_act), name="pit-card-room-act"),
    ]
