"""The pit's URLs, mounted by the admin site under /admin/pit/ (casino/people/adminsite.py), each
view behind the admin's login and second factor. Reverse them as ``admin:pit-…``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.urls import URLPattern, path

from casino.pit import cardroom, home, seance, table


def urls(protect: Callable[[Any], Any]) -> list[URLPattern]:
    return [
        path("", protect(home.home), name="pit-home"),
        # The table page: the tailleur and croupiers on duty play the coups there.
        path("table/<int:number>/", protect(table.table), name="pit-table"),
        # The séance: opened, staffed, filled and credited, counted and closed.
        path("seance/open/", protect(seance.seance_open), name="pit-seance-open"),
        path("seance/<int:shift_id>/", protect(seance.seance), name="pit-seance"),
        # The cage: fills and credits to sign, packs to receive.
        path("cage/", protect(cardroom.cage), name="pit-cage"),
        # The card room: every pack, and each pack's custody act by act.
        path("cards/", protect(cardroom.card_room), name="pit-card-room"),
        path("cards/<int:pack_id>/", protect(cardroom.pack), name="pit-pack"),
    ]
