"""A deal as people read it, wherever it stands: the players in dealing order with their seats, the
hands and the table cards as dealt, the calls, the contract, each trick with who played each card
and who took it, where the Fahne is, and once over what it settled.

Read from the deal's records through the engine (``deals.deal_of``), as every act reads them, so
the page shows what the floor and the replay of the deal agree on; a deal played out is read
from its settlement, the engine's document kept at its last card.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from casino.floor.play.alliance.deals import deal_of
from casino.floor.play.alliance.models import CercleSeat, Deal, DealCall, DealPhase, DealPlay
from casino.games import alliance as engine

# Where the Fahne is: in a player's tricks, lying on the table or among a lever's discards (it
# then counts for nobody), in the trick being played, or still in a player's hand.
FahneAt = Literal["tricks", "table", "discards", "trick", "hand"]


@dataclass(frozen=True)
class Seated:
    code: str
    name: str
    seat: int | None  # None: no seat recorded for him at the séance when the deal began


@dataclass(frozen=True)
class TrickSeen:
    number: int
    plays: tuple[tuple[str, str], ...]  # (player, card) in the order played, the leader first
    winner: str | None  # None while the trick is being played


@dataclass(frozen=True)
class DealSeen:
    deal: Deal
    players: tuple[Seated, ...]
    hands: dict[str, tuple[str, ...]]  # as dealt, in the order received; empty before the deal
    table_up: str | None
    table_down: tuple[str, ...]
    calls: tuple[DealCall, ...]
    declarer: str | None
    game: str | None
    forced: bool
    contract: dict[str, Any] | None
    trumps: str | None
    ally: str | None  # once known: he played the called card, or the deal is over
    resister: str | None
    discards: tuple[str, ...]
    tricks: tuple[TrickSeen, ...]
    taken: dict[str, int]
    fahne: str | None
    fahne_at: FahneAt | None
    fahne_with: str | None  # whose tricks (or hand) hold it
    outcome: dict[str, Any] | None = field(default=None)  # the settlement's document, once over


def deal_seen(deal: Deal) -> DealSeen:
    state = deal_of(deal)
    n = len(deal.players)
    dealt = state.phase is not engine.Phase.DEALING
    hands: dict[str, tuple[str, ...]] = {}
    table: engine.Table | None = None
    if dealt:
        held, table = engine.deal(state.received, n)
        hands = {p: tuple(str(c) for c in h) for p, h in zip(deal.players, held, strict=True)}
    plays = list(DealPlay.objects.filter(deal=deal).order_by("index").values_list("player", "card"))
    tricks = tuple(
        TrickSeen(
            number=i // n + 1,
            plays=tuple(plays[i : i + n]),
            winner=state.tricks[i // n].winner if i // n < len(state.tricks) else None,
        )
        for i in range(0, len(plays), n)
    )
    taken = dict.fromkeys(deal.players, 0)
    for trick in state.tricks:
        taken[trick.winner] += 1
    outcome = None
    if deal.phase == DealPhase.OVER:
        outcome = deal.settlement.outcome
    trumps = state.trumps.value if state.trumps else None
    fahne = str(engine.fahne(state.trumps)) if state.trumps else None
    fahne_at, fahne_with = _fahne_place(state, fahne, tricks, table)
    contract = state.contract
    called = (
        str(contract.called)
        if contract is not None and not isinstance(contract, engine.SoloContract)
        else None
    )
    ally = outcome["ally"] if outcome else next((p for p, c in plays if c == called), None)
    return DealSeen(
        deal=deal,
        players=_seated(deal),
        hands=hands,
        table_up=str(table.up) if table else None,
        table_down=tuple(str(c) for c in table.down) if table else (),
        calls=tuple(DealCall.objects.filter(deal=deal).select_related("by").order_by("index")),
        declarer=state.declarer,
        game=state.game.value if state.game else None,
        forced=state.forced,
        contract=engine.contract_dict(contract) if contract else None,
        trumps=trumps,
        ally=ally,
        resister=None if state.resister is None else deal.players[state.resister],
        discards=tuple(str(c) for c in state.discards),
        tricks=tricks,
        taken=taken,
        fahne=fahne,
        fahne_at=fahne_at,
        fahne_with=fahne_with,
        outcome=outcome,
    )


def _seated(deal: Deal) -> tuple[Seated, ...]:
    """The deal's players with the seat each held when it began (a player may have left and sat
    again elsewhere during the séance: the seat taken last before the deal is his)."""
    seats: dict[str, tuple[int, str]] = {}
    for s in (
        CercleSeat.objects.filter(
            shift_id=deal.shift_id, patron__code__in=deal.players, at__lte=deal.opened_at
        )
        .select_related("patron")
        .order_by("at", "id")
    ):
        seats[s.patron.code] = (s.seat, s.patron.name)
    return tuple(
        Seated(code=p, seat=seats[p][0] if p in seats else None, name=seats.get(p, (0, ""))[1])
        for p in deal.players
    )


def _fahne_place(
    state: engine.AllianceDeal,
    fahne: str | None,
    tricks: tuple[TrickSeen, ...],
    table: engine.Table | None,
) -> tuple[FahneAt | None, str | None]:
    if fahne is None:
        return None, None
    for trick in tricks:
        for player, code in trick.plays:
            if code == fahne:
                return ("tricks", trick.winner) if trick.winner else ("trick", player)
    if fahne in {str(c) for c in state.discards}:
        return "discards", None
    for seat, hand in enumerate(state.hands):
        if fahne in {str(c) for c in hand}:
            return "hand", state.players[seat]
    if table is not None and fahne in {str(c) for c in table.cards}:
        return "table", None
    return None, None
