"""RULES.md §1, rule by rule."""

from __future__ import annotations

import doctest

import pytest

import casino.games.money
import casino.games.trente_et_quarante
from casino.games.cards import card
from casino.games.errors import IllegalDeal, StakeRefused
from casino.games.money import bank_half
from casino.games.reglement import reglement
from casino.games.trente_et_quarante import (
    Chance,
    Couleur,
    CoupDeal,
    Outcome,
    Prisoner,
    Result,
    Row,
    Stake,
    count_rule_ends,
    decide,
    settle,
)

BADEN = reglement("baden-1854")
MODERN = reglement("trente-et-quarante-modern")
FRANCE = reglement("france-2007")


def row(codes: str) -> Row:
    cards = tuple(card(c) for c in codes.split())
    return Row(cards, sum(min(10, "A23456789TJQK".index(c.rank.value) + 1) for c in cards))


def test_examples_in_the_modules_hold():
    assert doctest.testmod(casino.games.trente_et_quarante).failed == 0
    assert doctest.testmod(casino.games.money).failed == 0


# The worked examples of 004_f4f0551e686f500a.txt (the modern article).
@pytest.mark.parametrize(
    ("noir", "rouge", "result", "couleur"),
    [
        ("TH KS 9D 9C", "QS AC TD KH", Result.ROUGE, Couleur.COULEUR),  # 38 / 31, first card red
        ("TS KH 9D 9C", "QS AC TD KH", Result.ROUGE, Couleur.INVERSE),  # 38 / 31, first card black
        ("TS KH 6D 9C", "QS 6C TD KH", Result.NOIR, Couleur.COULEUR),  # 35 / 36, first card black
        ("TH KS 6D 9C", "QS 6C TD KH", Result.NOIR, Couleur.INVERSE),  # 35 / 36, first card red
    ],
)
def test_the_worked_examples_of_the_modern_article(noir, rouge, result, couleur):
    outcome = decide(row(noir), row(rouge))
    assert (outcome.result, outcome.couleur) == (result, couleur)


# Every row of the announcement table of RULES.md 1.2.8.
@pytest.mark.parametrize(
    ("noir", "rouge", "phrase", "words"),
    [
        ("TH KS 9D 9C", "QS AC TD KH", "rouge gagne et couleur", ("huit", "un")),
        ("TS KH 9D 9C", "QS AC TD KH", "rouge gagne, couleur perd", ("huit", "un")),
        ("TH KS 6D 9C", "QS 6C TD KH", "rouge perd et couleur", ("cinq", "six")),
        ("TS KH 6D 9C", "QS 6C TD KH", "rouge perd, couleur gagne", ("cinq", "six")),
        ("TS KH KD KC", "QS QC TD TH", "après", ("quarante", "quarante")),
        ("TS KH 9D 5C", "QS 8C TD 6H", "après", ("quatre", "quatre")),
        ("TS KH TD AC", "QS AH TD KH", "refait", ("un", "un")),
    ],
)
def test_every_announcement_of_the_table(noir, rouge, phrase, words):
    announcement = decide(row(noir), row(rouge)).announcement
    assert announcement.result == phrase
    assert (announcement.noir, announcement.rouge) == words


def test_a_terminal_deals_card_by_card_and_is_told_what_comes_next():
    deal = CoupDeal(BADEN)
    assert deal.next_row == "noir"
    laid = [deal.lay(card(c)) for c in ("KS", "9H", "QD")]
    assert [(x.row, x.row_total, x.row_closed) for x in laid] == [
        ("noir", 10, False),
        ("noir", 19, False),
        ("noir", 29, False),
    ]
    fourth = deal.lay(card("2C"))
    assert (fourth.row_total, fourth.row_closed, fourth.next_row) == (31, True, "rouge")
    for c in ("KH", "KD", "KC"):
        deal.lay(card(c))
    last = deal.lay(card("AS"))
    assert (last.row, last.row_total, last.coup_complete, last.next_row) == (
        "rouge",
        31,
        True,
        None,
    )
    assert deal.outcome().result is Result.REFAIT
    with pytest.raises(IllegalDeal, match="both rows are closed"):
        deal.lay(card("5S"))


def test_a_row_closes_as_soon_as_it_exceeds_thirty_so_it_never_exceeds_forty():
    deal = CoupDeal.from_codes(["9S", "9H", "9D", "KC"])  # 27 then a ten: 37
    assert deal.noir.total == 37
    assert deal.next_row == "rouge"


def stake(chance: Chance, amount: int = 1000, **kw) -> Stake:
    return Stake(kw.pop("id", "s"), chance, amount, **kw)


