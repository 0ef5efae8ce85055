"""Exact odds of Pharao: against enumeration, against the engine itself, against the classic tables."""

from __future__ import annotations

import doctest
import json
import re
from fractions import Fraction
from itertools import combinations

import pytest

import casino.games.pharao_odds
from casino.games.cards import ONE_PACK, Rank
from casino.games.errors import GameError
from casino.games.pharao import Act, Action, Outcome, Stake, TailleDeal
from casino.games.pharao_odds import (
    classic_advantage,
    next_draw,
    pharao_odds_document,
    until_resolved,
)
from casino.games.reglement import Reglement
from tests.conftest import ROOT
from tests.games.test_replay import run

DEAD = Reglement()
BANK = Reglement(pharao_last_card="bank")


def test_examples_in_the_module_hold():
    assert doctest.testmod(casino.games.pharao_odds).failed == 0


@pytest.mark.parametrize("rules", [DEAD, BANK], ids=["dead", "bank"])
def test_a_draw_is_one_of_four_things(rules):
    for n in range(1, 52, 2):
        for k in range(min(4, n) + 1):
            odds = next_draw(n, k, rules)
            assert odds.bank + odds.players + odds.plie + odds.none == 1
            assert odds.bank == odds.players or n == 1  # the two sides are exchangeable


def enumerate_until_resolved(
    n: int, k: int, share: Fraction, bank_last: bool, bottom: bool
) -> Fraction:
    """Every placement of the rank's k cards among the n undealt, played out by hand."""
    total = Fraction(0)
    count = 0
    for positions in combinations(range(n), k):
        at = set(positions)
        stands, gain = Fraction(1), Fraction(0)
        for first in range(0, n - 1, 2):
            left, right = first in at, first + 1 in at
            if left and right:
                gain += stands * share
                stands -= stands * share
            elif left:
                gain += stands
                stands = Fraction(0)
                break
            elif right:
                gain -= stands
                stands = Fraction(0)
                break
        if stands and ((n - 1) in at or (bank_last and bottom)):
            gain += stands  # the last single card is the bank's, the bottom card maybe too
        total += gain
        count += 1
    return total / count


@pytest.mark.parametrize("share", [Fraction(1, 2), Fraction(1, 3), Fraction(0), Fraction(1)])
@pytest.mark.parametrize("last", ["dead", "bank"])
def test_until_resolved_equals_enumeration(share, last):
    rules = Reglement(pharao_plie_share=share, pharao_last_card=last)
    for n in (1, 3, 5, 7, 9, 11):
        for bottom in (False, True):
            for k in range(min(3 if bottom else 4, n) + 1):
                expected = enumerate_until_resolved(n, k, share, last == "bank", bottom)
                assert until_resolved(n, k, rules, bottom_of_rank=bottom) == expected, (n, k)


@pytest.mark.parametrize("rules", [DEAD, BANK], ids=["dead", "bank"])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_until_resolved_is_what_the_engine_takes_on_average(rules, k):
    """Seven cards left and the bottom card KC: a stake on the king, then every placement of the
    k kings left among the seven, dealt by the engine from the saved state (and the stake
    collected after a win: it is resolved), averages exactly to the odds. The bottom card is of
    the rank: under ``bank`` it takes what still stands."""
    bottom = ONE_PACK[-1]
    kings = [c for c in ONE_PACK if c.rank is Rank.KING and c != bottom]
    others = [c for c in ONE_PACK if c.rank is not Rank.KING]
    left, out = kings[:k] + others[: 7 - k], kings[k:] + others[7 - k :]
    deal = TailleDeal(bottom, rules)
    for c in out:  # 22 draws with nothing standing
        deal.lay(c)
    assert (deal.cards_left, deal.rank_left(Rank.KING)) == (7, k)
    amount = 2**10  # a plié halves it at most once here: exact
    deal.place(Stake("k", Rank.KING, amount))
    state = deal.to_json()
    total, placements = 0, list(combinations(range(7), k))
    for positions in placements:
        fill = iter(left[k:])
        order = [left[positions.index(i)] if i in positions else next(fill) for i in range(7)]
        again = TailleDeal.from_json(state, rules)
        for c in [*order, bottom]:
            settled = again.lay(c).settled
            if settled is None:
                continue
            total += sum(s.to_bank - s.paid for s in settled.settlements)
            if any(s.outcome is Outcome.WON for s in settled.settlements):
                again.act(Action("k", Act.COLLECT))  # resolved: the player takes it off
    expected = until_resolved(7, k, rules, bottom_of_rank=True)
    assert Fraction(total, len(placements) * amount) == expected


