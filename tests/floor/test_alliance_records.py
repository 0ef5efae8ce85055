"""``deals.deal_records``, the fixed statement every Alliance act reads the deal through, gives
what the ORM reads: the cards of the deal's cut in the order dealt, the calls, the contract and
the cards played, at every phase of a deal, and only the deal's own when the pack dealt before."""

from __future__ import annotations

from typing import Any

import pytest

from casino.floor.play.alliance import deals
from casino.floor.play.alliance.models import Deal, DealCall, DealContract, DealPlay
from shoes.services import cards_laid_in
from tests.floor.alliance_world import (
    cercle_ready,
    deal_in,
    play_act_by_act,
    sheet,
    simulated,
)

pytestmark = pytest.mark.django_db


def read_by_the_orm(deal: Deal) -> tuple[list[str], list[str], Any, list[str]]:
    """The four queries the acts sent before the fixed statement."""
    return (
        cards_laid_in(deal.pack_id, deal.pack_taille),
        list(DealCall.objects.filter(deal=deal).order_by("index").values_list("call", flat=True)),
        DealContract.objects.filter(deal=deal).values_list("contract", flat=True).first(),
        list(DealPlay.objects.filter(deal=deal).order_by("index").values_list("card", flat=True)),
    )


@pytest.mark.parametrize("phase", ["dealing", "auction", "contract", "play"])
def test_the_records_of_a_deal_at_each_phase_are_the_orms(cast, phase):
    deal, doc = deal_in(cast, cercle_ready(cast), 3, phase)
    records = deals.deal_records(deal)
    assert records == read_by_the_orm(deal)
    cards, calls, contract, plays = records
    assert cards == ([] if phase == "dealing" else doc["cards"])
    assert calls == (doc["auction"] if phase in ("contract", "play") else [])
    assert contract == (doc["contract"] if phase == "play" else None)
    assert plays == []


def test_the_records_of_deals_played_from_one_pack_are_each_deals_own(cast):
    """A whole deal (a lever that takes the talon: its discard is in the contract), then the next
    from the same pack cut again, left in the middle of its play."""
    shift = cercle_ready(cast)
    whole = play_act_by_act(cast, shift, simulated(15))
    begun = play_act_by_act(cast, shift, simulated(2), cards=21)
    for deal, seed, played in ((whole, 15, 48), (begun, 2, 21)):
        doc = sheet(simulated(seed))
        records = deals.deal_records(deal)
        assert records == read_by_the_orm(deal)
        assert records == (
            doc["cards"],
            doc["auction"],
            doc["contract"],
            [c for trick in doc["tricks"] for c in trick][:played],
        )
    assert "discard" in deals.deal_records(whole)[2]
