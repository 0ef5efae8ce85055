"""A Pharao table for the tests: table 3 under the posted baden-1854, a séance with the cast on duty,
a single pack through its custody to the cut, and packs in a known order."""

from __future__ import annotations

import pytest

from casino.floor.models import PostedReglement, Shift, Table
from casino.floor.play.pharao.models import Taille
from casino.floor.play.pharao.tailles import (
    FalseParoli,
    pharao_approval_give,
    pharao_stake_mark,
    pharao_stake_place,
    pharao_stake_reduce,
    pharao_stake_withdraw,
    taille_lay_card,
    taille_open,
)
from casino.floor.services import LateStake, table_create
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


# Draw 1: 3C | 7H (the 7 wins); draw 2: 2D | 2S (a plié on the 2); draw 3: 5C | 4D (the 5 loses).
A_TAILLE = pack_order(["3C", "7H", "2D", "2S", "5C", "4D"], "KS")


def play_a_taille(cast, seance: Shift) -> Taille:  # type: ignore[no-untyped-def]
    """A whole taille at the séance's table, through the services, with a single pack brought to
    it: a paroli, a plié, an approved reduction and withdrawal, an approval left unused, a false
    paroli and a late stake refused (and recorded)."""
    single_pack_in_play(cast, seance)
    taille = taille_open(actor=cast.tailleur, shift_id=seance.pk, bottom_card=A_TAILLE[-1])
    laid = iter(A_TAILLE)

    def place(ref: str, rank: str, amount: int):  # type: ignore[no-untyped-def]
        return pharao_stake_place(
            actor=cast.croupier, taille_id=taille.pk, ref=ref, holder="1", rank=rank, amount=amount
        )

    def lay(count: int) -> None:
        for _ in range(count):
            taille_lay_card(actor=cast.tailleur, taille_id=taille.pk, code=next(laid))

    seven, five, two, nine = (
        place("a", "7", 1000),
        place("b", "5", 600),
        place("p", "2", 800),
        place("w", "9", 400),
    )
    lay(2)
    pharao_stake_mark(actor=cast.croupier, stake_id=seven.pk, move="paroli")
    with pytest.raises(FalseParoli):
        pharao_stake_mark(actor=cast.croupier, stake_id=five.pk, move="paroli")
    pharao_approval_give(actor=cast.chef, stake_id=five.pk, act="reduce", amount=200)
    pharao_stake_reduce(actor=cast.croupier, stake_id=five.pk, amount=200)
    pharao_approval_give(actor=cast.chef, stake_id=nine.pk, act="withdraw")
    pharao_stake_withdraw(actor=cast.croupier, stake_id=nine.pk)
    pharao_approval_give(actor=cast.chef, stake_id=two.pk, act="withdraw")  # never used
    lay(3)  # draw 2, then the left card of draw 3
    with pytest.raises(LateStake):
        place("late", "8", 500)
    lay(52 - 5)
    taille.refresh_from_db()
    assert taille.phase == "ended"
    return taille