def classic_by_enumeration(n: int, k: int) -> Fraction:
    """The classic rules by hand: n cards, the last dead, a doublet takes half and decides."""
    total = Fraction(0)
    placements = list(combinations(range(n), k))
    for positions in placements:
        at = set(positions)
        for first in range(0, n, 2):
            left, right = first in at, first + 1 in at
            last_pair = first == n - 2
            if left and right and not last_pair:
                total += Fraction(1, 2)
                break
            if left:
                total += 1
                break
            if right and not last_pair:
                total -= 1
                break
    return total / len(placements)


@pytest.mark.parametrize("n", [4, 6, 8, 10, 12, 14])
@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_the_classic_closed_forms_are_the_classic_rules(n, k):
    assert classic_advantage(n, k) == classic_by_enumeration(n, k)


@pytest.mark.parametrize(
    ("n", "k", "part"),
    # Hoyle's Games, "Use of the foregoing table" (De Moivre's table): the banker's gain is the
    # 54th, 12th, 38th, 9th part of the stake (the tables print the whole part, rounded down).
    [(30, 2, 54), (10, 3, 12), (22, 2, 38), (8, 3, 9)],
)
def test_the_classic_table_as_hoyle_quotes_it(n, k, part):
    assert int(1 / classic_advantage(n, k)) == part


def test_the_classic_tables_order_of_the_banker_gain():
    """Hoyle's corollary: the least gain when the card is twice in the stock, then thrice, then
    once, the greatest four times."""
    for n in range(8, 53, 2):
        gains = {k: classic_advantage(n, k) for k in (1, 2, 3, 4)}
        assert gains[2] < gains[3] < gains[1] < gains[4], n


def classic_as_ours(n: int, k: int) -> Fraction:
    """Our edge with the bottom card unknown (n cards held, the last of them the bottom card)."""
    value = Fraction(0)
    if k < n:
        value += Fraction(n - k, n) * until_resolved(n - 1, k, DEAD)
    if k:
        value += Fraction(k, n) * until_resolved(n - 1, k - 1, DEAD, bottom_of_rank=True)
    return value


@pytest.mark.parametrize("n", [4, 10, 30, 52])
def test_our_dead_bottom_card_is_the_classic_game_where_a_doublet_decides(n):
    """Averaged over the bottom card, RULES.md's game is the classic one up to the plié: the same
    figure for a rank once or twice in the stock, more when the half left standing can be plié or
    lost again (three or four times)."""
    assert classic_as_ours(n, 1) == classic_advantage(n, 1)
    assert classic_as_ours(n, 2) == classic_advantage(n, 2)
    assert classic_as_ours(n, 3) > classic_advantage(n, 3)
    assert classic_as_ours(n, 4) > classic_advantage(n, 4)


def test_the_document_has_the_keys_of_replay_md_with_exact_fractions():
    document = pharao_odds_document(cards_left=51, rank_left=4, reglement=DEAD)
    assert set(document) == {"draw", "until_resolved"}
    keys = ("bank", "players", "plie", "none", "edge_per_draw", "edge_per_resolved")
    assert set(document["draw"]) == {*keys, *(f"{k}_exact" for k in keys)}
    assert set(document["until_resolved"]) == {"edge", "edge_exact"}
    for part in document.values():
        for key, value in part.items():
            if not key.endswith("_exact"):
                assert value == float(Fraction(part[f"{key}_exact"]))
    assert document["draw"]["plie_exact"] == "2/425"
    assert document["until_resolved"]["edge_exact"] == "205/9996"


def test_a_draw_that_cannot_settle_has_no_edge_per_resolved():
    document = pharao_odds_document(cards_left=5, rank_left=0, reglement=DEAD)
    assert document["draw"]["edge_per_resolved"] is None
    assert document["draw"]["edge_per_draw"] == 0


def test_the_last_draw_under_each_rule():
    assert next_draw(1, 0, DEAD, bottom_of_rank=True).bank == 0
    assert next_draw(1, 0, BANK, bottom_of_rank=True).bank == 1
    assert next_draw(1, 1, DEAD).edge_per_resolved == 1
    assert until_resolved(1, 0, BANK, bottom_of_rank=True) == 1
    assert until_resolved(1, 0, DEAD, bottom_of_rank=True) == 0


