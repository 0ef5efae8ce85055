"""The Pharao engine card by card and act by act (RULES.md §2): what a table terminal asks of it."""

from __future__ import annotations

import doctest
from fractions import Fraction

import pytest

import casino.games.pharao
from casino.games.cards import ONE_PACK, Rank, card
from casino.games.errors import (
    BadMark,
    DrawInProgress,
    FalseParoli,
    ForeignCard,
    IllegalDeal,
    NotApproved,
    OverLimit,
    RankExhausted,
    StakeIdTaken,
    StakeRefused,
    UnderLimit,
    UnknownStake,
)
from casino.games.pharao import (
    Act,
    Action,
    Outcome,
    Side,
    Stake,
    TailleDeal,
    marks_of,
    play_taille,
    plie_share,
)
from casino.games.reglement import DEFAULT_PHARAO_MARKS, Reglement, reglement

# A pack in which every draw's two cards are known: AS..KS, AH..KH, ... (pack order); the bottom
# card is KC. Draw 1 is AS (bank) 2S (players), draw 7 is KS AH, draw 26 QC KC.
PACK = list(ONE_PACK)


def deal_to(deal: TailleDeal, draws: int) -> None:
    for c in PACK[2 * deal.completed : 2 * draws]:
        deal.lay(c)


def test_examples_in_the_module_hold():
    assert doctest.testmod(casino.games.pharao).failed == 0


def test_the_cards_alternate_bank_then_players_for_26_draws():
    deal = TailleDeal(PACK[-1])
    sides = []
    for c in PACK:
        assert deal.next_side is not None
        laid = deal.lay(c)
        sides.append(laid.side)
        assert (laid.settled is None) == (laid.side is Side.BANK)
    assert sides == [Side.BANK, Side.PLAYERS] * 26
    assert deal.complete
    assert deal.next_side is None
    assert deal.number is None


def test_a_card_after_the_taille_is_refused():
    deal = TailleDeal(PACK[-1])
    deal_to(deal, 26)
    with pytest.raises(IllegalDeal, match="the 26 draws are made"):
        deal.lay(card("AS"))


def test_the_bottom_card_comes_out_last_and_only_there():
    deal = TailleDeal(card("KC"))
    with pytest.raises(ForeignCard, match="the bottom card, KC") as error:
        deal.lay(card("KC"))
    assert error.value.where == "cards[0]"
    deal_to(deal, 25)
    deal.lay(card("QC"))
    with pytest.raises(ForeignCard, match="JC has already come out"):
        deal.lay(card("JC"))  # every card but the bottom one is out by now
    assert deal.lay(card("KC")).end == ()


def test_a_card_already_laid_is_foreign():
    deal = TailleDeal(card("KC"))
    deal.lay(card("AS"))
    with pytest.raises(ForeignCard, match="AS has already come out") as error:
        deal.lay(card("AS"))
    assert error.value.where == "cards[1]"


def test_the_draw_settles_bank_players_and_plie():
    deal = TailleDeal(PACK[-1])
    deal.place(Stake("ace", Rank.ACE, 100))
    deal.place(Stake("two", Rank.TWO, 100))
    deal.place(Stake("three", Rank.THREE, 100))
    deal.lay(card("AS"))
    draw = deal.lay(card("2S")).settled
    assert draw is not None
    assert [(s.stake, s.outcome, s.paid, s.to_bank) for s in draw.settlements] == [
        ("ace", Outcome.LOST, 0, 100),
        ("two", Outcome.WON, 100, 0),
    ]
    assert set(deal.standing) == {"two", "three"}
    deal.lay(card("3S"))
    draw = deal.lay(card("3H")).settled
    assert draw is not None
    assert draw.plie
    assert draw.settlements[0].to_bank == 50
    assert deal.standing["three"].base == 50


def test_a_stake_placed_on_a_draw_can_lose_to_its_left_card():
    deal = TailleDeal(PACK[-1])
    deal.place(Stake("a", Rank.ACE, 10))
    assert deal.lay(card("AS")).settled is None  # the left card settles with the draw
    assert deal.lay(card("2S")).settled.settlements[0].outcome is Outcome.LOST  # type: ignore[union-attr]


