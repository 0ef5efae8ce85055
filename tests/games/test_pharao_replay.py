"""The Pharao replay (REPLAY.md, Pharao): golden files built by hand, and the error contract."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from casino.games.errors import GameError
from casino.games.reglement import PRESETS
from casino.games.replay import replay, replay_text
from tests.conftest import ROOT
from tests.games.test_replay import run

GOLDEN = sorted((ROOT / "tests" / "data" / "replay" / "pharao").glob("*.json"))
ZEROS = {"paid": 0, "returned": 0, "to_bank": 0}


def with_zeros(expected: dict[str, Any]) -> dict[str, Any]:
    """Golden files list only the non-zero amounts of a line; the output has them all."""
    full = copy.deepcopy(expected)
    for draw in full["draws"]:
        draw["settlements"] = [{**ZEROS, **s} for s in draw["settlements"]]
    full["end"]["settlements"] = [{**ZEROS, **s} for s in full["end"]["settlements"]]
    return full


def golden(name: str) -> dict[str, Any]:
    return json.loads((ROOT / "tests/data/replay/pharao" / f"{name}.json").read_text())


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_golden_replays(path: Path):
    data = json.loads(path.read_text())
    status, output, stderr = run("replay", data["input"])
    assert status == 0, output
    assert stderr == ""
    assert output == with_zeros(data["expected"])


def test_every_feature_has_its_golden_file():
    outcomes, reasons, marks = set(), set(), set()
    for path in GOLDEN:
        expected = json.loads(path.read_text())["expected"]
        for draw in expected["draws"]:
            outcomes |= {s["outcome"] for s in draw["settlements"]}
            marks |= {s["mark"] for s in draw["settlements"]}
        outcomes |= {s["outcome"] for s in expected["end"]["settlements"]}
        marks |= {s["mark"] for s in expected["end"]["settlements"]}
        reasons |= {r["reason"] for r in expected["refused"]}
    assert outcomes == {
        "won",
        "lost",
        "plie",
        "dead",
        "collected",
        "withdrawn",
        "reduced",
        "returned",
    }
    assert reasons == {
        "false_paroli",
        "not_approved",
        "over_limit",
        "under_limit",
        "rank_exhausted",
        "unknown_stake",
        "bad_mark",
    }
    assert marks == {"simple", "appe", "paroli", "6", "7", "12", "14", "15", "24", "28", "30"}


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_every_unit_is_returned_paid_or_kept_in_the_golden_files(path: Path):
    """What stands on a card changes only by a raise or a mark (money put on), by a line's
    returned and to_bank (money off), and by nothing else: replaying the lines from the input
    reaches zero for every stake, and every win pays what was riding."""
    data = json.loads(path.read_text())
    output = replay(data["input"])
    placed = {s["id"]: s["amount"] for s in data["input"]["stakes"]}
    refused = {r["stake"] for r in output["refused"] if r["do"] == "stake"}
    off = dict.fromkeys(placed, 0)
    for draw in output["draws"]:
        for s in draw["settlements"]:
            off[s["stake"]] += s["returned"] + s["to_bank"]
    for s in output["end"]["settlements"]:
        off[s["stake"]] += s["returned"] + s["to_bank"]
    for stake, amount in placed.items():
        if stake in refused:
            assert off[stake] == 0
        else:
            assert off[stake] >= amount, stake  # marks and raises put more on, never less


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_the_presets_change_nothing_in_pharao(preset):
    """The presets differ only in other games' parameters (REPLAY.md, Pharao)."""
    for path in GOLDEN:
        data = json.loads(path.read_text())
        spec = data["input"].get("reglement", "baden-1854")
        overrides = spec.get("overrides", {}) if isinstance(spec, dict) else {}
        document = {**data["input"], "reglement": {"preset": preset, "overrides": overrides}}
        assert replay(document) == with_zeros(data["expected"]), path.stem


def test_ten_and_lower_case_are_accepted_and_written_as_t():
    data = golden("dead_last_card")
    spelled = copy.deepcopy(data["input"])
    spelled["cards"] = [("10" + c[1]) if c[0] == "T" else c.lower() for c in spelled["cards"]]
    spelled["stakes"] = [{**s, "rank": s["rank"].lower()} for s in spelled["stakes"]]
    assert "10S" in spelled["cards"]
    assert replay(spelled) == with_zeros(data["expected"])
    ten = {"id": "t", "draw": 1, "rank": "10", "amount": 5}
    spelled["stakes"].append(ten)
    output = replay(spelled)
    draw_6 = output["draws"][5]
    assert draw_6["bank"] == "TS"  # the ten of spades, written T
    assert {"stake": "t", "outcome": "lost", **ZEROS, "to_bank": 5, "mark": "simple"} in draw_6[
        "settlements"
    ]


