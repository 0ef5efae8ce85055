"""The Alliance replay (REPLAY.md, Alliance): golden files built by hand, and the error contract."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from casino.games.errors import GameError
from casino.games.replay import replay, replay_text
from tests.conftest import ROOT
from tests.games.test_replay import run

DATA = ROOT / "tests" / "data" / "replay" / "alliance"
GOLDEN = sorted(DATA.glob("*.json"))


def golden(name: str) -> dict[str, Any]:
    return json.loads((DATA / f"{name}.json").read_text())


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_golden_replays(path: Path):
    data = json.loads(path.read_text())
    status, output, stderr = run("replay", data["input"])
    assert status == 0, output
    assert stderr == ""
    assert output == data["expected"]


def test_every_case_of_the_issue_has_its_golden_file():
    """Every game, couleur, the Fahne and the honours in a tie, the called card on the table and
    among the discards, four kings held, lever with take, the bonuses, each outcome of a
    résistance, the figure rule, 5 and 6 players."""
    seen: dict[str, set[Any]] = {"game": set(), "kinds": set(), "players": set(), "forced": set()}
    ties = []
    for path in GOLDEN:
        data = json.loads(path.read_text())
        out = data["expected"]
        seen["game"].add(out["game"])
        seen["forced"].add(out["forced"])
        seen["players"].add(len(out["hands"]))
        seen["kinds"] |= {p["for"] for p in out["payments"]}
        if out["resister"] is None:
            side = {out["declarer"], out["ally"]} - {None}
            mine = sum(out["taken"][p] for p in side)
            if 2 * mine == len(out["tricks"]):
                ties.append((out["fahne_with"] is None, out["declarer"] in out["winners"]))
    assert seen["game"] == {"alliance", "lever", "solo"}
    assert seen["forced"] == {True, False}
    assert seen["players"] == {4, 5, 6}
    assert seen["kinds"] == {
        "game",
        "honours",
        "bonus",
        "resistance",
        "neutral",
        "both_lose",
        "figure",
    }
    # The Fahne deciding, the honours deciding, equal honours: the declarer's side loses.
    assert {(False, False), (True, True)} <= set(ties)
    assert ties.count((True, False)) >= 1


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_marks_sum_to_zero_and_money_is_marks_at_the_mark_value_less_the_fee(path: Path):
    data = json.loads(path.read_text())
    out = data["expected"]
    assert sum(out["marks"].values()) == 0
    net = dict.fromkeys(out["marks"], 0)
    for p in out["payments"]:
        assert p["marks"] > 0
        net[p["from"]] -= p["marks"]
        net[p["to"]] += p["marks"]
    assert net == out["marks"]
    value = data["input"]["mark_value"]
    assert out["money"] == {k: m * value - out["fee"] for k, m in out["marks"].items()}


def test_ten_and_lower_case_are_accepted_and_written_as_t():
    data = golden("alliance_won_with_the_called_king")
    spelled = copy.deepcopy(data["input"])
    spelled["cards"] = [("10" + c[1]) if c[0] == "T" else c.lower() for c in spelled["cards"]]
    spelled["tricks"] = [[c.lower() for c in t] for t in spelled["tricks"]]
    spelled["contract"] = {"trumps": "h", "called": "ks"}
    assert replay(spelled) == data["expected"]


def test_the_presets_change_nothing_but_the_alliance_parameters():
    data = golden("alliance_won_with_the_called_king")
    for preset in ("pierer-1857", "france-2007", "trente-et-quarante-modern"):
        assert replay({**data["input"], "reglement": preset}) == data["expected"]


def test_the_alliance_parameters_are_read():
    data = golden("alliance_won_with_the_called_king")
    overrides = {
        "alliance_values": {"alliance": 5},
        "alliance_honours": {"fahne": 10},
        "cercle_fee": 7,
    }
    out = replay({**data["input"], "reglement": {"overrides": overrides}})
    # game 5, honours KH 1 + the Fahne 10 = 11: each loser pays each winner 16.
    assert out["marks"] == {"ana": 32, "ben": -32, "carl": 32, "dora": -32}
    assert out["fee"] == 7
    assert out["money"]["ben"] == -3200 - 7


# --- bad input ------------------------------------------------------------------------------------

LEVER = golden("lever_held_by_the_vorhand_with_take")["input"]
ALLIANCE = golden("alliance_won_with_the_called_king")["input"]
SOLO = golden("resistance_soloist_wins_figure_rule")["input"]
DROP = object()


def doc(base: dict[str, Any] = LEVER, **changes: Any) -> str:
    """``base`` with ``a__0__b=value`` changes (``DROP`` removes the key), as JSON text."""
    document = copy.deepcopy(base)
    for path, value in changes.items():
        target = document
        *parents, last = path.split("__")
        for part in parents:
            target = target[int(part)] if part.isdigit() else target[part]
        key: Any = int(last) if last.isdigit() else last
        if value is DROP:
            del target[key]
        else:
            target[key] = value
    return json.dumps(document)


CARDS = LEVER["cards"]
TRICKS = LEVER["tricks"]

CASES: list[tuple[str, str, str, str | None]] = [
    # (name, input text, code, where)
    ("not json", '{"game": "alliance", "cards": [', "bad_json", "line 1 column 32"),
    (
        "repeated key",
        doc(contract__turn=2).replace('"turn": 2', '"turn": 2, "turn": 1'),
        "bad_json",
        "contract.turn",
    ),
    ("not an object", "[1, 2]", "bad_input", None),
    # Top level: unknown field, missing field, game, players, reglement, mark_value, cards, ...
    ("unknown field first", doc(stakes=[], cards=DROP), "unknown_field", "stakes"),
    ("missing field", doc(tricks=DROP), "bad_input", "tricks"),
    ("missing before players", doc(auction=DROP, players=[]), "bad_input", "auction"),
    ("players not a list", doc(players="ana"), "bad_input", "players"),
    ("a player not a string", doc(players__2=3), "bad_input", "players[2]"),
    ("a player empty", doc(players__2=""), "bad_input", "players[2]"),
    ("a repeated player", doc(players__3="ana"), "bad_input", "players[3]"),
    ("three players", doc(players=["ana", "ben", "carl"]), "bad_input", "players"),
    ("seven players", doc(players=list("abcdefg")), "bad_input", "players"),
    ("players before reglement", doc(players=[], reglement="monaco"), "bad_input", "players"),
    ("reglement", doc(reglement="monaco"), "bad_reglement", "reglement"),
    (
        "an unknown key of alliance_values",
        doc(reglement={"overrides": {"alliance_values": {"grand": 2}}}),
        "bad_reglement",
        "reglement.overrides.alliance_values.grand",
    ),
    (
        "a negative honour",
        doc(reglement={"overrides": {"alliance_honours": {"J": -1}}}),
        "bad_reglement",
        "reglement.overrides.alliance_honours.J",
    ),
    (
        "a fee that is not an integer",
        doc(reglement={"overrides": {"cercle_fee": 1.5}}),
        "bad_reglement",
        "reglement.overrides.cercle_fee",
    ),
    (
        "reglement before mark_value",
        doc(reglement="x", mark_value=-1),
        "bad_reglement",
        "reglement",
    ),
    ("mark_value negative", doc(mark_value=-1), "bad_input", "mark_value"),
    ("mark_value a float", doc(mark_value=100.0), "bad_input", "mark_value"),
    ("mark_value a boolean", doc(mark_value=True), "bad_input", "mark_value"),
    ("mark_value before cards", doc(mark_value="1", cards=[]), "bad_input", "mark_value"),
    # Cards: codes, then duplicates at the later index, then the count.
    ("cards not a list", doc(cards="QS AS"), "bad_input", "cards"),
    ("a bad code", doc(cards__17="ZZ"), "bad_card", "cards[17]"),
    ("a number", doc(cards__3=7), "bad_card", "cards[3]"),
    ("codes before copies", doc(cards__30=CARDS[0], cards__51="XX"), "bad_card", "cards[51]"),
    ("a repeated card at the later index", doc(cards__30=CARDS[4]), "bad_pack", "cards[30]"),
    ("51 cards", doc(cards=CARDS[:51]), "bad_pack", "cards"),
    ("53 cards", doc(cards=[*CARDS, "2C"]), "bad_pack", "cards[52]"),
    ("cards before auction", doc(cards=CARDS[:51], auction=7), "bad_pack", "cards"),
    # The auction.
    ("auction not a list", doc(auction="pass"), "bad_input", "auction"),
    ("a call not a string", doc(auction__1=2), "bad_input", "auction[1]"),
    ("an unknown call", doc(auction__1="grand"), "bad_input", "auction[1]"),
    ("a call in capitals", doc(auction__1="LEVER"), "bad_input", "auction[1]"),
    ("lever_forced is no call", doc(auction__1="lever_forced"), "bad_input", "auction[1]"),
    ("a game not higher", doc(auction__1="alliance"), "bad_call", "auction[1]"),
    ("the same game again", doc(auction__2="lever"), "bad_call", "auction[2]"),
    ("hold by another", doc(auction__2="hold"), "bad_call", "auction[2]"),
    (
        "hold before being overbid",
        doc(ALLIANCE, auction=["hold", "pass"]),
        "bad_call",
        "auction[0]",
    ),
    (
        "hold after passing",
        doc(auction=["pass", "lever", "pass", "pass", "hold", "pass", "pass"]),
        "bad_call",
        "auction[4]",
    ),
    (
        "hold by the last seat after a hold",
        doc(auction=["alliance", "lever", "pass", "pass", "hold", "pass", "pass", "hold"]),
        "bad_call",
        "auction[7]",
    ),
    ("a call after the end", doc(auction=[*LEVER["auction"], "pass"]), "bad_call", "auction[8]"),
    ("a call after a forced lever", doc(auction=["pass"] * 5), "bad_call", "auction[4]"),
    ("the auction stops early", doc(auction=LEVER["auction"][:7]), "bad_call", "auction"),
    ("an empty auction", doc(auction=[]), "bad_call", "auction"),
    ("auction before contract", doc(auction__1="alliance", contract=7), "bad_call", "auction[1]"),
    # The contract, by game.
    ("contract not an object", doc(contract=[]), "bad_input", "contract"),
    ("a key of another game", doc(contract__trumps="H"), "unknown_field", "contract.trumps"),
    ("an unknown key", doc(contract__king="KS"), "unknown_field", "contract.king"),
    ("unknown before missing", doc(contract={"trump": "H"}), "unknown_field", "contract.trump"),
    ("turn missing", doc(contract__turn=DROP), "bad_input", "contract.turn"),
    ("called missing", doc(contract__called=DROP), "bad_input", "contract.called"),
    ("turn a string", doc(contract__turn="2"), "bad_input", "contract.turn"),
    ("turn 0", doc(contract__turn=0), "bad_contract", "contract.turn"),
    ("turn 4 with 3 face-down cards", doc(contract__turn=4), "bad_contract", "contract.turn"),
    ("take not a boolean", doc(contract__take="yes"), "bad_input", "contract.take"),
    ("discard missing with take", doc(contract__discard=DROP), "bad_input", "contract.discard"),
    ("discard without take", doc(contract__take=False), "bad_input", "contract.discard"),
    ("discard not a list", doc(contract__discard="2C"), "bad_input", "contract.discard"),
    ("a discard not a card", doc(contract__discard__2="7X"), "bad_card", "contract.discard[2]"),
    (
        "a discard not in hand",
        doc(contract__discard__1="3S"),
        "bad_contract",
        "contract.discard[1]",
    ),
    ("a discard repeated", doc(contract__discard__3="2C"), "bad_contract", "contract.discard[3]"),
    (
        "three discards",
        doc(contract__discard=["2C", "4S", "7H"]),
        "bad_contract",
        "contract.discard",
    ),
    ("called not a card", doc(contract__called="K"), "bad_card", "contract.called"),
    ("called a queen", doc(contract__called="QH"), "bad_contract", "contract.called"),
    ("called held after the take", doc(contract__called="KD"), "bad_contract", "contract.called"),
    (
        "called held after the take, from the table",
        doc(
            contract__discard=["2C", "4S", "7H", "3D"],
            contract__called="KS",
            cards__25="KS",
            cards__6="5S",
        ),
        "bad_contract",
        "contract.called",
    ),
    (
        "alliance trumps missing",
        doc(ALLIANCE, contract__trumps=DROP),
        "bad_input",
        "contract.trumps",
    ),
    (
        "alliance trumps not a suit",
        doc(ALLIANCE, contract__trumps="X"),
        "bad_input",
        "contract.trumps",
    ),
    (
        "alliance trumps a card",
        doc(ALLIANCE, contract__trumps="KH"),
        "bad_input",
        "contract.trumps",
    ),
    ("alliance a key of lever", doc(ALLIANCE, contract__turn=1), "unknown_field", "contract.turn"),
    (
        "alliance called held",
        doc(ALLIANCE, contract__called="KH"),
        "bad_contract",
        "contract.called",
    ),
    (
        "alliance called not a king",
        doc(ALLIANCE, contract__called="QS"),
        "bad_contract",
        "contract.called",
    ),
    ("solo trumps missing", doc(SOLO, contract__trumps=DROP), "bad_input", "contract.trumps"),
    ("solo called", doc(SOLO, contract__called="KS"), "unknown_field", "contract.called"),
    (
        "résistance by nobody",
        doc(SOLO, contract__resistance="zoe"),
        "bad_contract",
        "contract.resistance",
    ),
    (
        "résistance by the soloist",
        doc(SOLO, contract__resistance="ana"),
        "bad_contract",
        "contract.resistance",
    ),
    ("résistance a number", doc(SOLO, contract__resistance=2), "bad_input", "contract.resistance"),
    ("contract before tricks", doc(contract__turn=9, tricks=7), "bad_contract", "contract.turn"),
    # The tricks: the count first, then trick by trick, card by card.
    ("tricks not a list", doc(tricks={}), "bad_input", "tricks"),
    ("eleven tricks", doc(tricks=TRICKS[:11]), "bad_tricks", "tricks"),
    ("count before cards", doc(tricks=[["ZZ"] * 4] * 11), "bad_tricks", "tricks"),
    ("a trick not a list", doc(tricks__3="2H"), "bad_input", "tricks[3]"),
    ("a trick of three", doc(tricks__3=TRICKS[3][:3]), "bad_tricks", "tricks[3]"),
    ("trick by trick", doc(tricks__3=TRICKS[3][:3], tricks__1__1="ZZ"), "bad_card", "tricks[1][1]"),
    ("a bad card in a trick", doc(tricks__4__2="9X"), "bad_card", "tricks[4][2]"),
    ("a card of another hand", doc(tricks__0__1="AD"), "not_in_hand", "tricks[0][1]"),
    ("a table card", doc(tricks__4__2="7H"), "not_in_hand", "tricks[4][2]"),
    ("a card played twice", doc(tricks__1__0="5S"), "not_in_hand", "tricks[1][0]"),
    ("not following suit", doc(tricks__0__1="2H"), "must_follow_suit", "tricks[0][1]"),
    ("a trump when holding the suit", doc(tricks__0__3="4H"), "must_follow_suit", "tricks[0][3]"),
    ("leader out of turn", doc(tricks__1=["8S", "QS", "6S", "7S"]), "not_in_hand", "tricks[1][0]"),
]


@pytest.mark.parametrize(
    ("text", "code", "where"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_input_is_refused_with_its_code_at_the_first_fault(text, code, where):
    with pytest.raises(GameError) as error:
        replay_text(text)
    assert (error.value.code, error.value.where) == (code, where), error.value.message
    assert error.value.message


def test_a_bad_deal_is_exit_2_and_a_json_error_from_the_command():
    status, output, stderr = run("replay", json.loads(doc(tricks__4__2="7H")))
    assert status == 2
    assert stderr == ""
    assert output["error"]["code"] == "not_in_hand"
    assert output["error"]["where"] == "tricks[4][2]"
    assert "carl" in output["error"]["message"]


def test_the_bases_replay():
    """The refusals above are not refusing everything."""
    for base in (LEVER, ALLIANCE, SOLO):
        assert replay_text(doc(base))["payments"]
