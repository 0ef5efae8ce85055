"""The number of queries each hot table act sends, fixed (issue 17): a change that adds one to a
stake, a card or a settlement fails here, whatever the machine's speed.

Each act is played through its service in the state a table plays it in: a round (coup, draw,
deal) already played at the table, so the process has prepared its statements
(``casino.prepared``), cached the content types and the actors' roles (a request's permission check
reads them before the service runs), then the next round counted act by act.

Counted as Django counts them (``CaptureQueriesContext``): the test runs inside a transaction, so
each act's own ``transaction.atomic`` is a SAVEPOINT and its RELEASE, two queries where production
sends a BEGIN and a COMMIT that Django does not log. Every figure below is therefore production's
plus two.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.db.models import QuerySet
from django.test.utils import CaptureQueriesContext

from casino.floor.coups import (
    coup_close_betting,
    coup_lay_card,
    coup_open,
    coup_settle,
    stake_place,
)
from casino.floor.models import Account, Table
from casino.floor.play.alliance import deals
from casino.floor.play.pharao.tailles import pharao_stake_place, taille_lay_card, taille_open
from tests.conftest import open_seance
from tests.floor.alliance_world import (
    cercle_pack,
    cercle_seance,
    cercle_table,
    play_act_by_act,
    sheet,
    simulated,
)
from tests.floor.pharao_world import pack_order, pharao_table, single_pack_in_play

pytestmark = pytest.mark.django_db

# Act (and the case, where the count depends on it) → the queries it sends, SAVEPOINT and RELEASE
# of its transaction included. When an act's queries are cut (or one is added) on purpose, change
# its figure here, and only here.
QUERIES = {
    # Trente-et-Quarante
    "coup_open": 8,
    "stake_place, a seat's first stake (its account is made)": 11,
    "stake_place, a later stake at the same seat": 7,
    "coup_close_betting": 6,
    "coup_lay_card, the first card (the coup starts dealing)": 6,
    "coup_lay_card, a middle card": 5,
    "coup_lay_card, the last card (the coup is complete)": 6,
    "coup_settle, a coup with a winning and a losing stake, none in prison": 13,
    # Pharao
    "pharao_stake_place, a seat's first stake (its account is made)": 12,
    "pharao_stake_place, a later stake at the same seat": 8,
    "taille_lay_card, a draw's first card (the bank's)": 6,
    "taille_lay_card, a draw's second card (settles it: a stake won, one lost)": 12,
    # Alliance
    "deal_call, a call that does not end the auction": 6,
    "deal_call, the call that ends the auction": 7,
    "deal_play, a card in the middle of the deal": 6,
    "deal_play, the last card (settles the deal)": 19,
}


class Counted:
    """Plays acts under ``CaptureQueriesContext``, keeping each case's counts (one per time it
    was played) and the SQL of each count."""

    def __init__(self) -> None:
        self.counts: dict[str, list[int]] = {}
        self.sql: dict[tuple[str, int], list[str]] = {}

    def __call__(self, case: str, service: Callable[..., Any], **arguments: Any) -> Any:
        assert case in QUERIES, f"{case!r} is not in QUERIES"
        with CaptureQueriesContext(connection) as queries:
            done = service(**arguments)
        count = len(queries.captured_queries)
        self.counts.setdefault(case, []).append(count)
        self.sql[case, count] = [q["sql"] for q in queries.captured_queries]
        return done

    def check(self, cases: list[str]) -> None:
        """Every case played, each time at its figure in QUERIES; else a message listing, per act
        that differs, what it sent."""
        assert sorted(self.counts) == sorted(cases), f"cases played: {sorted(self.counts)}"
        wrong = {
            case: sorted(set(counts))
            for case, counts in self.counts.items()
            if set(counts) != {QUERIES[case]}
        }
        if not wrong:
            return
        lines = [
            "queries per act differ from QUERIES (tests/floor/test_query_counts.py); if the "
            "change is meant, update the figures there:"
        ]
        for case, sent in wrong.items():
            lines.append(f"  {case}: expected {QUERIES[case]}, sent {sent}; with {sent[-1]}:")
            lines += [f"    {sql[:300]}" for sql in self.sql[case, sent[-1]]]
        measured = {case: sorted(set(counts)) for case, counts in self.counts.items()}
        lines.append(f"all measured: {measured}")
        pytest.fail("\n".join(lines))


# --- Trente-et-Quarante ----------------------------------------------------------------------------

# Noir K 7 9 2 5 = 33, rouge T Q A 4 3 9 = 37: noir wins, no refait; eleven cards.
A_COUP = ["KS", "7H", "9D", "2C", "5S", "TH", "QD", "AS", "4C", "3H", "9S"]


def _trente_et_quarante_coup(cast, shift, act: Callable[..., Any]) -> None:  # type: ignore[no-untyped-def]
    """One coup, each act made through ``act(case, service, **arguments)``."""
    coup = act("coup_open", coup_open, actor=cast.tailleur, shift_id=shift.pk)
    stake = {"actor": cast.croupier, "coup_id": coup.pk, "amount": 1000}
    seat = f"seat-of-coup-{coup.number}"
    assert not _seat_account(shift.table, seat).exists()
    act(
        "stake_place, a seat's first stake (its account is made)",
        stake_place,
        ref="a",
        holder=seat,
        chance="noir",
        **stake,
    )
    act(
        "stake_place, a later stake at the same seat",
        stake_place,
        ref="b",
        holder=seat,
        chance="rouge",
        **stake,
    )
    act("coup_close_betting", coup_close_betting, actor=cast.tailleur, coup_id=coup.pk)
    for index, code in enumerate(A_COUP):
        if index == 0:
            case = "coup_lay_card, the first card (the coup starts dealing)"
        elif index == len(A_COUP) - 1:
            case = "coup_lay_card, the last card (the coup is complete)"
        else:
            case = "coup_lay_card, a middle card"
        laid = act(case, coup_lay_card, actor=cast.tailleur, coup_id=coup.pk, code=code)
        assert laid.coup_complete == (index == len(A_COUP) - 1)
    result = act(
        "coup_settle, a coup with a winning and a losing stake, none in prison",
        coup_settle,
        actor=cast.croupier,
        coup_id=coup.pk,
    )
    assert (result.result, result.last, result.prison_after) == ("noir", False, [])


def _seat_account(table: Table, seat: str) -> QuerySet[Account]:
    return Account.objects.filter(code=f"T{table.number}:seat:{seat}")


def _uncounted(case: str, service: Callable[..., Any], **arguments: Any) -> Any:
    return service(**arguments)


def test_trente_et_quarante_acts_send_their_fixed_number_of_queries(cast, shift, sixain_in_play):
    _trente_et_quarante_coup(cast, shift, _uncounted)  # the first coup of the process
    counted = Counted()
    _trente_et_quarante_coup(cast, shift, counted)
    counted.check(
        [
            "coup_open",
            "stake_place, a seat's first stake (its account is made)",
            "stake_place, a later stake at the same seat",
            "coup_close_betting",
            "coup_lay_card, the first card (the coup starts dealing)",
            "coup_lay_card, a middle card",
            "coup_lay_card, the last card (the coup is complete)",
            "coup_settle, a coup with a winning and a losing stake, none in prison",
        ]
    )


# --- Pharao -----------------------------------------------------------------------------------------

# Draw 1: 3C | 7H; draw 2: 2D (the bank's, a stake on the 2 loses) | 9S (a stake on the 9 wins).
A_TAILLE = pack_order(["3C", "7H", "2D", "9S"], "KS")


def test_pharao_acts_send_their_fixed_number_of_queries(cast, posted):
    seance = open_seance(cast, pharao_table(cast))
    single_pack_in_play(cast, seance)
    taille = taille_open(actor=cast.tailleur, shift_id=seance.pk, bottom_card=A_TAILLE[-1])
    stake = {"actor": cast.croupier, "taille_id": taille.pk, "amount": 1000}
    lay = {"actor": cast.tailleur, "taille_id": taille.pk}
    # The first draw of the process, with a stake on its winning rank.
    pharao_stake_place(ref="w", holder="1", rank="7", **stake)
    taille_lay_card(code=A_TAILLE[0], **lay)
    assert taille_lay_card(code=A_TAILLE[1], **lay).settled is not None

    counted = Counted()
    assert not _seat_account(seance.table, "2").exists()
    counted(
        "pharao_stake_place, a seat's first stake (its account is made)",
        pharao_stake_place,
        ref="two",
        holder="2",
        rank="2",
        **stake,
    )
    counted(
        "pharao_stake_place, a later stake at the same seat",
        pharao_stake_place,
        ref="nine",
        holder="2",
        rank="9",
        **stake,
    )
    counted(
        "taille_lay_card, a draw's first card (the bank's)",
        taille_lay_card,
        code=A_TAILLE[2],
        **lay,
    )
    laid = counted(
        "taille_lay_card, a draw's second card (settles it: a stake won, one lost)",
        taille_lay_card,
        code=A_TAILLE[3],
        **lay,
    )
    assert sorted(s.outcome.value for s in laid.settled.settlements) == ["lost", "won"]
    counted.check(
        [
            "pharao_stake_place, a seat's first stake (its account is made)",
            "pharao_stake_place, a later stake at the same seat",
            "taille_lay_card, a draw's first card (the bank's)",
            "taille_lay_card, a draw's second card (settles it: a stake won, one lost)",
        ]
    )


# --- Alliance ---------------------------------------------------------------------------------------


def test_alliance_acts_send_their_fixed_number_of_queries(cast, posted):
    seance = cercle_seance(cast, cercle_table(cast))
    cercle_pack(cast, seance)
    play_act_by_act(cast, seance, simulated(1))  # the first deal of the process

    counted = Counted()
    sim = simulated(2)
    doc = sheet(sim)
    calls, cards = len(doc["auction"]), sum(len(trick) for trick in doc["tricks"])

    def act(service: Callable[..., Any], **arguments: Any) -> Any:
        nonlocal calls, cards
        if service is deals.deal_call:
            calls -= 1
            case = (
                "deal_call, the call that ends the auction"
                if calls == 0
                else "deal_call, a call that does not end the auction"
            )
        elif service is deals.deal_play:
            cards -= 1
            case = (
                "deal_play, the last card (settles the deal)"
                if cards == 0
                else "deal_play, a card in the middle of the deal"
            )
        else:
            return service(**arguments)  # opening and dealing: once a deal, not counted
        return counted(case, service, **arguments)

    deal = play_act_by_act(cast, seance, sim, act=act)
    assert deal.phase == "over"
    counted.check(
        [
            "deal_call, a call that does not end the auction",
            "deal_call, the call that ends the auction",
            "deal_play, a card in the middle of the deal",
            "deal_play, the last card (settles the deal)",
        ]
    )
