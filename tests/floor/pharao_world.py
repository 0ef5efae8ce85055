"""A Pharao table for the tests: table 3 under the posted baden-1854, a séance with the cast on duty,
a single pack through its custody to the cut, and packs in a known order."""

from __future__ import annotations

from casino.floor.models import PostedReglement, Table
from casino.floor.services import table_create
from casino.games.cards import ONE_PACK
from shoes.models import Pack, PackKind
from shoes.services import (
    pack_cut,
    pack_open,
    pack_receive,
    pack_shuffle,
    pack_store,
    seal_verify,
)

NUMBER = 3
MIN_STAKE, MAX_STAKE = 100, 50_000


def pharao_table(cast) -> Table:  # type: ignore[no-untyped-def]
    return table_create(
        actor=cast.directeur,
        number=NUMBER,
        game="pharao",
        reglement_id=PostedReglement.objects.get(name="baden-1854").pk,
        min_stake=MIN_STAKE,
        max_stake=MAX_STAKE,
    )


def single_pack_in_play(cast, shift, seal: str = "RF-PH-1") -> Pack:  # type: ignore[no-untyped-def]
    """A sealed single pack received, verified by the commissioner, opened at the séance's table,
    shuffled by a croupier then the tailleur, and cut by a player."""
    pack = pack_receive(
        actor=cast.caissier,
        kind=PackKind.SINGLE,
        maker="Grimaud",
        maker_pack_numbers="G-52",
        seal_number=seal,
        sealing_authority="Préfecture de police",
        store_location="coffre A",
    )
    pack_store(actor=cast.caissier, pack_id=pack.pk)
    seal_verify(actor=cast.commissaire, pack_id=pack.pk, seal_number_read=seal, verdict="intact")
    pack_open(actor=cast.chef, pack_id=pack.pk, shift_id=shift.pk)
    cut_again(cast, pack)
    pack.refresh_from_db()
    return pack


def cut_again(cast, pack: Pack) -> None:  # type: ignore[no-untyped-def]
    pack_shuffle(actor=cast.croupier, pack_id=pack.pk)
    pack_shuffle(actor=cast.tailleur, pack_id=pack.pk)
    pack_cut(actor=cast.tailleur, pack_id=pack.pk, cut_by="M. Dupont")


def pack_order(first: list[str], bottom: str) -> list[str]:
    """The 52 cards in the order they come: ``first``, then the rest of the pack in its plain
    order, then the bottom card (shown first, laid last)."""
    rest = [str(c) for c in ONE_PACK if str(c) not in first and str(c) != bottom]
    order = [*first, *rest, bottom]
    assert len(order) == len(set(order)) == 52
    return order