def test_no_stake_changes_while_a_draw_is_being_dealt():
    deal = TailleDeal(PACK[-1])
    deal.place(Stake("a", Rank.FIVE, 10))
    deal.lay(card("AS"))
    with pytest.raises(DrawInProgress, match="draw 1 has begun") as error:
        deal.place(Stake("b", Rank.SIX, 10))
    assert error.value.code == "late_stake"
    with pytest.raises(DrawInProgress):
        deal.act(Action("a", Act.WITHDRAW, approved_by="chef"))


def test_acts_after_the_last_draw_are_refused():
    deal = TailleDeal(PACK[-1])
    deal_to(deal, 26)
    with pytest.raises(IllegalDeal, match="the taille is over"):
        deal.place(Stake("a", Rank.FIVE, 10))


def test_standing_stakes_are_returned_with_the_last_card():
    # The king wins, is plié with the two next kings, and stands on the bottom card's rank.
    first = [card(c) for c in ("2S", "KS", "KH", "KD")]
    cards = first + [c for c in PACK if c not in first and c != card("KC")] + [card("KC")]
    deal = TailleDeal(cards[-1])
    deal.place(Stake("k", Rank.KING, 10))
    laid = [deal.lay(c) for c in cards]
    assert laid[1].settled.settlements[0].outcome is Outcome.WON  # type: ignore[union-attr]
    assert laid[3].settled.settlements[0].to_bank == 5  # type: ignore[union-attr]
    last = laid[-1]
    assert last.settled.settlements[0].outcome is Outcome.DEAD  # type: ignore[union-attr]
    assert last.end is not None
    assert [(s.stake, s.outcome, s.returned) for s in last.end] == [("k", Outcome.RETURNED, 5)]
    assert laid[-2].end is None
    assert not deal.standing


def test_refusals_name_their_rule_in_order():
    rules = Reglement(min_stake=10, max_stake=100)
    deal = TailleDeal(PACK[-1], rules)
    with pytest.raises(OverLimit, match="above the table maximum 100"):
        deal.place(Stake("big", Rank.TWO, 101))
    with pytest.raises(UnderLimit, match="below the table minimum 10"):
        deal.place(Stake("small", Rank.TWO, 9))
    with pytest.raises(StakeRefused):
        deal.place(Stake("zero", Rank.TWO, 0))
    deal.place(Stake("a", Rank.TWO, 100))
    with pytest.raises(StakeIdTaken):
        deal.place(Stake("a", Rank.THREE, 10))
    with pytest.raises(UnknownStake, match="'big'"):
        deal.act(Action("big", Act.PAROLI))
    with pytest.raises(FalseParoli, match="did not win draw 0"):
        deal.act(Action("a", Act.PAROLI))
    with pytest.raises(NotApproved, match="withdrawing stake a needs the banker's approval"):
        deal.act(Action("a", Act.WITHDRAW))
    with pytest.raises(NotApproved, match="reducing stake a needs the banker's approval"):
        deal.act(Action("a", Act.REDUCE, amount=5))
    with pytest.raises(NotApproved, match="did not win draw 0"):
        deal.act(Action("a", Act.COLLECT))
    with pytest.raises(BadMark, match="would leave 0"):
        deal.act(Action("a", Act.REDUCE, amount=100, approved_by="chef"))
    with pytest.raises(OverLimit):
        deal.act(Action("a", Act.RAISE, amount=1))
    deal_to(deal, 1)  # AS 2S: a wins
    assert deal.act(Action("a", Act.PAROLI)).put == 100
    with pytest.raises(FalseParoli, match="one mark per win"):
        deal.act(Action("a", Act.APPE))
    with pytest.raises(BadMark, match="marked paroli"):
        deal.act(Action("a", Act.RAISE, amount=1))


def test_a_raise_on_an_exhausted_rank_is_refused_but_the_stake_stays():
    first = [card(c) for c in ("2S", "KS", "KH", "KD")]  # the king wins, then a plié of kings
    deal = TailleDeal(card("KC"))
    deal.place(Stake("k", Rank.KING, 10))
    for c in first:
        deal.lay(c)
    assert deal.exhausted(Rank.KING)
    assert deal.rank_left(Rank.KING) == 0
    with pytest.raises(RankExhausted, match="rank K is exhausted"):
        deal.place(Stake("k2", Rank.KING, 10))
    with pytest.raises(RankExhausted):
        deal.act(Action("k", Act.RAISE, amount=5))
    withdrawn = deal.act(Action("k", Act.WITHDRAW, approved_by="chef")).settlement
    assert withdrawn is not None
    assert (withdrawn.outcome, withdrawn.returned) == (Outcome.WITHDRAWN, 5)


