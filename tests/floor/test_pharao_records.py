"""``tailles.taille_records``, the fixed statement every Pharao act reads the taille through, gives
what the ORM reads: the stakes by the draw they stand from, the acts on them (with who approved a
reduction or a withdrawal) by the draw they come before, each in the order recorded, and the
cards laid in order."""

from __future__ import annotations

from collections import defaultdict

import pytest

from casino.floor.play.pharao import tailles
from casino.floor.play.pharao.models import PharaoStake, PharaoStakeAct, Taille
from casino.floor.play.pharao.tailles import pharao_stake_place, taille_lay_card, taille_open
from casino.games import pharao as engine
from casino.games.cards import rank
from shoes.services import cards_laid_in, cards_pass
from tests.conftest import open_seance
from tests.floor.pharao_world import A_TAILLE, cut_again, pack_order, pharao_table, play_a_taille

pytestmark = pytest.mark.django_db


def read_by_the_orm(taille: Taille):  # type: ignore[no-untyped-def]
    """The three queries the acts sent before the fixed statement."""
    stakes = defaultdict(list)
    for pk, on, amount, draw in (
        PharaoStake.objects.filter(taille=taille)
        .order_by("id")
        .values_list("id", "rank", "amount", "draw")
    ):
        stakes[draw].append(engine.Stake(str(pk), rank(on), amount))
    acts = defaultdict(list)
    for stake, act, amount, draw, approved_by in (
        PharaoStakeAct.objects.filter(stake__taille=taille)
        .order_by("id")
        .values_list("stake_id", "act", "amount", "draw", "approval__approved_by__username")
    ):
        acts[draw].append(engine.Action(str(stake), engine.Act(act), amount, approved_by))
    return dict(stakes), dict(acts), cards_laid_in(taille.pack_id, taille.pack_taille)


def test_the_records_of_a_whole_taille_are_the_orms(cast, posted):
    taille = play_a_taille(cast, open_seance(cast, pharao_table(cast)))
    stakes, acts, cards = tailles.taille_records(taille)
    assert (dict(stakes), dict(acts), cards) == read_by_the_orm(taille)
    assert cards == A_TAILLE
    assert {a.act for draw in acts.values() for a in draw} >= {
        engine.Act.PAROLI,
        engine.Act.REDUCE,
        engine.Act.WITHDRAW,
    }
    assert {a.approved_by for draw in acts.values() for a in draw} == {None, cast.chef.username}


def test_the_records_of_the_next_taille_from_the_same_pack_are_its_own(cast, posted):
    """The pack cut again after a whole taille: the next taille's records hold its own stake and
    its own two cards, not the first taille's."""
    first = play_a_taille(cast, open_seance(cast, pharao_table(cast)))
    pack = first.pack
    cards_pass(actor=cast.tailleur, pack_id=pack.pk, undealt=[])
    cut_again(cast, pack)
    order = pack_order(["9C", "4H"], "QS")
    taille = taille_open(actor=cast.tailleur, shift_id=first.shift_id, bottom_card=order[-1])
    stake = pharao_stake_place(
        actor=cast.croupier, taille_id=taille.pk, ref="n", holder="2", rank="4", amount=500
    )
    for code in order[:2]:
        taille_lay_card(actor=cast.tailleur, taille_id=taille.pk, code=code)
    stakes, acts, cards = tailles.taille_records(taille)
    assert (dict(stakes), dict(acts), cards) == read_by_the_orm(taille)
    assert (dict(stakes), dict(acts), cards) == (
        {1: [engine.Stake(str(stake.pk), rank("4"), 500)]},
        {},
        ["9C", "4H"],
    )
