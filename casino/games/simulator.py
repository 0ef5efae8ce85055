"""A seeded simulator: shuffle, cut and burn a sealed pack, deal whole tailles, place random stakes;
for Pharao, whole tailles with stakes, marks, approvals and the occasional refused act; for
Alliance, whole deals by simple legal players (random legal calls, contracts and cards).

Used by the tests (property and Monte Carlo checks) and by the demo casino. Same seed, same play.

>>> sim = simulate_taille(seed=7, reglement=Reglement())
>>> sim.taille.coups[0].number, len(sim.talon) == 312
(1, True)
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from casino.games.alliance import (
    AllianceContract,
    AllianceDeal,
    Call,
    Contract,
    Game,
    LeverContract,
    Outcome,
    SoloContract,
    called_rank,
    contract_dict,
    play_deal,
    strengths,
)
from casino.games.cards import ONE_PACK, RANKS, SINGLE_PACK, SIXAIN, Card, Composition, Suit
from casino.games.errors import PharaoRefusal
from casino.games.pharao import Act, Action, TailleDeal, play_taille
from casino.games.pharao import Stake as PharaoStake
from casino.games.pharao import Taille as PharaoTaille
from casino.games.reglement import Reglement
from casino.games.trente_et_quarante import (
    Chance,
    Prisoner,
    RefaitChoice,
    Stake,
    Taille,
    play_talon,
)

MAX_COUPS = 80  # more than a sixain can deal (each coup takes at least 8 cards)


def shuffled(rng: random.Random, composition: Composition = SIXAIN) -> list[Card]:
    cards = list(composition.cards)
    rng.shuffle(cards)
    return cards


def cut(cards: Sequence[Card], position: int) -> list[Card]:
    """The galerie's cut: the cards above the blank card go under the rest."""
    return [*cards[position:], *cards[:position]]


def random_stakes(
    rng: random.Random, coup: int, count: int, reglement: Reglement, *, prefix: str = "s"
) -> list[Stake]:
    low = reglement.min_stake or 100
    high = reglement.max_stake or 100_000
    stakes = []
    for i in range(count):
        amount = rng.choice([low, low * 2, low * 5, low * 10, rng.randint(low, high)])
        amount = min(max(amount, low), high)
        insured = (
            reglement.insurance and amount >= reglement.insurance_min_stake and rng.random() < 0.3
        )
        on_refait: RefaitChoice | None = None
        if reglement.refait_mode == "choice":
            pick = rng.random()
            if pick < 0.4:
                on_refait = "half"
            elif pick < 0.8:
                on_refait = "prison"
            elif pick < 0.9:
                on_refait = ("move", rng.choice(list(Chance)))
        stakes.append(
            Stake(f"{prefix}{coup}-{i}", rng.choice(list(Chance)), amount, insured, on_refait)
        )
    return stakes


@dataclass(frozen=True)
class SimulatedTaille:
    seed: int
    reglement: Reglement
    cut_at: int
    talon: tuple[Card, ...]  # after shuffle, cut and burn
    stakes: dict[int, list[Stake]]
    taille: Taille

    def replay_document(self, reglement_spec: Any = None) -> dict[str, Any]:
        """The replay input (REPLAY.md) of this taille: what a regulator would be handed."""
        dealt = len(self.taille.coups)
        stakes = []
        for coup in range(1, dealt + 1):
            for s in self.stakes.get(coup, []):
                item: dict[str, Any] = {
                    "id": s.id,
                    "coup": coup,
                    "chance": s.chance.value,
                    "amount": s.amount,
                }
                if s.insured:
                    item["insured"] = True
                if s.on_refait is not None:
                    item["on_refait"] = (
                        s.on_refait
                        if isinstance(s.on_refait, str)
                        else f"move:{s.on_refait[1].value}"
                    )
                stakes.append(item)
        return {
            "game": "trente-et-quarante",
            "reglement": reglement_spec if reglement_spec is not None else self.reglement.name,
            "cards": [str(c) for c in self.talon],
            "stakes": stakes,
        }


