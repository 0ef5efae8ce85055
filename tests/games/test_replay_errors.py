"""The replay's bad inputs (REPLAY.md, settled readings): each refused with its code, at the first
fault, in the page's order. In-process for speed; ``test_replay.py`` runs the real command."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from casino.games.errors import GameError
from casino.games.replay import replay_text
from tests.conftest import ROOT

BADEN = json.loads((ROOT / "tests/data/replay/baden_prison_up_and_down.json").read_text())["input"]
FRANCE = json.loads((ROOT / "tests/data/replay/france_halving_cut_card_refund.json").read_text())[
    "input"
]
DROP = object()


def doc(base: dict[str, Any] = BADEN, **changes: Any) -> str:
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


def overrides(base: dict[str, Any] = BADEN, **params: Any) -> str:
    return doc(base, reglement={"preset": "baden-1854", "overrides": params})


SEVENTH_KS = ["KS"] * 7
MANY = [f"{r}{s}" for _ in range(6) for s in "SHDC" for r in "A23456789TJQK"] + ["AS"]
PRISONER = {"stake": "p", "chance": "rouge", "held": 300, "level": 1}

CASES: list[tuple[str, str, str, str | None]] = [
    # (name, input text, code, where)
    # JSON itself: not JSON, a repeated key, a constant JSON does not have.
    ("not json", '{"game": "trente-et-quarante", "cards": [', "bad_json", "line 1 column 42"),
    (
        "repeated key in a stake",
        '{"game": "trente-et-quarante", "cards": [], "stakes": '
        '[{"id": "a", "coup": 1, "chance": "rouge", "amount": 1, "amount": 2}]}',
        "bad_json",
        "stakes[0].amount",
    ),
    ("repeated top-level key", '{"game": "x", "game": "y", "cards": []}', "bad_json", "game"),
    ("NaN", '{"game": "trente-et-quarante", "cards": [], "x": NaN}', "bad_json", None),
    ("not an object", "[1, 2]", "bad_input", None),
    # Top level: unknown fields first, then game, reglement, cards, prison, stakes.
    ("unknown before game", doc(colour="red", game="baccara"), "unknown_field", "colour"),
    ("game missing", doc(game=DROP), "bad_input", "game"),
    ("game unknown", doc(game="baccara"), "bad_input", "game"),
    ("game not a string", doc(game=1), "bad_input", "game"),
    # A document of game pharao is checked as Pharao's (tests/games/test_pharao_replay.py): the
    # sixain's talon repeats the QS at index 5, which one 52-card pack cannot.
    ("a pharao document is pharao's", doc(game="pharao"), "bad_pack", "cards[5]"),
    # A document of game alliance is Alliance's (tests/games/test_alliance_replay.py): its first
    # missing field in REPLAY.md's order is mark_value.
    (
        "an alliance document is alliance's",
        json.dumps({"game": "alliance", "players": [], "cards": [], "tricks": []}),
        "bad_input",
        "mark_value",
    ),
    ("game before reglement", doc(game="x", reglement="monaco"), "bad_input", "game"),
    (
        "reglement before cards",
        doc(reglement="monaco", cards__0="ZZ"),
        "bad_reglement",
        "reglement",
    ),
    ("cards before prison", doc(cards__0="ZZ", prison=[{}]), "bad_card", "cards[0]"),
    ("prison before stakes", doc(prison=[{}], stakes=7), "bad_input", "prison[0].stake"),
    ("cards missing", doc(cards=DROP), "bad_input", "cards"),
    ("cards not a list", doc(cards="KS KH"), "bad_input", "cards"),
    # Cards: codes (case-insensitive), then a seventh copy.
    ("bad code", doc(cards__17="ZZ"), "bad_card", "cards[17]"),
    ("1S", doc(cards__3="1S"), "bad_card", "cards[3]"),
    ("a number", doc(cards__0=7), "bad_card", "cards[0]"),
    ("seventh copy", doc(cards=SEVENTH_KS), "bad_pack", "cards[6]"),
    ("seventh copy lower case", doc(cards=["ks"] * 6 + ["KS"]), "bad_pack", "cards[6]"),
    ("codes before copies", doc(cards=[*SEVENTH_KS, "ZZ"]), "bad_card", "cards[7]"),
    ("313 cards", doc(cards=MANY, stakes=[]), "bad_pack", "cards[312]"),
    # Règlement: anything wrong inside it is bad_reglement.
    ("unknown preset", doc(reglement="monaco-1900"), "bad_reglement", "reglement"),
    ("reglement null", doc(reglement=None), "bad_reglement", "reglement"),
    (
        "unknown preset in object",
        doc(reglement={"preset": "monaco"}),
        "bad_reglement",
        "reglement.preset",
    ),
    (
        "unknown key in the object first",
        doc(reglement={"preset": "monaco", "extra": 1}),
        "bad_reglement",
        "reglement.extra",
    ),
    (
        "overrides not an object",
        doc(reglement={"overrides": [1]}),
        "bad_reglement",
        "reglement.overrides",
    ),
    (
        "unknown parameter",
        overrides(max_prison_levle=2),
        "bad_reglement",
        "reglement.overrides.max_prison_levle",
    ),
    (
        "unknown parameter first",
        overrides(burn=11, jackpot=1),
        "bad_reglement",
        "reglement.overrides.jackpot",
    ),
    (
        "parameters in RULES.md's order",
        overrides(burn=11, face_value=0),
        "bad_reglement",
        "reglement.overrides.face_value",
    ),
    (
        "single fields before cross-field",
        overrides(min_stake=100, max_stake=50, burn=11),
        "bad_reglement",
        "reglement.overrides.burn",
    ),
    (
        "max below min",
        overrides(min_stake=100, max_stake=50),
        "bad_reglement",
        "reglement.overrides.max_stake",
    ),
    (
        "ratio when both are set",
        overrides(min_stake=10, max_stake=100, max_stake_ratio=5),
        "bad_reglement",
        "reglement.overrides.max_stake",
    ),
    (
        "cut_card needs cut_card_from_end",
        overrides(end_rule="cut_card"),
        "bad_reglement",
        "reglement.overrides.cut_card_from_end",
    ),
    ("float", overrides(burn=1.0), "bad_reglement", "reglement.overrides.burn"),
    (
        "bool for integer",
        overrides(max_prison_level=True),
        "bad_reglement",
        "reglement.overrides.max_prison_level",
    ),
    ("integer for bool", overrides(insurance=1), "bad_reglement", "reglement.overrides.insurance"),
    ("face value 11", overrides(face_value=11), "bad_reglement", "reglement.overrides.face_value"),
    (
        "face value unknown figure",
        overrides(face_value={"X": 3}),
        "bad_reglement",
        "reglement.overrides.face_value.X",
    ),
    (
        "face value of one figure",
        overrides(face_value={"J": 0}),
        "bad_reglement",
        "reglement.overrides.face_value.J",
    ),
    (
        "old alliance name",
        overrides(alliance_values={"forced_lever": 2}),
        "bad_reglement",
        "reglement.overrides.alliance_values.forced_lever",
    ),
    (
        "old honour name",
        overrides(alliance_honours={"jack": 3}),
        "bad_reglement",
        "reglement.overrides.alliance_honours.jack",
    ),
    (
        "negative bonus",
        overrides(alliance_bonuses={"all": -1}),
        "bad_reglement",
        "reglement.overrides.alliance_bonuses.all",
    ),
    (
        "plie share above 1",
        overrides(pharao_plie_share="3/2"),
        "bad_reglement",
        "reglement.overrides.pharao_plie_share",
    ),
    (
        "plie share as a float",
        overrides(pharao_plie_share=0.5),
        "bad_reglement",
        "reglement.overrides.pharao_plie_share",
    ),
    (
        "mark riding does not fit",
        overrides(
            pharao_marks=[
                {"mark": "appe", "from": "simple", "move": "appe", "riding": 2, "protected": 1}
            ]
        ),
        "bad_reglement",
        "reglement.overrides.pharao_marks[0].riding",
    ),
    (
        "mark from a later row",
        overrides(
            pharao_marks=[
                {"mark": "6", "from": "paroli", "move": "appe", "riding": 3, "protected": 1},
                {"mark": "paroli", "from": "simple", "move": "paroli", "riding": 2, "protected": 0},
            ]
        ),
        "bad_reglement",
        "reglement.overrides.pharao_marks[0].from",
    ),
    (
        "mark with a wrong gain",
        overrides(
            pharao_marks=[
                {
                    "mark": "appe",
                    "from": "simple",
                    "move": "appe",
                    "riding": 1,
                    "protected": 1,
                    "gain": 3,
                }
            ]
        ),
        "bad_reglement",
        "reglement.overrides.pharao_marks[0].gain",
    ),
    (
        "mark named simple",
        overrides(
            pharao_marks=[
                {"mark": "simple", "from": "simple", "move": "appe", "riding": 1, "protected": 1}
            ]
        ),
        "bad_reglement",
        "reglement.overrides.pharao_marks[0].mark",
    ),
    # Prison carried in.
    ("prison not a list", doc(prison={}), "bad_input", "prison"),
    (
        "prisoner unknown key",
        doc(prison=[{**PRISONER, "extra": 1}]),
        "unknown_field",
        "prison[0].extra",
    ),
    (
        "prisoner held missing",
        doc(prison=[{"stake": "p", "chance": "rouge", "level": 1}]),
        "bad_input",
        "prison[0].held",
    ),
    (
        "prisoner chance",
        doc(prison=[{**PRISONER, "chance": "vert"}]),
        "bad_input",
        "prison[0].chance",
    ),
    ("prisoner held 0", doc(prison=[{**PRISONER, "held": 0}]), "bad_input", "prison[0].held"),
    (
        "prisoner held float",
        doc(prison=[{**PRISONER, "held": 300.0}]),
        "bad_input",
        "prison[0].held",
    ),
    ("prisoner level 0", doc(prison=[{**PRISONER, "level": 0}]), "bad_input", "prison[0].level"),
    ("prisoner beyond max", doc(prison=[{**PRISONER, "level": 4}]), "bad_input", "prison[0].level"),
    (
        "prisoner level 2 under halve",
        doc(FRANCE, prison=[{**PRISONER, "level": 2}]),
        "bad_input",
        "prison[0].level",
    ),
    ("prisoner id twice", doc(prison=[PRISONER, PRISONER]), "bad_input", "prison[1].stake"),
    (
        "stake id of a prisoner",
        doc(prison=[{**PRISONER, "stake": "a"}]),
        "bad_input",
        "stakes[0].id",
    ),
    # Stakes: unknown keys first, then id, coup, chance, amount, insured, on_refait.
    ("stakes not a list", doc(stakes=7), "bad_input", "stakes"),
    ("stake unknown key", doc(stakes__0__chanse="rouge"), "unknown_field", "stakes[0].chanse"),
    (
        "unknown key before missing",
        doc(stakes__0__chanse="rouge", stakes__0__id=DROP),
        "unknown_field",
        "stakes[0].chanse",
    ),
    ("stake id missing", doc(stakes__0__id=DROP), "bad_input", "stakes[0].id"),
    ("stake id empty", doc(stakes__0__id=""), "bad_input", "stakes[0].id"),
    ("stake id twice", doc(stakes__2__id="a"), "bad_input", "stakes[2].id"),
    ("coup 0", doc(stakes__2__coup=0), "bad_input", "stakes[2].coup"),
    ("coup never reached", doc(stakes__2__coup=5), "bad_input", "stakes[2].coup"),
    ("coup float", doc(stakes__2__coup=3.0), "bad_input", "stakes[2].coup"),
    (
        "coup before chance",
        doc(stakes__2__coup=9, stakes__2__chance="vert"),
        "bad_input",
        "stakes[2].coup",
    ),
    ("chance", doc(stakes__2__chance="vert"), "bad_input", "stakes[2].chance"),
    (
        "chance before amount",
        doc(stakes__2__chance="vert", stakes__2__amount=0),
        "bad_input",
        "stakes[2].chance",
    ),
    ("amount missing", doc(stakes__0__amount=DROP), "bad_input", "stakes[0].amount"),
    ("amount negative", doc(stakes__1__amount=-5), "bad_input", "stakes[1].amount"),
    ("amount 100.0", doc(stakes__1__amount=100.0), "bad_input", "stakes[1].amount"),
    ("amount string", doc(stakes__1__amount="500"), "bad_input", "stakes[1].amount"),
    ("amount bool", doc(stakes__1__amount=True), "bad_input", "stakes[1].amount"),
    ("insured not bool", doc(stakes__0__insured="yes"), "bad_input", "stakes[0].insured"),
    ("insured without insurance", doc(stakes__0__insured=True), "bad_stake", "stakes[0].insured"),
    (
        "insured below insurance_min_stake",
        doc(FRANCE, stakes__2__amount=999),
        "bad_stake",
        "stakes[2].insured",
    ),
    ("on_refait", doc(stakes__0__on_refait="pray"), "bad_input", "stakes[0].on_refait"),
    ("on_refait move", doc(stakes__0__on_refait="move:vert"), "bad_input", "stakes[0].on_refait"),
    (
        "below min_stake",
        doc(reglement={"overrides": {"min_stake": 200}}),
        "bad_stake",
        "stakes[4].amount",
    ),
    (
        "above max_stake",
        doc(reglement={"overrides": {"max_stake": 999}}),
        "bad_stake",
        "stakes[0].amount",
    ),
    (
        "limits before insurance",
        doc(
            FRANCE,
            reglement={"preset": "france-2007", "overrides": {"min_stake": 1, "max_stake": 500}},
            stakes=[{"id": "z", "coup": 1, "chance": "rouge", "amount": 600, "insured": True}],
        ),
        "bad_stake",
        "stakes[0].amount",
    ),
]


@pytest.mark.parametrize(
    ("text", "code", "where"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_input_is_refused_with_its_code_at_the_first_fault(text, code, where):
    with pytest.raises(GameError) as error:
        replay_text(text)
    assert (error.value.code, error.value.where) == (code, where), error.value.message
    assert error.value.message


def test_the_documents_of_the_golden_files_are_accepted_as_text():
    """The refusals above are not refusing everything: the bases themselves replay."""
    assert replay_text(json.dumps(BADEN))["end"]["reason"] == "count"
    assert replay_text(json.dumps(FRANCE))["end"]["reason"] == "cut_card"