REFAIT = decide(row("TS KH TD AC"), row("QS AH TD KH"))
ROUGE_COULEUR = decide(row("TH KS 9D 9C"), row("QS AC TD KH"))
APRES = decide(row("TS KH KD KC"), row("QS QC TD TH"))


def test_winners_are_paid_even_money_and_losers_collected():
    settled = settle(
        ROUGE_COULEUR,
        void=False,
        reglement=BADEN,
        prison=(),
        stakes=[
            stake(Chance.ROUGE, id="r"),
            stake(Chance.NOIR, id="n"),
            stake(Chance.COULEUR, id="c"),
            stake(Chance.INVERSE, id="i"),
        ],
    )
    assert [(s.outcome, s.paid, s.returned, s.to_bank) for s in settled.settlements] == [
        (Outcome.WON, 1000, 1000, 0),
        (Outcome.LOST, 0, 0, 1000),
        (Outcome.WON, 1000, 1000, 0),
        (Outcome.LOST, 0, 0, 1000),
    ]


def test_apres_decides_nothing():
    settled = settle(
        APRES,
        void=False,
        reglement=BADEN,
        prison=(),
        stakes=[stake(Chance.ROUGE), stake(Chance.INVERSE, id="i")],
    )
    assert {s.outcome for s in settled.settlements} == {Outcome.PUSH}


@pytest.mark.parametrize(
    ("rules", "on_refait", "outcome", "returned", "to_bank", "held"),
    [
        (BADEN, None, Outcome.IMPRISONED, 0, 0, 1001),
        (
            reglement({"preset": "baden-1854", "overrides": {"refait_mode": "half"}}),
            None,
            Outcome.HALF_LOST,
            501,
            500,
            0,
        ),
        (MODERN, "half", Outcome.HALF_LOST, 501, 500, 0),
        (MODERN, "prison", Outcome.IMPRISONED, 0, 0, 1001),
        (MODERN, None, Outcome.IMPRISONED, 0, 0, 1001),
        (
            reglement(
                {"preset": "trente-et-quarante-modern", "overrides": {"refait_default": "half"}}
            ),
            None,
            Outcome.HALF_LOST,
            501,
            500,
            0,
        ),
        (BADEN, "half", Outcome.IMPRISONED, 0, 0, 1001),  # a choice matters only under choice
    ],
)
def test_the_three_refait_modes(rules, on_refait, outcome, returned, to_bank, held):
    settled = settle(
        REFAIT,
        void=False,
        reglement=rules,
        prison=(),
        stakes=[stake(Chance.NOIR, 1001, on_refait=on_refait)],
    )
    (s,) = settled.settlements
    assert (s.outcome, s.returned, s.to_bank, s.held) == (outcome, returned, to_bank, held)
    assert len(settled.prison) == (1 if held else 0)


def test_a_stake_moved_at_the_refait_is_imprisoned_on_its_new_chance():
    settled = settle(
        REFAIT,
        void=False,
        reglement=MODERN,
        prison=(),
        stakes=[stake(Chance.NOIR, on_refait=("move", Chance.INVERSE))],
    )
    assert settled.prison == (Prisoner("s", Chance.INVERSE, 1000, 1),)


@pytest.mark.parametrize(
    ("coup", "chance", "before", "outcome", "after"),
    [
        (ROUGE_COULEUR, Chance.ROUGE, 1, Outcome.FREED, None),
        (ROUGE_COULEUR, Chance.ROUGE, 2, Outcome.STILL_IMPRISONED, 1),
        (ROUGE_COULEUR, Chance.NOIR, 2, Outcome.PRISON_LOST, None),
        (APRES, Chance.ROUGE, 2, Outcome.STILL_IMPRISONED, 2),
        (REFAIT, Chance.ROUGE, 2, Outcome.STILL_IMPRISONED, 3),
        (REFAIT, Chance.ROUGE, 3, Outcome.PRISON_LOST, None),
    ],
)
def test_prison_levels_move_up_and_down(coup, chance, before, outcome, after):
    settled = settle(
        coup, void=False, reglement=BADEN, stakes=(), prison=[Prisoner("p", chance, 800, before)]
    )
    (s,) = settled.settlements
    assert s.outcome is outcome
    assert [p.level for p in settled.prison] == ([after] if after else [])