def simulate_taille(
    *,
    seed: int,
    reglement: Reglement,
    stakes_per_coup: int = 5,
    prison: Sequence[Prisoner] = (),
    composition: Composition = SIXAIN,
) -> SimulatedTaille:
    rng = random.Random(seed)
    cards = shuffled(rng, composition)
    cut_at = rng.randint(1, len(cards) - 1)
    talon = tuple(cut(cards, cut_at)[reglement.burn :])
    stakes = {
        coup: random_stakes(rng, coup, stakes_per_coup, reglement)
        for coup in range(1, MAX_COUPS + 1)
    }
    taille = play_talon(talon, stakes, reglement, prison=prison, composition=composition)
    return SimulatedTaille(seed, reglement, cut_at, talon, stakes, taille)


# --- Pharao ---------------------------------------------------------------------------------------

PHARAO_ACTS_WEIGHTS = {  # what a player does with a stake that won the draw just made
    Act.PAROLI: 3,
    Act.APPE: 2,
    Act.COLLECT: 2,
    None: 3,  # lets it stand as it is
}


@dataclass(frozen=True)
class SimulatedPharao:
    seed: int
    reglement: Reglement
    cards: tuple[Card, ...]  # the 52 in dealing order, the bottom card last
    stakes: tuple[tuple[int, PharaoStake], ...]
    actions: tuple[tuple[int, Action], ...]
    taille: PharaoTaille

    def replay_document(self, reglement_spec: Any = None) -> dict[str, Any]:
        """The replay input (REPLAY.md, Pharao) of this taille."""
        actions = []
        for draw, a in self.actions:
            item: dict[str, Any] = {"draw": draw, "stake": a.stake, "do": a.act.value}
            if a.amount is not None:
                item["amount"] = a.amount
            if a.act in (Act.WITHDRAW, Act.REDUCE):
                item["approved_by"] = a.approved_by
            actions.append(item)
        return {
            "game": "pharao",
            "reglement": reglement_spec if reglement_spec is not None else self.reglement.name,
            "cards": [str(c) for c in self.cards],
            "stakes": [
                {"id": s.id, "draw": draw, "rank": s.rank.value, "amount": s.amount}
                for draw, s in self.stakes
            ],
            "actions": actions,
        }


