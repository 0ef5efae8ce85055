"""One séance of Pharao, act by act, through the Pharao services, by the people it names.

The séance opens as at any table (the float counted and countersigned, the crew on duty); a sealed
single pack comes from the store (verified by the commissioner), is opened at the table, shuffled
by the croupier then the tailleur and cut by a patron. Each taille is the engine's seeded one
(``simulate_pharao_taille``): the tailleur shows the bottom card, then before each draw the
croupier records what the patrons and seats do with their standing stakes (marks on the stakes
that won, collections, raises, and reductions and withdrawals the chef de partie approves first,
in his own act), then the new stakes, then the tailleur lays the draw's two cards. Now and then a
patron tries a false paroli or an act the banker did not approve (the generator's mistakes), or
throws a stake on the layout once the draw's first card is out (a late stake): refused, and the
services record what is evidence. After the taille the tailleur records that no card is left and
the pack is shuffled and cut again for the next; at the close the chef counts it back.

``pharao_seance()`` is a play for ``timeline.play_together``: it yields the time before each act.
"""

from __future__ import annotations

import contextlib
import random
from collections import defaultdict

from casino.floor.models import Table
from casino.floor.play.pharao import tailles
from casino.floor.services import LateStake
from casino.games import pharao as engine
from casino.games.cards import RANKS
from casino.games.simulator import simulate_pharao_taille
from casino.simulation import pace
from casino.simulation.seance import (
    Crew,
    House,
    _close,
    _from_store,
    _mind_the_bank,
    _open,
    _Seance,
    table_for,
)
from casino.simulation.timeline import Play
from shoes import services as packs
from shoes.models import PackKind

GAME = "pharao"
RULES = "baden-1854"
LIMITS = (100, 10_000)
MISTAKES = 0.05  # per draw: a false paroli, an unapproved reduction... (the generator's)
LATE = 0.03  # per draw: a stake thrown on the layout after the draw's first card

# What the rules refuse at a real table, and the services refuse (and record when it is
# evidence): the simulation plays on. Anything else is a fault and stops it.
REFUSED = (
    tailles.StakeNotStanding,
    tailles.BadMark,
    tailles.NotApproved,
    tailles.RankExhausted,
    tailles.StakeRefused,
    tailles.FalseParoli,
    tailles.IllegalTaillePhase,
    LateStake,
)


def pharao_table_for(house: House, number: int) -> Table:
    """Table ``number``, a Pharao table under the posted baden-1854 if missing."""
    return table_for(house, number, game=GAME, rules=RULES, limits=LIMITS)


def pharao_seance(
    table: Table,
    crew: Crew,
    house: House,
    rng: random.Random,
    *,
    tailles_to_play: int,
    mistakes: float = MISTAKES,
    late: float = LATE,
) -> Play:
    """Open a séance at the Pharao ``table``, make a single pack ready, deal ``tailles_to_play``
    tailles, count the pack back and close (the closing count is what the ledger expects)."""
    s = _Seance(table, crew, house, rng)
    yield from _open(s)
    for n in range(tailles_to_play):
        if n == 0:
            yield from _first_pack(s)
        else:
            yield from _cut_again(s)
        yield from _mind_the_bank(s)
        yield from _taille(s, mistakes=mistakes, late=late)
        yield pace.pause(rng, pace.EMPTY_TALON)
        # The taille ended with its 52 cards out: the tailleur records an empty talon.
        assert s.pack is not None
        packs.cards_pass(actor=crew.tailleur, pack_id=s.pack.pk, undealt=[])
    if s.pack is not None:
        yield pace.pause(rng, pace.RETIRE)
        packs.pack_retire(actor=crew.chef, pack_id=s.pack.pk, counted={})
    yield from _close(s)


def _first_pack(s: _Seance) -> Play:
    yield pace.pause(s.rng, pace.FETCH_PACK)
    yield from _from_store(s, PackKind.SINGLE)
    assert s.pack is not None
    packs.pack_open(actor=s.crew.chef, pack_id=s.pack.pk, shift_id=s.open_shift.pk)
    yield from _cut_again(s)


def _cut_again(s: _Seance) -> Play:
    assert s.pack is not None
    yield pace.pause(s.rng, pace.SINGLE_SHUFFLE)
    packs.pack_shuffle(actor=s.crew.croupier, pack_id=s.pack.pk)
    yield pace.pause(s.rng, pace.SINGLE_SHUFFLE)
    packs.pack_shuffle(actor=s.crew.tailleur, pack_id=s.pack.pk)
    yield pace.pause(s.rng, pace.CUT)
    packs.pack_cut(actor=s.crew.tailleur, pack_id=s.pack.pk, cut_by="un ponte")


