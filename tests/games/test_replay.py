"""The replay command: golden files built by hand from RULES.md, and the error contract."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT

GOLDEN = sorted((ROOT / "tests" / "data" / "replay").glob("*.json"))
ZEROS = {"paid": 0, "returned": 0, "to_bank": 0, "premium": 0, "held": 0, "level": 0}


def run(
    command: str,
    document: Any = None,
    *args: str,
    raw: str | None = None,
) -> tuple[int, Any, str]:
    """The real command, as a regulator runs it: JSON on stdin, JSON on stdout."""
    text = raw if raw is not None else json.dumps(document)
    done = subprocess.run(
        [sys.executable, "-m", "casino.games", command, *args],
        input=text,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    return done.returncode, json.loads(done.stdout), done.stderr


def with_zeros(expected: dict[str, Any]) -> dict[str, Any]:
    """Golden files list only the non-zero amounts of a settlement; the output has them all."""
    full = copy.deepcopy(expected)
    for coup in full["coups"]:
        coup["settlements"] = [{**ZEROS, **s} for s in coup["settlements"]]
    if "settlements" in full["end"]:
        full["end"]["settlements"] = [{**ZEROS, **s} for s in full["end"]["settlements"]]
    return full


def test_every_preset_has_a_golden_file():
    presets = set()
    for path in GOLDEN:
        spec = json.loads(path.read_text())["input"].get("reglement", "baden-1854")
        presets.add(spec if isinstance(spec, str) else spec.get("preset", "baden-1854"))
    assert presets == {"baden-1854", "pierer-1857", "trente-et-quarante-modern", "france-2007"}


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_golden_replays(path: Path):
    golden = json.loads(path.read_text())
    status, output, stderr = run("replay", golden["input"])
    assert status == 0, output
    assert stderr == ""
    assert output == with_zeros(golden["expected"])


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_every_stake_is_accounted_for_in_the_golden_files(path: Path):
    golden = json.loads(path.read_text())
    _, output, _ = run("replay", golden["input"])
    settled: dict[str, int] = {}
    for coup in output["coups"]:
        for s in coup["settlements"]:
            settled[s["stake"]] = settled.get(s["stake"], 0) + s["returned"] + s["to_bank"]
    for s in output["end"].get("settlements", []):
        settled[s["stake"]] = settled.get(s["stake"], 0) + s["returned"] + s["to_bank"]
    held = {p["stake"]: p["held"] for p in output["end"]["prison"]}
    # A prisoner carried in brings what it held; a stake, its amount.
    amounts = {p["stake"]: p["held"] for p in golden["input"].get("prison", [])}
    amounts.update({s["id"]: s["amount"] for s in golden["input"].get("stakes", [])})
    for stake, amount in amounts.items():
        assert settled.get(stake, 0) + held.get(stake, 0) == amount, stake


BASE = json.loads((ROOT / "tests/data/replay/baden_prison_up_and_down.json").read_text())["input"]


def broken(**changes: Any) -> dict[str, Any]:
    document = copy.deepcopy(BASE)
    for path, value in changes.items():
        target = document
        *parents, last = path.split("__")
        for part in parents:
            target = target[int(part)] if part.isdigit() else target[part]
        if value is KeyError:
            del target[int(last) if last.isdigit() else last]
        else:
            target[int(last) if last.isdigit() else last] = value
    return document


@pytest.mark.parametrize(
    ("document", "code", "where"),
    [
        (broken(cards__17="ZZ"), "bad_card", "cards[17]"),
        (broken(cards__3="1S"), "bad_card", "cards[3]"),
        (broken(cards__0=7), "bad_card", "cards[0]"),
        (broken(cards=["KS"] * 7), "bad_pack", "cards[6]"),
        (broken(colour="red"), "unknown_field", "colour"),
        (broken(stakes__0__chanse="rouge"), "unknown_field", "stakes[0].chanse"),
        (broken(stakes__1__amount=-5), "bad_input", "stakes[1].amount"),
        (broken(stakes__1__amount=12.5), "bad_input", "stakes[1].amount"),
        (broken(stakes__1__amount="500"), "bad_input", "stakes[1].amount"),
        (broken(stakes__1__amount=True), "bad_input", "stakes[1].amount"),
        (broken(stakes__2__coup=0), "bad_input", "stakes[2].coup"),
        (broken(stakes__2__coup=12), "bad_input", "stakes[2].coup"),
        (broken(stakes__2__chance="vert"), "bad_input", "stakes[2].chance"),
        (broken(stakes__2__id="a"), "bad_input", "stakes[2].id"),
        (broken(stakes__0__insured=True), "bad_stake", "stakes[0].insured"),
        (broken(stakes__0__insured="yes"), "bad_input", "stakes[0].insured"),
        (broken(stakes__0__on_refait="pray"), "bad_input", "stakes[0].on_refait"),
        (broken(stakes__0__amount=KeyError), "bad_input", "stakes[0].amount"),
        (broken(reglement="monaco-1900"), "bad_reglement", "reglement"),
        (
            broken(reglement={"preset": "baden-1854", "overrides": {"max_prison_levle": 2}}),
            "bad_reglement",
            "reglement.overrides.max_prison_levle",
        ),
        (
            broken(reglement={"preset": "baden-1854", "overrides": {"burn": 11}}),
            "bad_reglement",
            "reglement.overrides.burn",
        ),
        (
            broken(reglement={"preset": "baden-1854", "overrides": {"min_stake": 200}}),
            "bad_stake",
            "stakes[4].amount",
        ),
        (broken(game="baccara"), "bad_input", "game"),
        (broken(cards="KS KH"), "bad_input", "cards"),
        ([1, 2], "bad_input", None),
    ],
)
def test_bad_input_is_a_json_error_naming_the_field(document, code, where):
    status, output, stderr = run("replay", document)
    assert status == 2
    assert stderr == ""
    assert output["error"]["code"] == code, output
    assert output["error"]["where"] == where
    assert output["error"]["message"]


def test_malformed_json_is_a_json_error_too():
    status, output, stderr = run("replay", raw='{"game": "trente-et-quarante", "cards": [')
    assert (status, output["error"]["code"]) == (2, "bad_json")
    assert "line 1" in output["error"]["where"]
    assert "Traceback" not in stderr


def test_ten_is_accepted_for_t_and_written_as_t():
    golden = json.loads(
        (ROOT / "tests/data/replay/france_halving_cut_card_refund.json").read_text()
    )
    spelled = copy.deepcopy(golden["input"])
    spelled["cards"] = [("10" + c[1]) if c[0] == "T" else c for c in spelled["cards"]]
    assert "10H" in spelled["cards"]
    _, output, _ = run("replay", spelled)
    assert output == with_zeros(golden["expected"])