def simulate_pharao_taille(
    *,
    seed: int,
    reglement: Reglement,
    stakes_per_draw: float = 1.5,
    mistakes: float = 0.1,
) -> SimulatedPharao:
    """A seeded taille of Pharao: a shuffled single pack, new stakes before each draw (about
    ``stakes_per_draw``), marks, collects, approved and unapproved withdrawals and reductions,
    raises, and with probability ``mistakes`` per draw an act the rules refuse (a false paroli, an
    unapproved reduction, a stake on an exhausted rank...). Played through ``TailleDeal`` as it
    goes (to act on what stands), then once more through ``play_taille``, which is returned."""
    rng = random.Random(seed)
    cards = shuffled(rng, SINGLE_PACK)
    deal = TailleDeal(cards[-1], reglement)
    low = reglement.min_stake or 100
    high = reglement.max_stake or 10_000
    stakes: list[tuple[int, PharaoStake]] = []
    actions: list[tuple[int, Action]] = []
    weights = list(PHARAO_ACTS_WEIGHTS.values())
    count = 0
    for draw in range(1, 27):
        for s in list(deal.standing.values()):
            act: Act | None = None
            amount: int | None = None
            approved: str | None = None
            if s.won_on == draw - 1:
                act = rng.choices(list(PHARAO_ACTS_WEIGHTS), weights)[0]
            elif rng.random() < 0.08:
                act = rng.choice([Act.WITHDRAW, Act.REDUCE, Act.RAISE])
                approved = "banker"
            if rng.random() < mistakes / 3:  # a mistake, or a cheat: refused by the rules
                act = rng.choice(list(Act))
                approved = None
            if act is None:
                continue
            if act in (Act.REDUCE, Act.RAISE):
                amount = rng.choice([1, low, s.base // 2 or 1, high])
            action = Action(
                s.id, act, amount, approved if act in (Act.WITHDRAW, Act.REDUCE) else None
            )
            actions.append((draw, action))
            with contextlib.suppress(PharaoRefusal):
                deal.act(action)
        if rng.random() < mistakes:  # an act on a stake that is not there
            actions.append((draw, Action(f"x{draw}", rng.choice([Act.PAROLI, Act.COLLECT]))))
        for _ in range(rng.choice([0, 1, 1, 2, 3]) if stakes_per_draw else 0):
            count += 1
            amount = rng.choice([low, low * 2, low * 5, rng.randint(low, high)])
            stake = PharaoStake(f"p{count}", rng.choice(RANKS), min(max(amount, 1), high))
            stakes.append((draw, stake))
            with contextlib.suppress(PharaoRefusal):
                deal.place(stake)
        deal.lay(cards[2 * draw - 2])
        deal.lay(cards[2 * draw - 1])
    taille = play_taille(cards, stakes, actions, reglement)
    return SimulatedPharao(seed, reglement, tuple(cards), tuple(stakes), tuple(actions), taille)


# --- Alliance -------------------------------------------------------------------------------------

ALLIANCE_NAMES = ("ana", "ben", "carl", "dora", "emil", "fritz")


@dataclass(frozen=True)
class SimulatedAlliance:
    seed: int
    reglement: Reglement
    players: tuple[str, ...]
    mark_value: int
    cards: tuple[Card, ...]  # the 52 in dealing order
    calls: tuple[Call, ...]
    contract: Contract
    tricks: tuple[tuple[Card, ...], ...]
    outcome: Outcome

    def replay_document(self, reglement_spec: Any = None) -> dict[str, Any]:
        """The replay input (REPLAY.md, Alliance) of this deal."""
        return {
            "game": "alliance",
            "reglement": reglement_spec if reglement_spec is not None else self.reglement.name,
            "players": list(self.players),
            "mark_value": self.mark_value,
            "cards": [str(c) for c in self.cards],
            "auction": [c.value for c in self.calls],
            "contract": contract_dict(self.contract),
            "tricks": [[str(c) for c in t] for t in self.tricks],
        }


def alliance_contract(
    rng: random.Random,
    deal: AllianceDeal,
    resistance: float = 0.5,
    partner: Sequence[Card] = (),
) -> Contract:
    """A legal contract for the declarer's game, chosen at random (RULES.md 3.3); a colluding
    declarer calls a card of ``partner`` (his partner's hand) when the called rank allows."""
    assert deal.declarer is not None
    assert deal.table is not None
    seat = deal.players.index(deal.declarer)
    hand = list(deal.hands[seat])
    if deal.game is Game.SOLO:
        others = [p for p in deal.players if p != deal.declarer]
        resister = rng.choice(others) if rng.random() < resistance else None
        return SoloContract(rng.choice(list(Suit)), resister)
    if deal.game is Game.LEVER:
        turn = rng.randint(1, len(deal.table.down))
        take = rng.random() < 0.5
        discard: tuple[Card, ...] = ()
        if take:
            pool = hand + list(deal.table.cards)
            discard = tuple(rng.sample(pool, len(deal.table.cards)))
            hand = [c for c in pool if c not in discard]
        called = _callable(rng, hand, partner)
        return LeverContract(turn, called, take, discard)
    return AllianceContract(rng.choice(list(Suit)), _callable(rng, hand, partner))


def _callable(rng: random.Random, hand: list[Card], partner: Sequence[Card] = ()) -> Card:
    r = called_rank(hand)
    cards = [c for c in ONE_PACK if c.rank is r and c not in hand]
    return rng.choice([c for c in cards if c in partner] or cards)


def alliance_card(rng: random.Random, deal: AllianceDeal, style: str = "random") -> Card:
    """A legal card for the player whose turn it is: at random, or (``greedy``) the highest
    legal card when the trick is his to take, else the lowest."""
    legal = list(deal.legal_cards())
    if style == "random" or deal.trumps is None:
        return rng.choice(legal)
    strength = strengths(deal.trumps)

    def rank(c: Card) -> tuple[bool, int]:
        return (c.suit is deal.trumps, strength[c])

    return max(legal, key=rank) if rng.random() < 0.6 else min(legal, key=rank)


def simulate_alliance_deal(
    *,
    seed: int,
    players: int = 4,
    reglement: Reglement | None = None,
    mark_value: int = 100,
    bid: float = 0.35,
    resistance: float = 0.5,
    style: str = "random",
    names: Sequence[str] | None = None,
    colluders: tuple[str, str] | None = None,
) -> SimulatedAlliance:
    """A seeded deal of Alliance by simple legal players: a shuffled pack dealt by RULES.md 3.1,
    random legal calls (each call a game or a hold with probability ``bid``), a random legal
    contract (a résistance with probability ``resistance`` in a solo), random legal cards (or
    ``greedy``). Played through ``AllianceDeal`` as it goes, then once more through ``play_deal``,
    whose outcome is returned. ``names``: the players in dealing order (the first ``players`` of
    ``ALLIANCE_NAMES`` by default).

    ``colluders``: two of the players who see each other's hands and cheat as a colluding pair
    would (the collusion detector's planted pair, ``casino.games.alliance_collusion``): one whose
    partner holds a card of the rank he would call bids the lowest game with an ally (alliance,
    else lever) when it is legal and his partner is not already the highest bidder, and as
    declarer he calls a card his partner holds when the called rank allows. Everything else they
    do as the others; without colluders the same seed gives the same deal as ever.

    >>> sim = simulate_alliance_deal(seed=1, players=5)
    >>> len(sim.tricks), sum(sim.outcome.marks.values())
    (10, 0)
    >>> sim = simulate_alliance_deal(seed=2, colluders=("ana", "carl"))
    >>> from casino.games.cards import card
    >>> o = sim.outcome
    >>> o.declarer, o.game.value, str(o.called), o.ally, card("KC") in o.hands[2]
    ('ana', 'alliance', 'KC', 'carl', True)
    """
    rules = reglement or Reglement()
    rng = random.Random(seed)
    cards = shuffled(rng, SINGLE_PACK)
    names = tuple(names) if names is not None else ALLIANCE_NAMES[:players]
    partner_of = {} if colluders is None else dict([colluders, colluders[::-1]])
    deal = AllianceDeal(names, rules, mark_value=mark_value)
    for c in cards:
        deal.receive(c)
    while deal.next_caller is not None:
        legal = [c for c in deal.legal_calls() if c is not Call.PASS]
        tipped = _colluding_call(deal, partner_of, legal)
        if tipped is not None:
            deal.call(tipped)
        else:
            deal.call(rng.choice(legal) if legal and rng.random() < bid else Call.PASS)
    partner = partner_of.get(deal.declarer or "")
    partner_hand = () if partner is None else tuple(deal.hands[names.index(partner)])
    contract = deal.declare(alliance_contract(rng, deal, resistance, partner_hand))
    played: list[Card] = []
    while deal.next_player is not None:
        c = alliance_card(rng, deal, style)
        deal.play(c)
        played.append(c)
    tricks = tuple(tuple(played[i : i + len(names)]) for i in range(0, len(played), len(names)))
    calls = tuple(deal.calls)
    outcome = play_deal(names, cards, calls, contract, tricks, rules, mark_value=mark_value)
    return SimulatedAlliance(
        seed, rules, names, mark_value, tuple(cards), calls, contract, tricks, outcome
    )


def _colluding_call(
    deal: AllianceDeal, partner_of: Mapping[str, str], legal: Sequence[Call]
) -> Call | None:
    """A colluder's call, or None when he calls as the others do: the lowest game with an ally
    when his partner holds a card of the rank he would call and is not the highest bidder."""
    caller = deal.next_caller
    partner = partner_of.get(caller or "")
    if caller is None or partner is None or deal.declarer == partner:
        return None
    rank = called_rank(deal.hands[deal.players.index(caller)])
    if not any(c.rank is rank for c in deal.hands[deal.players.index(partner)]):
        return None
    return next((c for c in (Call.ALLIANCE, Call.LEVER) if c in legal), None)


def simulate_alliance_seance(
    *,
    seed: int,
    players: int = 4,
    deals: int = 40,
    colluders: tuple[str, str] | None = None,
    reglement: Reglement | None = None,
    mark_value: int = 100,
    style: str = "random",
) -> list[SimulatedAlliance]:
    """A séance of ``deals`` deals at one table of ``players``: the first of ``ALLIANCE_NAMES``,
    the Vorhand passing round the table from deal to deal, each deal seeded from ``seed`` and its
    number (``simulate_alliance_deal``, with the planted ``colluders`` if any).

    >>> seance = simulate_alliance_seance(seed=1, deals=3)
    >>> [sim.players[0] for sim in seance]
    ['ana', 'ben', 'carl']
    """
    table = ALLIANCE_NAMES[:players]
    return [
        simulate_alliance_deal(
            seed=seance_deal_seed(seed, number),
            reglement=reglement,
            mark_value=mark_value,
            style=style,
            names=table[number % players :] + table[: number % players],
            colluders=colluders,
        )
        for number in range(deals)
    ]


def seance_deal_seed(seed: int, number: int) -> int:
    """The seed of deal ``number`` (0-based) of the séance seeded ``seed``: distinct for distinct
    (seed, number) below a million deals a séance."""
    return seed * 1_000_000 + number
