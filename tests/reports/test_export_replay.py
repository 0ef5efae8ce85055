"""The regulator's replay of each exported talon reproduces the recorded coups: prisoners carried
from one taille into the next, a sixain shuffled and cut again, and the cut card (issue 11, item 9);
the undealt cards the tailleur recorded when the cards passed are the talon's end (issue 19).
"""

from __future__ import annotations

import random

import pytest

from casino.floor.coups import (
    IllegalCoupPhase,
    coup_close_betting,
    coup_lay_card,
    coup_open,
    coup_settle,
    stake_place,
)
from casino.floor.models import Coup, CoupPhase
from casino.games.cards import SIXAIN
from casino.games.replay import replay
from casino.reports.export import replay_document, talon_of
from shoes.services import cards_pass, pack_cut, pack_shuffle
from tests.conftest import pass_the_cards

# Noir 31 and rouge 31: a refait at the first coup, so the stakes on it go to prison.
REFAIT = ["TS", "TH", "TD", "AS", "TC", "JH", "QD", "AH"]


def sixain(first: list[str], seed: int) -> list[str]:
    """A shuffled sixain that begins with ``first``."""
    rest = [str(c) for c in SIXAIN.cards]
    for code in first:
        rest.remove(code)
    random.Random(seed).shuffle(rest)
    return first + rest


def play(cast, shift, talon: list[str], coups: int | None = None) -> None:
    """Play coups with two stakes each (rouge and couleur) until the taille ends or ``coups``."""
    cards = iter(talon)
    played = 0
    while coups is None or played < coups:
        coup = coup_open(actor=cast.tailleur, shift_id=shift.pk)
        for ref, chance in (("r", "rouge"), ("c", "couleur")):
            stake_place(
                actor=cast.croupier,
                coup_id=coup.pk,
                ref=ref,
                holder="4",
                chance=chance,
                amount=1000 + 500 * played,
            )
        coup_close_betting(actor=cast.tailleur, coup_id=coup.pk)
        cut_card = False
        while not cut_card:
            try:
                laid = coup_lay_card(actor=cast.tailleur, coup_id=coup.pk, code=next(cards))
            except IllegalCoupPhase:  # the cut card came out inside the coup
                cut_card = True
            else:
                if laid.coup_complete:
                    break
        result = coup_settle(actor=cast.croupier, coup_id=coup.pk, cut_card=cut_card)
        played += 1
        if result.last:
            return


def recorded(pack, taille: int) -> list[tuple]:
    found = []
    for coup in Coup.objects.filter(pack=pack, taille=taille, phase=CoupPhase.SETTLED).order_by(
        "number"
    ):
        o = coup.outcome
        settlements = sorted(
            (str(s.stake_id), s.outcome, s.paid, s.returned, s.to_bank, s.premium, s.held, s.level)
            for s in coup.settlements.all()
        )
        found.append(
            (o.noir_cards, o.rouge_cards, o.result, o.couleur or None, o.void, o.last, settlements)
        )
    return found


def replayed(pack, taille: int, count: int, document: dict | None = None) -> list[tuple]:
    out = replay(document or replay_document(pack, taille))["coups"][:count]
    return [
        (
            c["noir"]["cards"],
            c["rouge"]["cards"],
            c["result"],
            c["couleur"],
            c["void"],
            c["last"],
            sorted(
                (
                    s["stake"],
                    s["outcome"],
                    s["paid"],
                    s["returned"],
                    s["to_bank"],
                    s["premium"],
                    s["held"],
                    s["level"],
                )
                for s in c["settlements"]
            ),
        )
        for c in out
    ]


def reshuffle(cast, pack) -> None:
    pack_shuffle(actor=cast.croupier, pack_id=pack.pk)
    pack_shuffle(actor=cast.tailleur, pack_id=pack.pk)
    pack_cut(actor=cast.tailleur, pack_id=pack.pk, cut_by="M. Weih")


def test_prisoners_carried_into_a_reshuffled_taille_replay_as_recorded(cast, shift, sixain_in_play):
    pack = sixain_in_play
    play(cast, shift, sixain(REFAIT, seed=1), coups=1)
    prison = replay_document(pack, 1)["prison"]
    assert prison == []
    pass_the_cards(cast, pack)  # the cards pass with stakes in prison
    reshuffle(cast, pack)
    play(cast, shift, sixain([], seed=2), coups=12)
    document = replay_document(pack, 2)
    assert {p["level"] for p in document["prison"]} == {1}  # the refait's two stakes, carried
    assert len(document["cards"]) == 312
    for taille in (1, 2):
        mine = recorded(pack, taille)
        assert mine, taille
        assert replayed(pack, taille, len(mine)) == mine


@pytest.mark.reglement("france-2007")
def test_a_talon_ended_by_the_cut_card_replays_as_recorded(cast, shift, sixain_in_play):
    pack = sixain_in_play
    play(cast, shift, sixain([], seed=11))
    pack.refresh_from_db()
    assert pack.state == "passed"
    # Nobody recorded the undealt cards (older data): the export lists those the pack says
    # remain, in the pack's order, and says so.
    assert talon_of(pack, 1).source == "not_recorded"
    mine = recorded(pack, 1)
    assert mine[-1][5] is True  # the last coup knows it is the last
    everything = replay(replay_document(pack, 1))
    assert everything["end"]["reason"] == "cut_card"
    assert len(everything["coups"]) == len(mine)
    assert replayed(pack, 1, len(mine)) == mine


@pytest.mark.reglement("france-2007")
def test_the_undealt_cards_scanned_when_the_cards_pass_end_the_talon_the_regulator_replays(
    cast, shift, sixain_in_play
):
    pack = sixain_in_play
    cards = sixain([], seed=11)
    play(cast, shift, cards)  # the settlement at the cut card passes the cards
    dealt = pack.cards_laid.count()
    cards_pass(actor=cast.tailleur, pack_id=pack.pk, undealt=cards[dealt:], method="scanned")
    talon = talon_of(pack, 1)
    assert (talon.source, talon.undealt) == ("recorded", cards[dealt:])
    document = replay_document(pack, 1)
    assert document["cards"] == cards  # every card of the sixain, as it lay
    everything = replay(document)
    assert everything["end"]["reason"] == "cut_card"
    assert everything["end"]["cards_left"] == 5
    mine = recorded(pack, 1)
    assert len(everything["coups"]) == len(mine)
    assert replayed(pack, 1, len(mine)) == mine


@pytest.mark.reglement("france-2007")
def test_a_count_that_does_not_reconcile_leaves_the_replay_on_the_packs_count(
    cast, shift, sixain_in_play
):
    pack = sixain_in_play
    cards = sixain([], seed=11)
    play(cast, shift, cards)
    dealt = pack.cards_laid.count()
    short = cards[dealt + 1 :]  # the card under the cut card is not in the talon
    count = cards_pass(actor=cast.tailleur, pack_id=pack.pk, undealt=short, method="scanned")
    assert count.missing == {cards[dealt]: 1}
    talon = talon_of(pack, 1)
    assert talon.source == "recorded_not_reconciled"
    assert sorted(talon.undealt) == sorted(cards[dealt:])  # what the pack says remains
    mine = recorded(pack, 1)
    assert replayed(pack, 1, len(mine)) == mine  # the coups as they were settled
    # The short list itself would bring the cut card one card earlier: the last card dealt
    # would lie beyond it, and the replay would not be the coups that were settled.
    short_talon = {**replay_document(pack, 1), "cards": cards[:dealt] + short}
    assert replayed(pack, 1, len(mine), short_talon) != mine
