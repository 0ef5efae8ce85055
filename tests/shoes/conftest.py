from __future__ import annotations

import pytest

from shoes.models import PackKind
from shoes.services import pack_receive, pack_store, seal_verify

SEAL = iter(range(10_000, 99_999))


@pytest.fixture
def receive(cast):
    """``receive()`` enters a new sealed sixain (or single pack) and stores it."""

    def make(kind: str = PackKind.SIXAIN, store: bool = True):
        pack = pack_receive(
            actor=cast.caissier,
            kind=kind,
            maker="Grimaud",
            maker_pack_numbers="G-1854-1..6",
            seal_number=f"RF-{next(SEAL)}",
            sealing_authority="Préfecture de police",
            store_location="coffre A",
        )
        if store:
            pack = pack_store(actor=cast.caissier, pack_id=pack.pk)
        return pack

    return make


@pytest.fixture
def verified(cast, receive):
    def make(kind: str = PackKind.SIXAIN):
        pack = receive(kind)
        seal_verify(
            actor=cast.commissaire,
            pack_id=pack.pk,
            seal_number_read=pack.seal_number,
            verdict="intact",
        )
        pack.refresh_from_db()
        return pack

    return make
