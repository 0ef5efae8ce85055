from __future__ import annotations

import doctest
from fractions import Fraction

import pytest

import casino.games.reglement
from casino.games.errors import InvalidReglement
from casino.games.reglement import PRESETS, Reglement, reglement


def test_examples_in_the_module_hold():
    assert doctest.testmod(casino.games.reglement).failed == 0


def test_baden_1854_is_the_defaults_of_rules_md():
    r = reglement("baden-1854")
    assert (r.face_values, r.burn, r.player_may_shuffle, r.end_min_cards, r.end_min_points) == (
        (10, 10, 10),
        0,
        False,
        8,
        62,
    )
    assert (r.refait_mode, r.refait_default, r.max_prison_level, r.refait_void_on_last_coup) == (
        "prison",
        "prison",
        3,
        True,
    )
    assert (r.prison_repeat, r.prison_at_end, r.end_rule, r.cut_card_from_end) == (
        "level",
        "carry",
        "count",
        None,
    )
    assert (r.insurance, r.insurance_unit, r.insurance_premium, r.insurance_min_stake) == (
        False,
        500,
        5,
        0,
    )
    assert (r.pharao_last_card, r.pharao_plie_share, r.cercle_fee) == ("dead", Fraction(1, 2), 0)
    assert r.min_stake is None
    assert r.max_stake is None
    assert r.max_stake_ratio is None


def test_presets_are_exactly_the_parameters_of_rules_md():
    assert reglement("pierer-1857") == Reglement(
        name="pierer-1857", end_rule="exhausted", refait_void_on_last_coup=False
    )
    assert reglement("trente-et-quarante-modern") == Reglement(
        name="trente-et-quarante-modern", refait_mode="choice", insurance=True
    )
    assert reglement("france-2007") == Reglement(
        name="france-2007",
        refait_mode="choice",
        prison_repeat="halve",
        prison_at_end="refund_half",
        end_rule="cut_card",
        cut_card_from_end=5,
        refait_void_on_last_coup=False,
        insurance=True,
        insurance_unit=100,
        insurance_premium=1,
        insurance_min_stake=1000,
        max_stake_ratio=1000,
    )
    assert set(PRESETS) == {"baden-1854", "pierer-1857", "trente-et-quarante-modern", "france-2007"}


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_preset_round_trips_through_its_text_form(preset):
    r = reglement(preset)
    assert Reglement.from_json(r.to_json()) == r


@pytest.mark.parametrize(
    ("overrides", "where", "says"),
    [
        ({"burn": 11}, "burn", "outside 0..10"),
        ({"burn": -1}, "burn", "outside 0..10"),
        ({"end_min_cards": 7}, "end_min_cards", ">= 8"),
        ({"end_min_points": 61}, "end_min_points", ">= 62"),
        ({"max_prison_level": 11}, "max_prison_level", "outside 1..10"),
        ({"refait_mode": "pray"}, "refait_mode", "not one of"),
        ({"refait_default": "choice"}, "refait_default", "not one of"),
        ({"insurance": "yes"}, "insurance", "not true or false"),
        ({"insurance_unit": 0}, "insurance_unit", ">= 1"),
        ({"face_value": 11}, "face_value", "outside 1..10"),
        ({"face_value": {"X": 3}}, "face_value.X", "unknown entry"),
        ({"min_stake": 100, "max_stake": 50}, "max_stake", "below min_stake"),
        ({"min_stake": 10, "max_stake": 20_000}, "max_stake", "exceeds max_stake_ratio"),
        (
            {"end_rule": "cut_card", "cut_card_from_end": None},
            "cut_card_from_end",
            "needs a position",
        ),
        ({"cut_card_from_end": 53}, "cut_card_from_end", "outside 1..52"),
        ({"pharao_plie_share": "3/2"}, "pharao_plie_share", "between 0 and 1"),
        ({"alliance_values": {"grand": 2}}, "alliance_values.grand", "unknown entry"),
        ({"jackpot": 1}, "jackpot", "unknown règlement parameter"),
        ({"burn": 1.5}, "burn", "not an integer"),
    ],
)
def test_overrides_are_validated_by_name(overrides, where, says):
    with pytest.raises(InvalidReglement, match=says) as error:
        reglement({"preset": "france-2007", "overrides": overrides})
    assert error.value.where == f"reglement.overrides.{where}"


def test_an_unknown_preset_is_refused():
    with pytest.raises(InvalidReglement, match="unknown preset 'monaco'"):
        reglement("monaco")