def test_under_halve_another_refait_halves_the_prisoner_and_a_win_frees_the_rest():
    after_refait = settle(
        REFAIT,
        void=False,
        reglement=FRANCE,
        stakes=(),
        prison=[Prisoner("p", Chance.ROUGE, 1001, 1)],
    )
    (s,) = after_refait.settlements
    assert (s.to_bank, s.held, s.level) == (500, 501, 1)
    freed = settle(
        ROUGE_COULEUR, void=False, reglement=FRANCE, stakes=(), prison=after_refait.prison
    )
    assert (freed.settlements[0].outcome, freed.settlements[0].returned) == (Outcome.FREED, 501)


def test_insurance_premium_is_per_started_unit_and_the_refait_leaves_the_stake_free():
    settled = settle(
        REFAIT,
        void=False,
        reglement=MODERN,
        prison=(),
        stakes=[stake(Chance.ROUGE, 501, insured=True)],
    )
    (s,) = settled.settlements
    assert (s.outcome, s.returned, s.premium) == (Outcome.PUSH, 501, 10)


def test_a_void_coup_returns_stakes_charges_no_premium_and_leaves_prisoners():
    prisoner = Prisoner("p", Chance.NOIR, 300, 2)
    settled = settle(
        REFAIT,
        void=True,
        reglement=MODERN,
        prison=[prisoner],
        stakes=[stake(Chance.ROUGE, 700, insured=True, id="v")],
    )
    assert [(s.outcome, s.returned, s.premium) for s in settled.settlements] == [
        (Outcome.STILL_IMPRISONED, 0, 0),
        (Outcome.VOID, 700, 0),
    ]
    assert settled.prison == (prisoner,)


@pytest.mark.parametrize(
    ("rules", "the_stake", "says"),
    [
        (BADEN, stake(Chance.ROUGE, insured=True), "has no insurance"),
        (
            FRANCE,
            stake(Chance.ROUGE, 999, insured=True),
            "insurance needs a stake of at least 1000",
        ),
        (
            reglement({"preset": "baden-1854", "overrides": {"min_stake": 200, "max_stake": 5000}}),
            stake(Chance.ROUGE, 100),
            "below the table minimum 200",
        ),
        (
            reglement({"preset": "baden-1854", "overrides": {"min_stake": 200, "max_stake": 5000}}),
            stake(Chance.ROUGE, 5001),
            "above the table maximum 5000",
        ),
        (BADEN, stake(Chance.ROUGE, 0), "not a positive integer"),
    ],
)
def test_stakes_the_reglement_refuses(rules, the_stake, says):
    with pytest.raises(StakeRefused, match=says):
        settle(REFAIT, void=False, reglement=rules, prison=(), stakes=[the_stake])


@pytest.mark.parametrize(
    ("cards_left", "points_left", "ends"),
    [(7, 70, True), (8, 61, True), (8, 62, False), (40, 200, False)],
)
def test_the_count_rule(cards_left, points_left, ends):
    assert count_rule_ends(cards_left, points_left, BADEN) is ends


@pytest.mark.parametrize(("amount", "bank"), [(0, 0), (1, 0), (2, 1), (1001, 500), (2001, 1000)])
def test_halves_are_rounded_down_for_the_bank(amount, bank):
    assert bank_half(amount) == bank


def test_the_prison_belongs_to_the_table_and_carries_into_the_next_sixain():
    from casino.games.trente_et_quarante import play_talon

    talon = [card(c) for c in "KS KH KD AS KC KS KH AH 2S 2H 2D".split()]
    first = play_talon(talon, {1: [stake(Chance.NOIR, 400, id="n")]}, BADEN)
    assert first.coups[0].last is True
    assert first.coups[0].void is True  # a refait on the last coup is void under baden-1854
    assert first.end.prison == ()
    pierer = reglement("pierer-1857")
    carried = play_talon(talon[:8], {1: [stake(Chance.NOIR, 400, id="n")]}, pierer).end.prison
    assert carried == (Prisoner("n", Chance.NOIR, 400, 1),)
    # The next sixain: noir wins its first coup, the prisoner is freed there.
    following = [card(c) for c in "9S 9H 9D 4C 8S 8H 8D 9C".split()]
    second = play_talon(following, {}, pierer, prison=carried)
    assert [(s.stake, s.outcome, s.returned) for s in second.coups[0].settlements] == [
        ("n", Outcome.FREED, 400)
    ]


def test_the_simulator_is_deterministic_by_seed():
    from casino.games.simulator import simulate_taille

    one = simulate_taille(seed=99, reglement=MODERN)
    two = simulate_taille(seed=99, reglement=MODERN)
    other = simulate_taille(seed=100, reglement=MODERN)
    assert one.talon == two.talon
    assert one.taille == two.taille
    assert one.talon != other.talon
