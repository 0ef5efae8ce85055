"""One séance at the cercle table (Alliance, RULES.md §3), act by act, through the services, by
the people it names.

The director has made the table a cercle under a posted règlement with the house's fee (one mark
is the table's minimum). The croupier counts the fee box empty and the director countersigns;
the chef de partie opens the séance with the croupier on duty (no tailleur: the players deal).
Patrons change money at the cage and the croupier seats them; the chef opens a sealed single
pack the commissioner has verified. Each deal is dealt by the player in the seat after the last
dealer's, round the table, and cut by the player on his left; its cards, calls, contract and
cards played are those of the engine's simple players (``simulate_alliance_deal``: random legal
calls, contract and cards), recorded by the croupier one act at a time, the last card settling
the marks between the players' accounts and the fee into the fee box. Between deals a player
now and then leaves (and is paid out at the cage) and a newcomer sits down, and one whose money
runs low changes more. At the end the chef counts the pack back, the fee box is counted (the
fees) and the séance closed; the players still seated are paid out at the cage.

``colluders``: two patrons who cheat as a pair, planted for the collusion detector; passed on to
the engine's simple players as their ``colluders`` in each deal they both play.

``cercle_seance()`` is a play for ``timeline.play_together``: it yields the time before each act.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from casino import clock
from casino.floor.cage import patron_buy_in, patron_cash_out, patron_code
from casino.floor.models import Account, PostedReglement, Shift, Table
from casino.floor.play.alliance import deals
from casino.floor.play.alliance.models import SEATS, CercleSeat
from casino.floor.play.alliance.seats import dealing_order, seat_leave, seat_take, seated
from casino.floor.services import balance, reglement_post
from casino.games.alliance import contract_dict
from casino.games.simulator import SimulatedAlliance, simulate_alliance_deal
from casino.simulation import pace
from casino.simulation.seance import Crew, House, _close, _from_store, _open, _Seance, table_for
from casino.simulation.timeline import Play
from shoes import services as packs
from shoes.models import PackKind

GAME = "alliance"
RULES = "cercle"  # the cercle's posted règlement: baden-1854 with the house's fee
FEE = 50  # minor units, from each player of each deal played out (``cercle_fee``)
MARK = 100  # the table's minimum, the value of one mark
BUY_IN = 50_000
# A deal costs a player at most 40 marks to each of five winners (a lost solo, all doubled):
# below this he changes more money before the next deal.
LOW = BUY_IN // 2
EMPTY = {"100": 0}  # the fee box, counted empty at the opening
PATRONS = (
    *("ana", "ben", "carl", "dora", "emil", "fritz", "greta", "hugo"),
    *("ida", "jules", "karl", "lotte", "max", "nina", "otto", "paula"),
)


def cercle_table_for(house: House, number: int) -> Table:
    """Table ``number``, a cercle table made by the director under the posted ``cercle``
    règlement (posted by the commissioner if missing: baden-1854 with the fee ``FEE``), one
    mark worth ``MARK``; refused if it exists for another game."""
    if not PostedReglement.objects.filter(name=RULES).exists():
        reglement_post(
            actor=house.commissaire,
            name=RULES,
            spec={"preset": "baden-1854", "overrides": {"cercle_fee": FEE}},
            effective_from=clock.now().date(),
        )
    return table_for(house, number, game=GAME, rules=RULES, limits=(MARK, MARK))


@dataclass
class _Cercle:
    s: _Seance
    colluders: tuple[str, str] | None
    waiting: list[str]  # patrons (account codes) who come to sit, in the order they come
    dealer: int | None = None  # the seat of the last deal's dealer

    @property
    def shift(self) -> Shift:
        return self.s.open_shift


def cercle_seance(
    table: Table,
    crew: Crew,
    house: House,
    rng: random.Random,
    *,
    deals_to_play: int,
    players: int = 4,
    changes: int = 1,
    colluders: tuple[str, str] | None = None,
    close: bool = True,
) -> Play:
    """Open a séance at the cercle ``table``, seat ``players`` patrons, open a sealed pack, play
    ``deals_to_play`` deals with ``changes`` times a player leaving and another sitting down
    between two of them, then count the pack back, close and pay the players out
    (``close=False``: leave the séance open, the players seated and the pack opened, for someone
    to record the first deal)."""
    if not 4 <= players <= SEATS:
        raise ValueError(f"Alliance is played by 4, 5 or 6, not {players}")
    pair = None if colluders is None else (patron_code(colluders[0]), patron_code(colluders[1]))
    # The planted pair sits down first: they are there from the first deal. Patrons seated at
    # another cercle now stay there.
    busy = set(
        CercleSeat.objects.filter(end__isnull=True, shift__closed_at__isnull=True).values_list(
            "patron__code", flat=True
        )
    )
    codes = [patron_code(p) for p in PATRONS]
    order = [*(pair or ()), *(c for c in codes if c not in (pair or ()) and c not in busy)]
    # The players deal: whoever is the crew's tailleur has no post at a cercle.
    c = _Cercle(_Seance(table, Crew(crew.chef, None, crew.croupier), house, rng), pair, order)
    yield from _open(c.s, EMPTY)
    for _ in range(players):
        yield from _arrive(c)
    yield pace.pause(rng, pace.FETCH_PACK)
    yield from _from_store(c.s, PackKind.SINGLE)
    assert c.s.pack is not None
    packs.pack_open(actor=crew.chef, pack_id=c.s.pack.pk, shift_id=c.shift.pk)
    swaps = {round((k + 1) * deals_to_play / (changes + 1)) for k in range(changes)}
    for n in range(deals_to_play):
        if n in swaps - {0}:
            yield from _swap(c)
        yield from _change_more(c)
        yield from _deal(c)
    if not close:
        return
    yield pace.pause(rng, pace.RETIRE)
    # Every card of the last deal is out: the pack is counted back whole.
    packs.pack_retire(actor=crew.chef, pack_id=c.s.pack.pk, counted={})
    staying = [s.patron.code for s in seated(c.shift)]
    yield from _close(c.s)  # the closing count: the fees in the fee box
    for code in staying:
        yield from _paid_out(c, code)


def _arrive(c: _Cercle) -> Play:
    """The next patron changes money at the cage and the croupier shows him to a free seat."""
    s, code = c.s, c.waiting.pop(0)
    yield pace.pause(s.rng, pace.CAGE)
    patron_buy_in(actor=s.house.caissier, patron=code, amount=BUY_IN)
    yield pace.pause(s.rng, pace.SEATING)
    taken = {seat.seat for seat in seated(c.shift)}
    free = [n for n in range(1, SEATS + 1) if n not in taken]
    seat_take(actor=s.crew.croupier, shift_id=c.shift.pk, seat=s.rng.choice(free), patron=code)


def _paid_out(c: _Cercle, code: str) -> Play:
    yield pace.pause(c.s.rng, pace.CAGE)
    if balance(Account.objects.get(code=code)) > 0:
        patron_cash_out(actor=c.s.house.caissier, patron=code)


def _swap(c: _Cercle) -> Play:
    """A player (not one of a planted pair) leaves and is paid out; a newcomer sits down."""
    s = c.s
    leaving = s.rng.choice(
        [p.patron.code for p in seated(c.shift) if p.patron.code not in (c.colluders or ())]
    )
    yield pace.pause(s.rng, pace.BETWEEN_DEALS)
    seat_leave(actor=s.crew.croupier, shift_id=c.shift.pk, patron=leaving, reason="left")
    yield from _arrive(c)
    yield from _paid_out(c, leaving)


def _change_more(c: _Cercle) -> Play:
    """A player whose money runs low changes more at the cage before the next deal."""
    for seating in seated(c.shift):
        if balance(seating.patron) < LOW:
            yield pace.pause(c.s.rng, pace.CAGE)
            patron_buy_in(actor=c.s.house.caissier, patron=seating.patron.code, amount=BUY_IN)


def _next_dealer(c: _Cercle) -> str:
    """The player in the seat after the last dealer's, round the table (the first dealer is
    drawn by lot)."""
    seats = seated(c.shift)
    if c.dealer is None:
        chosen = c.s.rng.choice(seats)
    else:
        chosen = next((s for s in seats if s.seat > c.dealer), seats[0])
    c.dealer = chosen.seat
    return chosen.patron.code


def _simulated(c: _Cercle, order: list[str]) -> SimulatedAlliance:
    """A deal of the engine's simple players, who sit as ``order`` (dealing order), the planted
    pair cheating when both play it."""
    planted = c.colluders is not None and set(c.colluders) <= set(order)
    return simulate_alliance_deal(
        seed=c.s.rng.randrange(2**32),
        reglement=c.shift.rules(),
        mark_value=c.shift.min_stake or MARK,
        names=order,
        colluders=c.colluders if planted else None,
    )


def _deal(c: _Cercle) -> Play:
    """One deal, recorded by the croupier act by act as the players make them."""
    s = c.s
    rng, croupier, shift = s.rng, s.crew.croupier, c.shift
    yield pace.pause(rng, pace.BETWEEN_DEALS)
    order = dealing_order(shift, _next_dealer(c))
    sim = _simulated(c, order)
    yield pace.pause(rng, pace.DEALER_SHUFFLE)
    deal = deals.deal_open(actor=croupier, shift_id=shift.pk, dealer=order[-1], cut_by=order[-2])
    yield pace.pause(rng, pace.DEALING)
    state = deals.deal_cards(actor=croupier, deal_id=deal.pk, cards=[str(x) for x in sim.cards])
    caller = state.next_caller
    for call in sim.calls:
        yield pace.pause(rng, pace.CALL)
        assert caller is not None
        caller = deals.deal_call(
            actor=croupier, deal_id=deal.pk, player=caller, call=call.value
        ).next_caller
    yield pace.pause(rng, pace.CONTRACT)
    deals.deal_declare(actor=croupier, deal_id=deal.pk, contract=contract_dict(sim.contract))
    player: str | None = order[0]  # the Vorhand leads the first trick
    for trick in sim.tricks:
        for card in trick:
            yield pace.pause(rng, pace.TRICK_CARD)
            assert player is not None
            player = deals.deal_play(
                actor=croupier, deal_id=deal.pk, player=player, code=str(card)
            ).next_player