def _holder(rng: random.Random) -> str:
    """A seat marker most of the time, now and then a known patron's account."""
    return f"patron:{rng.randint(1, 6)}" if rng.random() < 0.2 else str(rng.randint(1, 9))


def _taille(s: _Seance, *, mistakes: float, late: float) -> Play:
    """One taille of the generator's, played through the services in the order its replay
    document gives (before each draw: the acts, then the new stakes, then the two cards)."""
    rng, crew = s.rng, s.crew
    sim = simulate_pharao_taille(
        seed=rng.randrange(2**32), reglement=s.open_shift.rules(), mistakes=mistakes
    )
    yield pace.pause(rng, pace.BOTTOM_CARD)
    taille = tailles.taille_open(
        actor=crew.tailleur, shift_id=s.open_shift.pk, bottom_card=str(sim.cards[-1])
    )
    acts: dict[int, list[engine.Action]] = defaultdict(list)
    for draw, action in sim.actions:
        acts[draw].append(action)
    stakes: dict[int, list[engine.Stake]] = defaultdict(list)
    for draw, stake in sim.stakes:
        stakes[draw].append(stake)
    placed: dict[str, int] = {}  # the generator's stake id: the recorded stake's
    for draw in range(1, engine.DRAWS + 1):
        yield pace.pause(rng, pace.BETWEEN_DRAWS)
        for action in acts[draw]:
            stake_id = placed.get(action.stake)
            if stake_id is None:  # refused when placed, or never there: nothing to act on
                continue
            yield from _act(s, stake_id, action)
        for stake in stakes[draw]:
            yield pace.pause(rng, pace.STAKE)
            with contextlib.suppress(REFUSED):
                placed[stake.id] = tailles.pharao_stake_place(
                    actor=crew.croupier,
                    taille_id=taille.pk,
                    ref=stake.id,
                    holder=_holder(rng),
                    rank=stake.rank.value,
                    amount=stake.amount,
                ).pk
        yield pace.pause(rng, pace.PHARAO_CARD)
        tailles.taille_lay_card(
            actor=crew.tailleur, taille_id=taille.pk, code=str(sim.cards[2 * draw - 2])
        )
        if rng.random() < late:
            yield pace.pause(rng, pace.PHARAO_CARD)
            try:
                tailles.pharao_stake_place(
                    actor=crew.croupier,
                    taille_id=taille.pk,
                    ref=f"late-{draw}",
                    holder=_holder(rng),
                    rank=rng.choice(RANKS).value,
                    amount=LIMITS[0],
                )
            except REFUSED:
                pass  # refused and recorded as a late_stake anomaly
            else:
                raise AssertionError("a stake after a draw's first card was accepted")
        yield pace.pause(rng, pace.PHARAO_CARD)
        tailles.taille_lay_card(
            actor=crew.tailleur, taille_id=taille.pk, code=str(sim.cards[2 * draw - 1])
        )


def _act(s: _Seance, stake_id: int, action: engine.Action) -> Play:
    """The croupier records what the patron does with a standing stake; a reduction or a
    withdrawal the generator has approved is approved first by the chef de partie (who never
    recorded a stake: the croupier places them all)."""
    crew, act = s.crew, action.act
    if act in (engine.Act.REDUCE, engine.Act.WITHDRAW) and action.approved_by is not None:
        yield pace.pause(s.rng, pace.APPROVAL)
        with contextlib.suppress(REFUSED):
            tailles.pharao_approval_give(
                actor=crew.chef, stake_id=stake_id, act=act.value, amount=action.amount
            )
    yield pace.pause(
        s.rng, pace.MARK if act in (engine.Act.PAROLI, engine.Act.APPE) else pace.STAKE
    )
    try:
        if act in (engine.Act.PAROLI, engine.Act.APPE):
            tailles.pharao_stake_mark(actor=crew.croupier, stake_id=stake_id, move=act.value)
        elif act is engine.Act.COLLECT:
            tailles.pharao_stake_collect(actor=crew.croupier, stake_id=stake_id)
        elif act is engine.Act.RAISE:
            assert action.amount is not None
            tailles.pharao_stake_raise(actor=crew.croupier, stake_id=stake_id, amount=action.amount)
        elif act is engine.Act.REDUCE:
            assert action.amount is not None
            tailles.pharao_stake_reduce(
                actor=crew.croupier, stake_id=stake_id, amount=action.amount
            )
        else:
            tailles.pharao_stake_withdraw(actor=crew.croupier, stake_id=stake_id)
    except REFUSED:
        pass
