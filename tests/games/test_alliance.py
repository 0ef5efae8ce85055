"""The Alliance engine call by call and card by card (RULES.md §3): what the floor asks of it."""

from __future__ import annotations

import doctest
import json

import pytest

import casino.games.alliance
from casino.games.alliance import (
    AllianceContract,
    AllianceDeal,
    Call,
    Game,
    LeverContract,
    Phase,
    SoloContract,
    called_rank,
    deal,
    dealing_plan,
    suit_order,
    trick_winner,
)
from casino.games.cards import ONE_PACK, Suit, card
from casino.games.errors import (
    BadCall,
    BadContract,
    ForeignCard,
    IllegalDeal,
    MustFollowSuit,
    NotInHand,
)
from casino.games.reglement import Reglement
from tests.conftest import ROOT

PLAYERS = ("ana", "ben", "carl", "dora")
LEVER = json.loads(
    (ROOT / "tests/data/replay/alliance/lever_held_by_the_vorhand_with_take.json").read_text()
)


def cards(*codes: str) -> list:
    return [card(c) for c in codes]


def dealt(players=PLAYERS, pack=ONE_PACK) -> AllianceDeal:
    table = AllianceDeal(players)
    for c in pack:
        table.receive(c)
    return table


def test_examples_in_the_module_hold():
    assert doctest.testmod(casino.games.alliance).failed == 0


@pytest.mark.parametrize(("players", "each", "table"), [(4, 12, 4), (5, 10, 2), (6, 8, 4)])
def test_the_deal_by_player_count(players, each, table):
    plan = dealing_plan(players)
    assert [plan.count(seat) for seat in range(players)] == [each] * players
    assert plan.count(-1) == table
    hands, t = deal(ONE_PACK, players)
    assert [len(h) for h in hands] == [each] * players
    assert len(t.cards) == table


def test_four_players_get_packets_of_three_and_a_table_card_after_each_round():
    hands, table = deal(ONE_PACK, 4)
    assert [str(c) for c in hands[0][:3]] == ["AS", "2S", "3S"]
    assert [str(c) for c in hands[1][:3]] == ["4S", "5S", "6S"]
    assert str(table.up) == "KS"  # the 13th card, after the first round: face up, the couleur
    assert [str(c) for c in table.down] == ["KH", "KD", "KC"]


def test_five_players_get_two_packets_of_five():
    hands, table = deal(ONE_PACK, 5)
    assert [str(c) for c in hands[0]] == [
        "AS",
        "2S",
        "3S",
        "4S",
        "5S",
        "AD",
        "2D",
        "3D",
        "4D",
        "5D",
    ]
    assert (str(table.up), [str(c) for c in table.down]) == ("KH", ["KC"])


def test_whose_card_goes_where_and_a_repeated_card_is_refused():
    table = AllianceDeal(PLAYERS)
    assert table.next_receiver == "ana"
    for c in ONE_PACK[:12]:
        table.receive(c)
    assert table.next_receiver == "table"
    with pytest.raises(ForeignCard) as error:
        table.receive(ONE_PACK[0])
    assert error.value.where == "cards[12]"
    assert table.receive(ONE_PACK[12]) == "table"
    assert table.couleur is Suit.SPADES
    assert table.phase is Phase.DEALING


def test_card_order_in_and_outside_trumps():
    assert [str(c) for c in suit_order(Suit.HEARTS, Suit.HEARTS)][:5] == [
        "AH",
        "KH",
        "QH",
        "JH",
        "TH",
    ]
    assert [str(c) for c in suit_order(Suit.HEARTS, Suit.SPADES)][:5] == [
        "KH",
        "QH",
        "JH",
        "AH",
        "TH",
    ]
    assert [str(c) for c in suit_order(Suit.CLUBS, Suit.SPADES)][-2:] == ["2C", "AC"]
    assert (
        trick_winner(cards("TD", "AD", "JD", "2S"), Suit.HEARTS) == 2
    )  # JD over AD outside trumps
    assert trick_winner(cards("TD", "AD", "JD", "2S"), Suit.SPADES) == 3  # the only trump
    assert trick_winner(cards("TC", "AC", "2C", "KH"), Suit.DIAMONDS) == 0  # AC lowest in black


def test_the_called_rank_goes_down_from_the_king():
    assert called_rank(cards("KS", "KH", "KD", "QC")).value == "K"
    assert called_rank(cards("KS", "KH", "KD", "KC", "QS", "QH", "QD", "QC")).value == "J"


# --- the auction --------------------------------------------------------------------------------


