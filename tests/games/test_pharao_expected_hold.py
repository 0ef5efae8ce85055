"""The bank's expected result of a taille given what stood at each draw (pharao_odds): each draw's
term is exactly the average, over every ordered pair of cards the pack could give next, of what
the engine settles with them; and over many shuffled packs the actual results stay around the sum."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest

from casino.games.cards import ONE_PACK, Card, Rank, card
from casino.games.pharao import DRAWS, Act, Action, Stake, play_taille
from casino.games.pharao_odds import expected_result
from casino.games.reglement import Reglement

RULES = Reglement()


def bank_result(lines) -> int:  # type: ignore[no-untyped-def]
    return sum(s.to_bank - s.paid for s in lines)


def brute_force(prefix: list[Card], bottom: Card, stakes, actions, number: int) -> Fraction:  # type: ignore[no-untyped-def]
    """The bank's mean result of draw ``number`` over every pair of cards it can be dealt."""
    left = [c for c in ONE_PACK if c not in prefix and c != bottom]
    pairs = [(x, y) for x in left for y in left if x != y] if len(left) > 1 else [(left[0],)]
    total = Fraction(0)
    for pair in pairs:
        rest = [c for c in left if c not in pair]
        played = play_taille([*prefix, *pair, *rest, bottom], stakes, actions, RULES)
        total += bank_result(played.draws[number - 1].settlements)
    return total / len(pairs)


@pytest.mark.parametrize(
    ("prefix", "bottom", "stakes", "actions", "number"),
    [
        # Draw 1, simple stakes on a rank with four cards left, and on the bottom card's rank.
        ([], "KS", [(1, Stake("a", Rank.THREE, 100)), (1, Stake("k", Rank.KING, 70))], [], 1),
        # Draw 3 after a win on 7 at draw 2 and its paroli; a plié possible on the 2s (four left).
        (
            ["4D", "6C", "3C", "7H"],
            "KS",
            [(2, Stake("a", Rank.SEVEN, 100)), (1, Stake("p", Rank.TWO, 101))],
            [(3, Action("a", Act.PAROLI))],
            3,
        ),
        # The last draw: one card left, and the bottom card the bank's or dead.
        (
            [str(c) for c in ONE_PACK if str(c) not in ("QC", "KC")],
            "KC",
            [(26, Stake("q", Rank.QUEEN, 100))],
            [],
            26,
        ),
    ],
)
def test_each_draws_expectation_is_the_average_over_the_cards_it_can_be_dealt(
    prefix, bottom, stakes, actions, number
):
    cards = [card(c) for c in prefix]
    last = card(bottom)
    # The stakes stand only until the draw: withdrawn (approved) right after it, if they stand.
    after = [(number + 1, Action(s.id, Act.WITHDRAW, None, "chef")) for _, s in stakes]
    actions = [*actions, *(after if number < DRAWS else [])]
    exact = brute_force(cards, last, stakes, actions, number)
    left = [c for c in ONE_PACK if c not in cards and c != last]
    played = play_taille([*cards, *left, last], stakes, actions, RULES)
    assert expected_result(played, RULES).by_draw[number - 1] == exact


def test_actual_results_stay_around_the_expected_within_its_variance():
    rng = random.Random(13)
    gap = variance = Fraction(0)
    for _ in range(400):
        pack = list(ONE_PACK)
        rng.shuffle(pack)
        stakes = [(1, Stake(f"s{r.value}", r, 100 + 10 * i)) for i, r in enumerate(Rank)]
        marks = [(2, Action(f"s{pack[1].rank.value}", Act.PAROLI))]  # the first winner rides
        played = play_taille(pack, stakes, marks, RULES)
        expected = expected_result(played, RULES)
        gap += bank_result(s for d in played.draws for s in d.settlements) - expected.mean
        variance += expected.variance
    assert abs(float(gap)) < 4 * math.sqrt(float(variance))
