from __future__ import annotations

import copy
import doctest
import pickle
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import casino.games.cards
from casino.games.cards import ONE_PACK, SINGLE_PACK, SIXAIN, Card, Colour, card, cards_of_codes
from casino.games.errors import ForeignCard, IllegalCard
from casino.games.reglement import Reglement, reglement
from casino.games.trente_et_quarante import points


def test_examples_in_the_module_hold():
    assert doctest.testmod(casino.games.cards).failed == 0


@pytest.mark.parametrize(
    ("code", "text"), [("10S", "TS"), ("th", "TH"), (" KD ", "KD"), ("AC", "AC"), ("9h", "9H")]
)
def test_card_codes(code, text):
    assert str(card(code)) == text


@pytest.mark.parametrize("code", ["", "K", "1S", "11S", "KX", "ZH", "KSS", "10", "S10"])
def test_bad_codes_are_refused_by_name(code):
    with pytest.raises(IllegalCard, match="is not a card"):
        card(code)


@pytest.mark.parametrize(
    "codes",
    [[], ["KS", "TH", "AC"], ["10S", "ks"], ["KS", "ZH"], ["KS", 5], ["KS", None], ["KS", ["TH"]]],
)
def test_codes_looked_up_at_once_are_the_cards_read_one_by_one_or_none(codes):
    at_once = cards_of_codes(codes)
    try:
        one_by_one = [card(code) for code in codes]
    except IllegalCard:
        assert at_once is None
    else:
        # Codes written otherwise than the records write them are left to ``card``.
        assert at_once == (
            one_by_one
            if all(str(c) == code for c, code in zip(one_by_one, codes, strict=True))
            else None
        )


def test_hearts_and_diamonds_are_red():
    assert [card(c).colour for c in ("AH", "AD", "AS", "AC")] == [
        Colour.RED,
        Colour.RED,
        Colour.BLACK,
        Colour.BLACK,
    ]


def test_a_sixain_holds_each_card_six_times_and_2040_points():
    assert len(SIXAIN) == 312
    assert set(SIXAIN.counts.values()) == {6}
    assert len(SIXAIN.counts) == 52
    rules = Reglement()
    assert sum(points(c, rules) for c in SINGLE_PACK.cards) == 340
    assert sum(points(c, rules) for c in SIXAIN.cards) == 2040


def test_figures_count_the_reglements_face_value():
    rules = reglement(
        {"preset": "baden-1854", "overrides": {"face_value": {"J": 2, "Q": 3, "K": 4}}}
    )
    assert [points(card(c), rules) for c in ("JS", "QS", "KS", "TS", "AS")] == [2, 3, 4, 10, 1]


def test_a_seventh_card_is_foreign_to_a_sixain_and_a_second_to_a_single_pack():
    SIXAIN.check_contains([card("AS")] * 6)
    with pytest.raises(ForeignCard) as error:
        SIXAIN.check_contains([card("KH")] + [card("AS")] * 7)
    assert error.value.where == "cards[7]"
    with pytest.raises(ForeignCard, match="AS appears 2 times"):
        SINGLE_PACK.check_contains([card("AS"), card("KH"), card("AS")])


@settings(max_examples=60, deadline=None)
@given(
    laid=st.lists(st.sampled_from([c.code for c in SINGLE_PACK.cards] + ["ZZ"]), max_size=340),
    composition=st.sampled_from([SIXAIN, SINGLE_PACK]),
)
def test_the_codes_left_are_the_cards_remaining_in_pack_order(laid, composition):
    # A card laid more often than the pack holds it (and a foreign code) leaves none of it.
    left = composition.remaining(card(code) for code in laid if code != "ZZ")
    expected = [str(c) for c in dict.fromkeys(composition.cards) for _ in range(max(left[c], 0))]
    assert composition.codes_left(Counter(laid)) == expected


def test_there_is_one_card_of_each_rank_and_suit():
    """A card equals only itself and hashes by identity (``Card``): so every way of getting a
    card, copying or unpickling one, must give the one card."""
    assert len(set(ONE_PACK)) == 52
    for c in ONE_PACK:
        assert Card(c.rank, c.suit) is c
        assert card(c.code) is c
        assert card(c.code.lower()) is c  # read by parts, not looked up
        assert copy.copy(c) is c
        assert copy.deepcopy([c])[0] is c
        assert pickle.loads(pickle.dumps(c)) is c
    assert card("AS") != card("AH")
    with pytest.raises(TypeError, match="a card is a Rank and a Suit"):
        Card("A", "S")  # type: ignore[arg-type]