def test_an_empty_taille_still_deals_its_26_draws():
    data = golden("marks_up_to_thirty")
    output = replay({"game": "pharao", "cards": data["input"]["cards"]})
    assert [d["number"] for d in output["draws"]] == list(range(1, 27))
    assert all(d["settlements"] == [] for d in output["draws"])
    assert output["refused"] == []
    assert output["end"] == {"settlements": []}
    assert output["bottom_card"] == "QC"
    assert [d["plie"] for d in output["draws"]].count(True) == 2


# --- bad input ------------------------------------------------------------------------------------

BASE = golden("approvals_and_collects")["input"]
DROP = object()


def doc(**changes: Any) -> str:
    """BASE with ``a__0__b=value`` changes (``DROP`` removes the key), as JSON text."""
    document = copy.deepcopy(BASE)
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


CARDS = BASE["cards"]
STAKE = {"id": "z", "draw": 1, "rank": "7", "amount": 10}

CASES: list[tuple[str, str, str, str | None]] = [
    # (name, input text, code, where)
    ("not json", '{"game": "pharao", "cards": [', "bad_json", "line 1 column 30"),
    (
        "repeated key",
        '{"game": "pharao", "cards": [], "stakes": [{"id": "a", "id": "b"}]}',
        "bad_json",
        "stakes[0].id",
    ),
    # Top level: unknown field, missing field, game, reglement, cards, stakes, actions.
    ("unknown before anything", doc(prison=[], cards=DROP), "unknown_field", "prison"),
    ("cards missing", doc(cards=DROP), "bad_input", "cards"),
    ("missing before reglement", doc(cards=DROP, reglement="monaco"), "bad_input", "cards"),
    ("reglement", doc(reglement="monaco"), "bad_reglement", "reglement"),
    (
        "reglement inside",
        doc(reglement={"overrides": {"pharao_last_card": "players"}}),
        "bad_reglement",
        "reglement.overrides.pharao_last_card",
    ),
    (
        "a mark row of the règlement",
        doc(
            reglement={
                "overrides": {
                    "pharao_marks": [
                        {"mark": "appe", "from": "simple", "move": "appe", "riding": 1},
                    ]
                }
            }
        ),
        "bad_reglement",
        "reglement.overrides.pharao_marks[0].protected",
    ),
    ("reglement before cards", doc(reglement="monaco", cards=[]), "bad_reglement", "reglement"),
    ("cards not a list", doc(cards="AS 2S"), "bad_input", "cards"),
    ("a bad code", doc(cards__17="ZZ"), "bad_card", "cards[17]"),
    ("a number", doc(cards__3=7), "bad_card", "cards[3]"),
    ("codes before copies", doc(cards__50=CARDS[0], cards__51="XX"), "bad_card", "cards[51]"),
    ("a repeated card at the later index", doc(cards__30=CARDS[4]), "bad_pack", "cards[30]"),
    ("lower case repeats too", doc(cards__30=CARDS[4].lower()), "bad_pack", "cards[30]"),
    ("51 cards", doc(cards=CARDS[:51]), "bad_pack", "cards"),
    ("53 cards is a repeat", doc(cards=[*CARDS, CARDS[0]]), "bad_pack", "cards[52]"),
    ("cards before stakes", doc(cards=CARDS[:51], stakes=7), "bad_pack", "cards"),
    # Stakes: unknown key, missing key, id, draw, rank, amount, repeated id.
    ("stakes not a list", doc(stakes={}), "bad_input", "stakes"),
    ("a stake not an object", doc(stakes=[7]), "bad_input", "stakes[0]"),
    ("stake unknown key", doc(stakes=[{**STAKE, "coup": 1}]), "unknown_field", "stakes[0].coup"),
    (
        "unknown key before missing",
        doc(stakes=[{"chance": "rouge"}]),
        "unknown_field",
        "stakes[0].chance",
    ),
    ("missing draw", doc(stakes__1__draw=DROP), "bad_input", "stakes[1].draw"),
    (
        "missing before id",
        doc(stakes__1__amount=DROP, stakes__1__id=""),
        "bad_input",
        "stakes[1].amount",
    ),
    ("id empty", doc(stakes__1__id=""), "bad_input", "stakes[1].id"),
    ("id a number", doc(stakes__1__id=3), "bad_input", "stakes[1].id"),
    ("draw 0", doc(stakes__1__draw=0), "bad_input", "stakes[1].draw"),
    ("draw 27", doc(stakes__1__draw=27), "bad_input", "stakes[1].draw"),
    ("draw float", doc(stakes__1__draw=1.0), "bad_input", "stakes[1].draw"),
    (
        "draw before rank",
        doc(stakes__1__draw=0, stakes__1__rank="X"),
        "bad_input",
        "stakes[1].draw",
    ),
    ("rank", doc(stakes__1__rank="1"), "bad_rank", "stakes[1].rank"),
    ("rank a card", doc(stakes__1__rank="7S"), "bad_rank", "stakes[1].rank"),
    ("rank a number", doc(stakes__1__rank=7), "bad_rank", "stakes[1].rank"),
    (
        "rank before amount",
        doc(stakes__1__rank="Z", stakes__1__amount=0),
        "bad_rank",
        "stakes[1].rank",
    ),
    ("amount 0", doc(stakes__1__amount=0), "bad_input", "stakes[1].amount"),
    ("amount 100.0", doc(stakes__1__amount=100.0), "bad_input", "stakes[1].amount"),
    ("amount bool", doc(stakes__1__amount=True), "bad_input", "stakes[1].amount"),
    ("amount string", doc(stakes__1__amount="100"), "bad_input", "stakes[1].amount"),
    ("repeated id", doc(stakes__2__id="w"), "bad_input", "stakes[2].id"),
    (
        "amount before repeated id",
        doc(stakes__2__id="w", stakes__2__amount=-1),
        "bad_input",
        "stakes[2].amount",
    ),
    ("stakes before actions", doc(stakes__0__rank="Z", actions=7), "bad_rank", "stakes[0].rank"),
    # Actions: unknown key, missing key, draw, stake, do, amount, approved_by.
    ("actions not a list", doc(actions={}), "bad_input", "actions"),
    ("an act not an object", doc(actions=["paroli"]), "bad_input", "actions[0]"),
    (
        "act unknown key",
        doc(actions__0__approved="chef"),
        "unknown_field",
        "actions[0].approved",
    ),
    ("act missing do", doc(actions__0__do=DROP), "bad_input", "actions[0].do"),
    (
        "missing before draw",
        doc(actions__0__stake=DROP, actions__0__draw=0),
        "bad_input",
        "actions[0].stake",
    ),
    ("act draw 0", doc(actions__0__draw=0), "bad_input", "actions[0].draw"),
    ("act draw 27", doc(actions__0__draw=27), "bad_input", "actions[0].draw"),
    ("act stake empty", doc(actions__0__stake=""), "bad_input", "actions[0].stake"),
    ("act stake a number", doc(actions__0__stake=1), "bad_input", "actions[0].stake"),
    ("unknown do", doc(actions__0__do="double"), "bad_input", "actions[0].do"),
    ("do in capitals", doc(actions__0__do="WITHDRAW"), "bad_input", "actions[0].do"),
    ("reduce without amount", doc(actions__1__amount=DROP), "bad_input", "actions[1].amount"),
    ("reduce amount 0", doc(actions__1__amount=0), "bad_input", "actions[1].amount"),
    ("amount on a withdraw", doc(actions__0__amount=5), "bad_input", "actions[0].amount"),
    ("amount on a paroli", doc(actions__5__amount=5), "bad_input", "actions[5].amount"),
    (
        "amount before approved_by",
        doc(actions__1__amount=0, actions__1__approved_by=""),
        "bad_input",
        "actions[1].amount",
    ),
    (
        "withdraw without approved_by",
        doc(actions__0__approved_by=DROP),
        "bad_input",
        "actions[0].approved_by",
    ),
    ("approved_by empty", doc(actions__6__approved_by=""), "bad_input", "actions[6].approved_by"),
    (
        "approved_by a number",
        doc(actions__6__approved_by=1),
        "bad_input",
        "actions[6].approved_by",
    ),
    (
        "approved_by on a collect",
        doc(actions__3__approved_by="chef"),
        "bad_input",
        "actions[3].approved_by",
    ),
    (
        "approved_by on a raise",
        doc(actions=[{"draw": 2, "stake": "r", "do": "raise", "amount": 5, "approved_by": None}]),
        "bad_input",
        "actions[0].approved_by",
    ),
    ("not an object", "[1, 2]", "bad_input", None),
]


@pytest.mark.parametrize(
    ("text", "code", "where"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_input_is_refused_with_its_code_at_the_first_fault(text, code, where):
    with pytest.raises(GameError) as error:
        replay_text(text)
    assert (error.value.code, error.value.where) == (code, where), error.value.message
    assert error.value.message


def test_a_bad_document_is_exit_2_and_a_json_error_from_the_command():
    status, output, stderr = run("replay", json.loads(doc(cards__17="ZZ")))
    assert status == 2
    assert stderr == ""
    assert output["error"]["code"] == "bad_card"
    assert output["error"]["where"] == "cards[17]"
    assert "'ZZ' is not a card" in output["error"]["message"]


def test_the_base_document_itself_replays():
    """The refusals above are not refusing everything."""
    assert len(replay_text(doc())["draws"]) == 26


def test_a_null_approval_is_a_refusal_not_an_input_error():
    output = replay_text(doc())
    assert {"draw": 2, "stake": "w", "do": "withdraw", "reason": "not_approved"} in output[
        "refused"
    ]