def test_a_mark_applies_the_table_to_the_stake_as_it_stands_after_a_raise():
    deal = TailleDeal(PACK[-1])
    deal.place(Stake("a", Rank.TWO, 100))
    deal_to(deal, 1)  # wins 100
    assert deal.act(Action("a", Act.RAISE, amount=50)).put == 50
    marked = deal.act(Action("a", Act.APPE))
    assert marked.stake is not None
    assert (marked.stake.base, marked.stake.riding, marked.stake.protected) == (150, 150, 150)
    assert marked.put == 150  # the winnings put back: what stands goes from 150 to 300


def test_a_custom_marks_table_is_data():
    rules = reglement(
        {
            "overrides": {
                "pharao_marks": [
                    {
                        "mark": "double",
                        "from": "simple",
                        "move": "paroli",
                        "riding": 2,
                        "protected": 0,
                    }
                ]
            }
        }
    )
    deal = TailleDeal(PACK[-1], rules)
    deal.place(Stake("a", Rank.TWO, 10))
    deal_to(deal, 1)
    with pytest.raises(BadMark, match="leads nowhere by appe from simple"):
        deal.act(Action("a", Act.APPE))
    assert deal.act(Action("a", Act.PAROLI)).stake.mark == "double"  # type: ignore[union-attr]


def test_the_default_marks_table_is_rules_md():
    marks = marks_of(Reglement())
    assert {m.name: (m.riding, m.protected, m.gain) for m in marks.values()} == {
        "simple": (1, 0, 1),
        "appe": (1, 1, 2),
        "paroli": (2, 0, 3),
        "6": (3, 1, 6),
        "7": (4, 0, 7),
        "12": (6, 1, 12),
        "14": (7, 1, 14),
        "15": (8, 0, 15),
        "24": (12, 1, 24),
        "28": (14, 1, 28),
        "30": (15, 1, 30),
    }
    assert len(marks) == len(DEFAULT_PHARAO_MARKS)


def test_plie_share_rounds_down():
    assert plie_share(1, Fraction(1, 2)) == 0
    assert plie_share(7, Fraction(2, 3)) == 4
    assert plie_share(7, Fraction(1)) == 7
    assert plie_share(7, Fraction(0)) == 0


def test_a_plie_taking_everything_ends_the_stake():
    deal = TailleDeal(card("KC"), Reglement(pharao_plie_share=Fraction(1)))
    deal.place(Stake("a", Rank.ACE, 10))
    deal.lay(card("AS"))
    draw = deal.lay(card("AH")).settled
    assert draw is not None
    assert [(s.outcome, s.to_bank) for s in draw.settlements] == [(Outcome.PLIE, 10)]
    assert not deal.standing


def test_the_state_round_trips_through_its_text_form_and_plays_on_the_same():
    deal = TailleDeal(PACK[-1])
    deal.place(Stake("a", Rank.TWO, 100))
    deal.place(Stake("b", Rank.FOUR, 30))
    deal_to(deal, 1)
    deal.act(Action("a", Act.PAROLI))
    deal.act(Action("b", Act.REDUCE, amount=10, approved_by="chef"))
    text = deal.to_json()
    again = TailleDeal.from_json(text, Reglement())
    assert again.to_json() == text
    rest = PACK[2:]
    assert [deal.lay(c) for c in rest] == [again.lay(c) for c in rest]


def test_play_taille_refuses_a_pack_that_is_not_52_distinct_cards():
    with pytest.raises(ForeignCard, match="52 cards, not 51"):
        play_taille(PACK[:51], [], [], Reglement())
    with pytest.raises(ForeignCard) as error:
        play_taille([*PACK[:51], PACK[0]], [], [], Reglement())
    assert error.value.where == "cards[51]"


def test_an_action_needs_its_amount_exactly_with_reduce_and_raise():
    with pytest.raises(ValueError, match="amount"):
        Action("a", Act.RAISE)
    with pytest.raises(ValueError, match="amount"):
        Action("a", Act.PAROLI, amount=5)
