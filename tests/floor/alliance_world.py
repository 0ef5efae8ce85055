"""A cercle table for the tests: table 5, Alliance under a posted règlement with a fee, a séance
opened with the fee box counted empty, four patrons bought in at the cage and seated, a single
pack verified by the commissioner and opened; deals played from the engine's simulator."""

from __future__ import annotations

import datetime as dt
from typing import Any

from casino.floor.cage import patron_buy_in
from casino.floor.models import Shift, Table
from casino.floor.play.alliance import deals
from casino.floor.play.alliance.models import Deal
from casino.floor.play.alliance.seats import seat_take
from casino.floor.services import reglement_post, rundown, shift_close, shift_open, table_create
from casino.games.simulator import SimulatedAlliance, simulate_alliance_deal
from shoes.models import Pack, PackKind
from shoes.services import pack_open, pack_receive, pack_store, seal_verify
from tests.conftest import signed_count

NUMBER = 5
MARK = 100  # minor units: the table's minimum is one mark
FEE = 30
NAMES = ("ana", "ben", "carl", "dora", "emil", "fritz")
BUY_IN = 50_000


def cercle_table(cast: Any, *, fee: int = FEE, number: int = NUMBER) -> Table:
    posted = reglement_post(
        actor=cast.commissaire,
        name=f"cercle-{number}",
        spec={"preset": "baden-1854", "overrides": {"cercle_fee": fee}},
        effective_from=dt.date(2026, 1, 1),
    )
    return table_create(
        actor=cast.directeur,
        number=number,
        game="alliance",
        reglement_id=posted.pk,
        min_stake=MARK,
        max_stake=MARK,
    )


def cercle_seance(cast: Any, table: Table, players: int = 4) -> Shift:
    """The séance opened with the fee box counted empty, ``players`` patrons bought in and
    seated in seats 1, 2, …"""
    count = signed_count(cast, table, "opening", {"100": 0})
    shift = shift_open(
        actor=cast.chef, table=table, count_id=count.pk, tailleur=None, croupiers=[cast.croupier]
    )
    for seat, name in enumerate(NAMES[:players], start=1):
        patron_buy_in(actor=cast.caissier, patron=name, amount=BUY_IN)
        seat_take(actor=cast.croupier, shift_id=shift.pk, seat=seat, patron=name)
    return shift


def cercle_pack(cast: Any, shift: Shift, seal: str = "RF-AL-1") -> Pack:
    pack = pack_receive(
        actor=cast.caissier,
        kind=PackKind.SINGLE,
        maker="Grimaud",
        maker_pack_numbers="G-52",
        seal_number=seal,
        sealing_authority="Préfecture de police",
        store_location="coffre A",
    )
    pack_store(actor=cast.caissier, pack_id=pack.pk)
    seal_verify(actor=cast.commissaire, pack_id=pack.pk, seal_number_read=seal, verdict="intact")
    return pack_open(actor=cast.chef, pack_id=pack.pk, shift_id=shift.pk)


def cercle_ready(cast: Any, players: int = 4) -> Shift:
    """Table 5's séance open, ``players`` patrons seated, a pack verified and opened: the first
    deal may begin."""
    shift = cercle_seance(cast, cercle_table(cast), players)
    cercle_pack(cast, shift)
    return shift


def codes(names: tuple[str, ...]) -> list[str]:
    return [f"patron:{n}" for n in names]


def simulated(seed: int, players: int = 4) -> SimulatedAlliance:
    """A deal by the simulator's simple players, seated as ``NAMES`` (the last deals)."""
    return simulate_alliance_deal(seed=seed, players=players, mark_value=MARK)


def sheet(sim: SimulatedAlliance) -> dict[str, Any]:
    """The simulated deal's replay document, with the seated patrons' account codes."""
    doc = sim.replay_document()
    rename = dict(zip(sim.players, codes(sim.players), strict=True))
    doc["players"] = [rename[p] for p in doc["players"]]
    if doc["contract"].get("resistance"):
        doc["contract"]["resistance"] = rename[doc["contract"]["resistance"]]
    doc.pop("reglement")
    return doc


def play_act_by_act(
    cast: Any,
    shift: Shift,
    sim: SimulatedAlliance,
    actor: Any = None,
    *,
    act: Any = None,
    cards: int = 52,
) -> Deal:
    """The deal played through the services, one act each: opened, dealt, each call, the
    contract, each card (the first ``cards`` only: a deal left in the middle of its play).
    ``act(service, **arguments)`` makes each call (the bench counts each act's queries); by
    default it simply calls the service."""
    actor = actor or cast.croupier
    act = act or (lambda service, **arguments: service(**arguments))
    doc = sheet(sim)
    players = doc["players"]
    deal = act(
        deals.deal_open, actor=actor, shift_id=shift.pk, dealer=players[-1], cut_by=players[-2]
    )
    state = act(deals.deal_cards, actor=actor, deal_id=deal.pk, cards=doc["cards"])
    caller = state.next_caller
    for word in doc["auction"]:
        caller = act(
            deals.deal_call, actor=actor, deal_id=deal.pk, player=caller, call=word
        ).next_caller
    act(deals.deal_declare, actor=actor, deal_id=deal.pk, contract=doc["contract"])
    player = players[0]
    for code in [c for trick in doc["tricks"] for c in trick][:cards]:
        player = act(
            deals.deal_play, actor=actor, deal_id=deal.pk, player=player, code=code
        ).next_player
    deal.refresh_from_db()
    return deal


def close_cercle(cast: Any, shift: Shift) -> Any:
    """The séance closed on the count of its fee box: the fees it took, in chips of one cent."""
    fees = rundown(shift).expected
    count = signed_count(cast, shift.table, "closing", {"1": fees} if fees else {"100": 0})
    return shift_close(actor=cast.chef, shift=shift, count_id=count.pk)  # its rundown


def deal_in(cast: Any, shift: Shift, seed: int, phase: str) -> tuple[Deal, dict[str, Any]]:
    """The simulated deal ``seed`` brought through the services up to ``phase`` (``dealing``,
    ``auction``, ``contract`` or ``play``: waiting for its cards, its first call, its contract,
    its first card), with its sheet."""
    actor = cast.croupier
    doc = sheet(simulated(seed))
    players = doc["players"]
    deal = deals.deal_open(actor=actor, shift_id=shift.pk, dealer=players[-1], cut_by=players[-2])
    if phase != "dealing":
        caller = deals.deal_cards(actor=actor, deal_id=deal.pk, cards=doc["cards"]).next_caller
    if phase in ("contract", "play"):
        for word in doc["auction"]:
            called = deals.deal_call(actor=actor, deal_id=deal.pk, player=caller, call=word)
            caller = called.next_caller
    if phase == "play":
        deals.deal_declare(actor=actor, deal_id=deal.pk, contract=doc["contract"])
    deal.refresh_from_db()
    assert deal.phase == phase
    return deal, doc
