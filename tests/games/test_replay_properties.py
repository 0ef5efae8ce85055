"""Properties of the replay and the règlement over random inputs (hypothesis, bounded to seconds)."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from casino.games.cards import SIXAIN, Card
from casino.games.reglement import PRESETS, Reglement, reglement
from casino.games.replay import ReplayError, _Accepts, _well_formed_stake, replay
from casino.games.replay import _stake as _field_by_field
from casino.games.trente_et_quarante import coups_reached
from tests.games.test_pharao_properties import marks_tables

CHANCES = ("rouge", "noir", "couleur", "inverse")
small = st.integers(min_value=0, max_value=50)

# Valid values of every parameter of RULES.md (cross-field rules respected by construction).
marks_rows = st.sampled_from(
    [
        [],
        [{"mark": "appe", "from": "simple", "move": "appe", "riding": 1, "protected": 1}],
        [
            {"mark": "paroli", "from": "simple", "move": "paroli", "riding": 2, "protected": 0},
            {
                "mark": "six",
                "from": "paroli",
                "move": "appe",
                "riding": 3,
                "protected": 1,
                "gain": 6,
            },
        ],
    ]
)
PARAMETER_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "face_value": st.one_of(
        st.integers(min_value=1, max_value=10),
        st.dictionaries(st.sampled_from("JQK"), st.integers(min_value=1, max_value=10)),
    ),
    "burn": st.integers(min_value=0, max_value=10),
    "player_may_shuffle": st.booleans(),
    "end_min_cards": st.integers(min_value=8, max_value=40),
    "end_min_points": st.integers(min_value=62, max_value=200),
    "refait_mode": st.sampled_from(["prison", "half", "choice"]),
    "refait_default": st.sampled_from(["prison", "half"]),
    "max_prison_level": st.integers(min_value=1, max_value=10),
    "refait_void_on_last_coup": st.booleans(),
    "prison_repeat": st.sampled_from(["level", "halve"]),
    "prison_at_end": st.sampled_from(["carry", "refund_half"]),
    "end_rule": st.sampled_from(["count", "exhausted"]),
    "cut_card_from_end": st.integers(min_value=1, max_value=52),
    "insurance_min_stake": st.integers(min_value=0, max_value=2000),
    "no_new_taille_before_close": small,
    "insurance": st.booleans(),
    "insurance_unit": st.integers(min_value=1, max_value=1000),
    "insurance_premium": small,
    "pharao_last_card": st.sampled_from(["dead", "bank"]),
    "pharao_plie_share": st.sampled_from(["0", "1", "1/2", "1/3", "2/4", "3/7"]),
    "pharao_marks": st.one_of(marks_rows, marks_tables()),
    "alliance_values": st.dictionaries(
        st.sampled_from(["alliance", "lever_forced", "lever", "solo"]), small
    ),
    "alliance_honours": st.dictionaries(st.sampled_from(["fahne", "J", "Q", "K"]), small),
    "alliance_bonuses": st.dictionaries(
        st.sampled_from(["first_six", "all", "neutral", "both_lose"]), small
    ),
    "cercle_fee": small,
}


@st.composite
def overrides(draw: st.DrawFn) -> dict[str, Any]:
    names = draw(st.sets(st.sampled_from(sorted(PARAMETER_VALUES))))
    chosen = {name: draw(PARAMETER_VALUES[name]) for name in names}
    if draw(st.booleans()):
        low = draw(st.integers(min_value=1, max_value=500))
        chosen["min_stake"] = low
        chosen["max_stake"] = draw(st.integers(min_value=low, max_value=low * 1000))
        chosen["max_stake_ratio"] = 1000
    if draw(st.booleans()):
        chosen["end_rule"] = "cut_card"
        chosen["cut_card_from_end"] = draw(st.integers(min_value=1, max_value=52))
    return chosen


@settings(max_examples=200, deadline=None)
@given(preset=st.sampled_from(sorted(PRESETS)), changes=overrides())
def test_every_parameter_round_trips_through_the_text_form(preset, changes):
    r = reglement({"preset": preset, "overrides": changes})
    again = Reglement.from_json(r.to_json())
    assert again == r
    assert again.to_json() == r.to_json()


def _stake(draw: st.DrawFn, rules: Reglement, index: int, coup: int) -> dict[str, Any]:
    low = rules.min_stake or 1
    high = rules.max_stake or 5000
    stake: dict[str, Any] = {
        "id": f"s{index}",
        "coup": coup,
        "chance": draw(st.sampled_from(CHANCES)),
        "amount": draw(st.integers(min_value=low, max_value=high)),
    }
    if rules.insurance and stake["amount"] >= rules.insurance_min_stake and draw(st.booleans()):
        stake["insured"] = True
    if draw(st.booleans()):
        stake["on_refait"] = draw(
            st.sampled_from(["prison", "half", *(f"move:{c}" for c in CHANCES)])
        )
    return stake


@st.composite
def documents(draw: st.DrawFn) -> dict[str, Any]:
    preset = draw(st.sampled_from(sorted(PRESETS)))
    changes = draw(overrides())
    for name in ("end_min_cards", "end_min_points"):  # keep talons long enough to play
        changes.pop(name, None)
    spec = {"preset": preset, "overrides": changes}
    rules = reglement(spec)
    rng = random.Random(draw(st.integers(min_value=0, max_value=2**32 - 1)))
    cards = list(SIXAIN.cards)
    rng.shuffle(cards)
    # A refait comes about once in 45 coups: the talon may begin with some (T T T A twice, any
    # suits), so that prisoners meet further refaits (levels, halving, overflow).
    refaits: list[Card] = []
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        for rank in "TTTATTTA":
            refaits.append(next(c for c in cards if c.rank.value == rank))
            cards.remove(refaits[-1])
    cards = (refaits + cards)[: draw(st.sampled_from([0, 9, 40, 100, 200, 312]))]
    top_level = 1 if rules.prison_repeat == "halve" else rules.max_prison_level
    prison = [
        {
            "stake": f"p{i}",
            "chance": draw(st.sampled_from(CHANCES)),
            "held": draw(st.integers(min_value=1, max_value=3000)),
            "level": draw(st.integers(min_value=1, max_value=top_level)),
        }
        for i in range(draw(st.integers(min_value=0, max_value=3)))
    ]
    reached = coups_reached(cards, rules)
    stakes = []
    if reached:
        for index in range(draw(st.integers(min_value=0, max_value=30))):
            coup = draw(st.integers(min_value=1, max_value=reached))
            stakes.append(_stake(draw, rules, index, coup))
    return {
        "game": "trente-et-quarante",
        "reglement": spec,
        "cards": [str(c) for c in cards],
        "prison": prison,
        "stakes": stakes,
    }


@settings(max_examples=150, deadline=None)
@given(document=documents())
def test_a_replays_money_always_balances(document):
    output = replay(document)
    rules = reglement(document["reglement"])
    # What each stake has at stake before its next settlement: its amount, or what it held.
    standing = {p["stake"]: p["held"] for p in document["prison"]}
    standing.update({s["id"]: s["amount"] for s in document["stakes"]})
    placed = {s["id"]: s for s in document["stakes"]}
    premiums = dict.fromkeys(standing, 0)
    void_coups = {c["number"] for c in output["coups"] if c["void"]}
    for coup in output["coups"]:
        for s in coup["settlements"]:
            before = standing.pop(s["stake"])
            assert s["returned"] + s["to_bank"] + s["held"] == before, (coup["number"], s)
            assert s["paid"] in (0, before)
            assert (s["paid"] > 0) == (s["outcome"] == "won")
            if s["held"]:
                standing[s["stake"]] = s["held"]
            premiums[s["stake"]] += s["premium"]
            if s["premium"]:
                assert placed[s["stake"]]["coup"] == coup["number"]
        # Every stake placed on this coup and every prisoner is settled exactly once in it.
        assert len({s["stake"] for s in coup["settlements"]}) == len(coup["settlements"])
    for s in output["end"]["settlements"]:
        assert s["returned"] + s["to_bank"] == standing.pop(s["stake"])
    assert {p["stake"]: p["held"] for p in output["end"]["prison"]} == standing
    for stake_id, stake in placed.items():
        expected = 0
        if stake.get("insured") and stake["coup"] not in void_coups:
            unit, premium = rules.insurance_unit, rules.insurance_premium
            expected = premium * -(-stake["amount"] // unit)
        assert premiums[stake_id] == expected, stake_id


# Values a stake's field may hold in a document: the right ones and the wrong ones, of every type.
STAKE_VALUES = {
    "id": st.sampled_from(["s0", "s1", "s2", "s3"]),
    "coup": st.integers(min_value=1, max_value=3),
    "chance": st.sampled_from(CHANCES),
    "amount": st.sampled_from([1, 99, 100, 2999, 3000, 5000, 5001, 10**9]),
    "insured": st.booleans(),
    "on_refait": st.sampled_from(["prison", "half", *(f"move:{c}" for c in CHANCES)]),
}
WRONG_VALUES = {
    "id": st.sampled_from(["", 0, None, ["s1"]]),
    "coup": st.sampled_from([0, 4, 1.0, True, "1"]),
    "chance": st.sampled_from(["Rouge", "", None, 1, ["rouge"]]),
    "amount": st.sampled_from([0, -5, 100.0, True, "100", None]),
    "insured": st.sampled_from([None, 1, 0, "true"]),
    "on_refait": st.sampled_from([None, "", "move:", "move:x", "Prison", 1]),
}


@st.composite
def stake_entries(draw: st.DrawFn) -> Any:
    """A stake entry as a document may hold it: well formed, or with a fault or two (a field
    missing or wrong, an unknown key), or not an object at all."""
    if draw(st.integers(min_value=0, max_value=9)) == 0:
        return draw(st.sampled_from([None, "s1", [], ["id", "s1"]]))
    entry = {key: draw(right) for key, right in STAKE_VALUES.items() if draw(st.booleans())}
    entry.update(id=draw(STAKE_VALUES["id"]), coup=draw(STAKE_VALUES["coup"]))
    entry.update(chance=draw(STAKE_VALUES["chance"]), amount=draw(STAKE_VALUES["amount"]))
    for fault in draw(st.lists(st.sampled_from([*STAKE_VALUES, "note"]), max_size=2)):
        if fault == "note":
            entry["note"] = 1
        elif draw(st.booleans()):
            entry.pop(fault, None)
        else:
            entry[fault] = draw(WRONG_VALUES[fault])
    return entry


@settings(max_examples=1000, deadline=None)
@given(
    entry=stake_entries(),
    spec=st.sampled_from(
        [
            "baden-1854",
            "trente-et-quarante-modern",
            {"overrides": {"min_stake": 100, "max_stake": 5000, "insurance": True}},
            {"overrides": {"insurance": True, "insurance_min_stake": 3000}},
        ]
    ),
    taken=st.sets(st.sampled_from(["s0", "s1", "s2"])),
)
def test_a_stake_read_at_once_is_the_stake_read_field_by_field(entry, spec, taken):
    rules = reglement(spec)
    at_once = _well_formed_stake(entry, _Accepts.of(rules), 3, taken)
    try:
        by_field = _field_by_field(entry, "stakes[0]", rules, 3, taken)
    except ReplayError:
        assert at_once is None
    else:
        # Every entry a JSON document can hold that the fields accept is read at once.
        assert at_once == by_field


@settings(max_examples=150, deadline=None)
@given(document=documents(), coup_by_coup=st.booleans())
def test_settlements_are_listed_in_the_order_the_stakes_are_given(document, coup_by_coup):
    if coup_by_coup:  # as recorded talons list them
        document["stakes"].sort(key=lambda s: s["coup"])
    given = [p["stake"] for p in document["prison"]] + [s["id"] for s in document["stakes"]]
    rank = {stake: index for index, stake in enumerate(given)}
    output = replay(document)
    listed = [coup["settlements"] for coup in output["coups"]]
    listed += [output["end"]["settlements"], output["end"]["prison"]]
    for records in listed:
        ranks = [rank[record["stake"]] for record in records]
        assert ranks == sorted(ranks)