def test_the_auction_call_by_call_with_a_hold():
    table = dealt()
    assert table.next_caller == "ana"
    assert table.legal_calls() == (Call.PASS, Call.ALLIANCE, Call.LEVER, Call.SOLO)
    table.call(Call.ALLIANCE)
    assert table.legal_calls() == (Call.PASS, Call.LEVER, Call.SOLO)
    table.call(Call.LEVER)
    table.call(Call.PASS)
    table.call(Call.PASS)
    assert table.next_caller == "ana"
    assert Call.HOLD in table.legal_calls()
    table.call(Call.HOLD)
    table.call(Call.PASS)
    assert Call.HOLD not in table.legal_calls()  # only the Vorhand holds
    table.call(Call.PASS)
    done = table.call(Call.PASS)
    assert (done.ended, done.declarer, done.game, done.forced) == (True, "ana", Game.LEVER, False)
    assert table.next_caller is None
    assert table.phase is Phase.CONTRACT


def test_a_player_who_passed_may_bid_again_but_only_higher():
    table = dealt()
    for c in (Call.PASS, Call.ALLIANCE, Call.PASS, Call.PASS):
        table.call(c)
    assert table.legal_calls() == (Call.PASS, Call.LEVER, Call.SOLO)  # ana passed: no hold
    with pytest.raises(BadCall) as error:
        table.call(Call.HOLD)
    assert error.value.where == "auction[4]"
    table.call(Call.SOLO)
    for _ in range(3):
        table.call(Call.PASS)
    assert (table.declarer, table.game) == ("ana", Game.SOLO)


def test_all_passing_in_the_first_round_is_a_forced_lever():
    table = dealt()
    for _ in range(4):
        table.call(Call.PASS)
    assert (table.declarer, table.game, table.forced) == ("ana", Game.LEVER, True)
    with pytest.raises(BadCall, match="after its end"):
        table.call(Call.PASS)


def test_a_refused_call_changes_nothing():
    table = dealt()
    table.call(Call.LEVER)
    before = table.to_json()
    with pytest.raises(BadCall):
        table.call(Call.ALLIANCE)
    assert table.to_json() == before


# --- contracts and play -------------------------------------------------------------------------


def lever_deal() -> AllianceDeal:
    data = LEVER["input"]
    table = AllianceDeal(data["players"])
    for c in data["cards"]:
        table.receive(card(c))
    for c in data["auction"]:
        table.call(Call(c))
    return table


def test_a_contract_of_another_game_is_refused():
    table = lever_deal()
    with pytest.raises(BadContract):
        table.declare(AllianceContract(Suit.HEARTS, card("KS")))
    with pytest.raises(BadContract):
        table.declare(SoloContract(Suit.HEARTS))
    assert table.phase is Phase.CONTRACT


def test_the_lever_take_and_the_ally():
    table = lever_deal()
    contract = LeverContract(2, card("KS"), True, tuple(cards("2C", "4S", "7H", "3D")))
    table.declare(contract)
    assert table.trumps is Suit.HEARTS
    assert table.players[table.ally or 0] == "carl"
    assert card("5S") in table.hands[0]
    assert card("4S") not in table.hands[0]
    assert table.discards == tuple(cards("2C", "4S", "7H", "3D"))


def test_card_by_card_whose_card_what_may_be_played_what_it_settles():
    data = LEVER["input"]
    table = lever_deal()
    table.declare(LeverContract(2, card("KS"), True, tuple(cards("2C", "4S", "7H", "3D"))))
    assert table.next_player == "ana"
    assert len(table.legal_cards()) == 12
    first = table.play(card("5S"))
    assert (first.player, first.trick, first.next_player) == ("ana", None, "ben")
    assert set(table.legal_cards()) == set(cards("3S", "6S", "JS"))  # ben follows spades
    with pytest.raises(MustFollowSuit) as error:
        table.play(card("2H"))
    assert error.value.where == "tricks[0][1]"
    with pytest.raises(NotInHand):
        table.play(card("KS"))  # carl's
    table.play(card("3S"))
    table.play(card("KS"))
    last = table.play(card("2S"))
    assert last.trick is not None
    assert (last.trick.number, last.trick.leader, last.trick.winner) == (1, "ana", "carl")
    assert last.next_player == "carl"
    played = [card(c) for t in data["tricks"][1:] for c in t]
    for c in played[:-1]:
        assert table.play(c).outcome is None
    end = table.play(played[-1])
    assert end.next_player is None
    assert end.outcome is not None
    assert end.outcome.marks == {"ana": 18, "ben": -18, "carl": 18, "dora": -18}
    assert table.phase is Phase.OVER
    with pytest.raises(IllegalDeal):
        table.play(card("AS"))


def test_a_deal_saved_and_restored_plays_on_the_same():
    data = LEVER["input"]
    table = lever_deal()
    table.declare(LeverContract(2, card("KS"), True, tuple(cards("2C", "4S", "7H", "3D"))))
    played = [card(c) for t in data["tricks"] for c in t]
    for c in played[:17]:
        table.play(c)
    again = AllianceDeal.from_json(table.to_json(), Reglement())
    assert again.to_json() == table.to_json()
    for c in played[17:]:
        assert again.play(c) == table.play(c)