@pytest.mark.parametrize(
    ("n", "k", "bottom", "where"),
    [(50, 4, False, "cards-left"), (53, 0, False, "cards-left"), (0, 0, False, "cards-left"),
     (3, 4, False, "rank-left"), (51, 4, True, "rank-left"), (51, -1, False, "rank-left")],
)  # fmt: skip
def test_a_position_the_pack_cannot_be_in_is_refused(n, k, bottom, where):
    with pytest.raises(GameError) as error:
        pharao_odds_document(cards_left=n, rank_left=k, reglement=DEAD, bottom_of_rank=bottom)
    assert (error.value.code, error.value.where) == ("bad_input", where)


def test_the_command_prints_the_document():
    status, output, stderr = run(
        "odds",
        None,
        "--game",
        "pharao",
        "--cards-left",
        "1",
        "--rank-left",
        "0",
        "--bottom-of-rank",
        "--reglement",
        json.dumps({"overrides": {"pharao_last_card": "bank"}}),
        raw="",
    )
    assert (status, stderr) == (0, "")
    assert output["until_resolved"] == {"edge": 1.0, "edge_exact": "1"}


@pytest.mark.parametrize(
    ("args", "code", "where"),
    [
        (["--game", "pharao", "--cards-left", "51"], "usage", "arguments"),
        (["--game", "pharao", "--decks", "1", "--cards-left", "51", "--rank-left", "4"],
         "usage", "arguments"),
        (["--decks", "6", "--cards-left", "51"], "usage", "arguments"),
        (["--game", "pharao", "--cards-left", "50", "--rank-left", "4"], "bad_input", "cards-left"),
        (["--game", "pharao", "--cards-left", "5", "--rank-left", "1", "--reglement", "monaco"],
         "bad_reglement", "reglement"),
        (["--game", "pharao", "--cards-left", "5", "--rank-left", "1", "--reglement", "{"],
         "bad_json", "reglement"),
        (["--game", "faro", "--cards-left", "5", "--rank-left", "1"], "usage", "arguments"),
    ],
)  # fmt: skip
def test_the_command_refuses_bad_arguments_with_a_json_error(args, code, where):
    status, output, stderr = run("odds", None, *args, raw="")
    assert (status, stderr) == (2, "")
    assert (output["error"]["code"], output["error"]["where"]) == (code, where)


def test_the_figures_of_docs_odds_md_are_the_commands():
    text = (ROOT / "docs" / "odds.md").read_text()
    pharao = text[text.index("# The exact odds of Pharao") :]
    rows = re.findall(r"^\| (\d+) \| (.+) \|$", pharao, re.M)
    assert [int(n) for n, _ in rows] == [51, 41, 31, 21, 11]
    for n, cells in rows:
        for k, cell in enumerate(cells.split(" | "), start=1):
            exact, shown = cell.split(" = ")
            value = until_resolved(int(n), k, DEAD)
            assert (Fraction(exact), shown) == (value, f"{float(value):.6f}"), (n, k)
    first = next_draw(51, 4, DEAD)
    for figure in (first.bank, first.plie, first.edge_per_draw, first.edge_per_resolved):
        assert f"| {figure} | {float(figure):.10f} |" in pharao  # type: ignore[arg-type]
    quoted = {
        until_resolved(51, 4, DEAD): "205/9996",
        until_resolved(51, 3, DEAD, bottom_of_rank=True): "13/833",
        classic_as_ours(52, 3): "27/1768",
        classic_as_ours(52, 4): "218/10829",
        classic_as_ours(30, 2): "8/435",
        classic_as_ours(22, 2): "2/77",
        classic_as_ours(10, 3): "1/10",
        classic_as_ours(8, 3): "15/112",
        classic_advantage(52, 2): "9/884",
        classic_advantage(52, 4): "33/1666",
    }
    for value, written in quoted.items():
        assert str(value) == written
        assert written in pharao
    bank_once = Fraction(51, 52) * until_resolved(51, 1, BANK) + Fraction(1, 52) * until_resolved(
        51, 0, BANK, bottom_of_rank=True
    )
    assert bank_once == Fraction(1, 26)
