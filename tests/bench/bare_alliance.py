"""A bare loop doing the work of Alliance's engine (``play_deal``) in flat code, the honest floor
for ``make bench BENCH=games``: the deal by the plan, the auction, the contract, every card played
checked for what the engine decides from it, each trick's winner, who wins and the payments, over
the same inputs, with plain ints, bit masks and tuples instead of typed records.

Cards are read once each by their code (a str, hashed in C) into a bit of a 52-bit mask: a hand
is a mask, "holds the card" is a bit test, "holds the suit led" is a mask test, so no ``Card`` is
hashed or compared. A fault raises ``BareFault`` naming the engine's ``where``; only the first
fault's place is kept, not its words.

``make bench BENCH=games`` times it beside the engine, after checking every deal with ``agrees``.
``python -m tests.bench.bare_alliance`` also checks deals made illegal on purpose (``variants``):
both refuse at the same place or settle alike (``tests/games/test_bare_loops.py`` runs a part).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from operator import attrgetter, itemgetter
from typing import Any

from casino.games.alliance import (
    AllianceContract,
    Call,
    Contract,
    LeverContract,
    SoloContract,
    dealing_plan,
    play_deal,
)
from casino.games.cards import Card, Suit
from casino.games.errors import GameError
from casino.games.reglement import Reglement, reglement
from casino.games.simulator import SimulatedAlliance, simulate_alliance_deal

# What the bare loop was written for: the baden-1854 figures (RULES.md 3.6). They are baked into
# the tables below, so another règlement must be refused, not silently misread.
WRITTEN_FOR = (
    {"alliance": 2, "lever_forced": 2, "lever": 4, "solo": 4},
    {"fahne": 4, "J": 3, "Q": 2, "K": 1},
    {"first_six": 2, "all": 6, "neutral": 4, "both_lose": 4},
)

# --- tables, built once ---------------------------------------------------------------------------
# A card is the bit 1 << (suit * 13 + rank), suits S H D C (0..3), ranks A 2 .. 9 T J Q K (0..12).

_SUITS = "SHDC"
_RANKS = "A23456789TJQK"
_RED = (1, 2)
BIT: dict[str, int] = {
    r + s: 1 << (i * 13 + j) for i, s in enumerate(_SUITS) for j, r in enumerate(_RANKS)
}
SUIT_MASK = tuple(((1 << 13) - 1) << (13 * i) for i in range(4))
RANK_MASK = tuple(sum(1 << (13 * i + j) for i in range(4)) for j in range(13))
FULL = (1 << 52) - 1
SUIT_NO = {s: i for i, s in enumerate(_SUITS)}
SUIT_OF_ENUM = {Suit(s): i for i, s in enumerate(_SUITS)}
CALLED_ORDER = tuple(_RANKS.index(r) for r in "KQJT98765432A")  # 3.3: the rank a declarer calls


def _order(suit: int, trumps: int) -> str:
    """The ranks of ``suit`` highest first under ``trumps`` (RULES.md 3.4)."""
    if suit == trumps:
        return "AKQJT98765432"
    return "KQJAT98765432" if suit in _RED else "KQJT98765432A"


# Under each trumps: code -> (bit, suit, key), where the key orders a trick's candidates: a trump
# 14..26 above any card of the suit led 1..13 (a card of a third suit never wins, so never keyed).
INFO: tuple[dict[str, tuple[int, int, int]], ...] = tuple(
    {
        r + s: (
            1 << (i * 13 + _RANKS.index(r)),
            i,
            13 - _order(i, t).index(r) + (13 if i == t else 0),
        )
        for i, s in enumerate(_SUITS)
        for r in _RANKS
    }
    for t in range(4)
)
# Under each trumps, for each suit: the bits of its cards highest first (the ally below a called
# card that lies is the first of the lower ones in another player's hand, 3.3).
ORDER_BITS = tuple(
    tuple(tuple(1 << (i * 13 + _RANKS.index(r)) for r in _order(i, t)) for i in range(4))
    for t in range(4)
)


def _figures(t: int, honours: dict[str, int]) -> tuple[tuple[int, int], ...]:
    """The figures of trumps ``t`` as (bit, honour value), the Fahne first (RULES.md 3.4)."""
    fahne = "9" if t in _RED else "3"
    return tuple(
        (1 << (t * 13 + _RANKS.index(r)), honours[k])
        for r, k in ((fahne, "fahne"), ("J", "J"), ("Q", "Q"), ("K", "K"))
    )


FIGURES = tuple(_figures(t, WRITTEN_FOR[1]) for t in range(4))
FAHNE = tuple(f[0][0] for f in FIGURES)
# Under each trumps: the figures' bits, and the honours of each set of them (a mask of those bits).
HONOURS = tuple(
    (
        sum(b for b, _ in f),
        {
            sum(b for i, (b, _) in enumerate(f) if pick >> i & 1): sum(
                v for i, (_, v) in enumerate(f) if pick >> i & 1
            )
            for pick in range(16)
        },
    )
    for f in FIGURES
)
GAME_KEYS = ("", "alliance", "lever", "solo")

# By number of players: each seat's positions in the pack, the table's, as C getters (3.1).
_PLANS = {n: dealing_plan(n) for n in (4, 5, 6)}
SEATS = {
    n: tuple(itemgetter(*[p for p, s in enumerate(plan) if s == seat]) for seat in range(n))
    for n, plan in _PLANS.items()
}
TABLE_AT = {n: tuple(p for p, s in enumerate(plan) if s < 0) for n, plan in _PLANS.items()}
TRICKS = {4: 12, 5: 10, 6: 8}
TO_WIN = {4: 7, 5: 6, 6: 5}
KINDS = ("game", "honours", "bonus", "resistance", "neutral", "both_lose", "figure")

_code = attrgetter("code")
PASS, ALLIANCE, LEVER, SOLO, HOLD = Call.PASS, Call.ALLIANCE, Call.LEVER, Call.SOLO, Call.HOLD


class BareFault(Exception):
    """The bare loop refuses the deal; the argument is where, as the replay names it."""


def bare_alliance(
    players: Sequence[str],
    cards: Sequence[Card],
    calls: Sequence[Call],
    contract: Contract,
    tricks: Sequence[Sequence[Card]],
    rules: Reglement,
    *,
    mark_value: int = 0,
) -> tuple[tuple[int, ...], tuple[Any, ...]]:
    """The engine's work on one deal, flat: returns each seat's net marks and what a replay writes
    out as bare tuples (seats as ints, cards as codes, payments as (payer, payee, kind, marks))."""
    values, honours, bonuses = rules.alliance_values, rules.alliance_honours, rules.alliance_bonuses
    assert (values, honours, bonuses) == WRITTEN_FOR, (values, honours, bonuses)
    n = len(players)
    if n not in TRICKS or len(set(players)) != n:
        raise BareFault("players")

    # The pack: 52 cards, each once (52 distinct powers of two sum to FULL, any repeat does not).
    codes = list(map(_code, cards))
    bits = list(map(BIT.__getitem__, codes))
    if len(bits) != 52 or sum(bits) != FULL:
        raise BareFault("cards")
    hands = [sum(get(bits)) for get in SEATS[n]]
    table = [codes[p] for p in TABLE_AT[n]]
    couleur = SUIT_NO[table[0][1]]

    # The auction (3.2).
    highest = passes = 0
    declarer = -1
    vorhand_passed = forced = over = False
    for i, call in enumerate(calls):
        if over:
            raise BareFault(f"auction[{i}]")
        seat = i % n
        if call is PASS:
            passes += 1
            if not seat:
                vorhand_passed = True
            if not highest:
                if passes == n:  # all pass in the first round: the Vorhand's forced lever
                    highest, declarer, forced, over = 2, 0, True, True
            elif passes == n - 1:
                over = True
        elif call is HOLD:
            if seat or vorhand_passed or declarer <= 0:
                raise BareFault(f"auction[{i}]")
            declarer = passes = 0
        else:
            level = 1 if call is ALLIANCE else 2 if call is LEVER else 3 if call is SOLO else 0
            if level <= highest:
                raise BareFault(f"auction[{i}]")
            highest, declarer, passes = level, seat, 0
    if not over:
        raise BareFault("auction")

    # The contract (3.3).
    mine = hands[declarer]
    discards: tuple[str, ...] = ()
    called: str | None = None
    ally = resister = -1
    if highest == 3:
        if not isinstance(contract, SoloContract):
            raise BareFault("contract")
        trumps = SUIT_OF_ENUM[contract.trumps]
        if contract.resistance is not None:
            if contract.resistance not in players:
                raise BareFault("contract.resistance")
            resister = players.index(contract.resistance)
            if resister == declarer:
                raise BareFault("contract.resistance")
    else:
        if highest == 2:
            if not isinstance(contract, LeverContract):
                raise BareFault("contract")
            if not 1 <= contract.turn < len(table):
                raise BareFault("contract.turn")
            trumps = SUIT_NO[table[contract.turn][1]]
            if contract.take:
                pool = mine + sum(BIT[c] for c in table)
                for i, c in enumerate(contract.discard):
                    b = BIT[c.code]
                    if not pool & b:  # neither his nor the table's, or discarded already
                        raise BareFault(f"contract.discard[{i}]")
                    pool -= b
                if len(contract.discard) != len(table):
                    raise BareFault("contract.discard")
                mine = pool
                discards = tuple(c.code for c in contract.discard)
            elif contract.discard:
                raise BareFault("contract.discard")
        else:
            if not isinstance(contract, AllianceContract):
                raise BareFault("contract")
            trumps = SUIT_OF_ENUM[contract.trumps]
        called = contract.called.code
        rank = 0
        for rank in CALLED_ORDER:  # 3.3: the first rank of which he does not hold all four
            if mine & RANK_MASK[rank] != RANK_MASK[rank]:
                break
        b = BIT[called]
        if _RANKS.index(called[0]) != rank or mine & b:
            raise BareFault("contract.called")
        order = ORDER_BITS[trumps][SUIT_NO[called[1]]]
        held = sum(hands) - hands[declarer]  # the others' hands (a take changes only his)
        for o in order[order.index(b) :]:
            if held & o:
                ally = 0
                while ally == declarer or not hands[ally] & o:
                    ally += 1
                break
    hands[declarer] = mine
    dealt = tuple(hands)  # the hands played, after any take: who played a card is who held it

    # The play (3.4): every card in the hand of the seat whose turn it is, following suit when he
    # can; the highest trump, else the highest card of the suit led, takes the trick.
    if len(tricks) != TRICKS[n]:
        raise BareFault("tricks")
    info = INFO[trumps]
    won = [0] * n  # the cards in each seat's tricks
    taken = [0] * n
    winners: list[int] = []
    leader = 0
    for t, trick in enumerate(tricks):
        if len(trick) != n:
            raise BareFault(f"tricks[{t}]")
        seat = winner = leader
        led = -1
        best = gathered = 0
        for c in trick:
            b, suit, key = info[c.code]
            h = hands[seat]
            if not h & b:
                raise BareFault(f"tricks[{t}][{(seat - leader) % n}]")
            if led < 0:
                led, best = suit, key
            elif suit == led:
                if key > best:
                    best, winner = key, seat
            elif h & SUIT_MASK[led]:
                raise BareFault(f"tricks[{t}][{(seat - leader) % n}]")
            elif suit == trumps and key > best:
                best, winner = key, seat
            hands[seat] = h - b
            gathered += b
            seat = seat + 1 if seat + 1 < n else 0
        won[winner] += gathered
        taken[winner] += 1
        winners.append(winner)
        leader = winner

    # Who wins, what is paid (3.5, 3.6).
    figure_bits, honour_of = HONOURS[trumps]
    fahne = FAHNE[trumps]
    fahne_with = -1
    for s in range(n):
        if won[s] & fahne:
            fahne_with = s
            break
    double = 2 if trumps == couleur else 1
    net = [0] * n
    neutrals: tuple[int, ...] = ()
    if resister < 0:
        side = (declarer,) if ally < 0 else (declarer, ally)
        side_won = won[declarer] | (won[ally] if ally >= 0 else 0)
        others_won = sum(won) ^ side_won  # not FULL: table cards and discards are nobody's
        ours = taken[declarer] + (taken[ally] if ally >= 0 else 0)
        if ours >= TO_WIN[n]:
            wins = True
        elif 2 * ours == TRICKS[n]:  # equal tricks: the Fahne, then the honours
            if fahne_with >= 0:
                wins = fahne_with in side
            else:
                wins = honour_of[side_won & figure_bits] > honour_of[others_won & figure_bits]
        else:
            wins = False
        others = tuple([s for s in range(n) if s != declarer and s != ally])
        if wins:
            winning, losing, winning_won = tuple(sorted(side)), others, side_won
        else:
            winning, losing, winning_won = others, tuple(sorted(side)), others_won
        game = values["lever_forced" if forced else GAME_KEYS[highest]] * double
        honour = honour_of[winning_won & figure_bits] * double
        bonus = 0
        if set(winners).issubset(winning):
            bonus = bonuses["all"] * double
        elif set(winners[:6]).issubset(winning):
            bonus = bonuses["first_six"] * double
        # Each loser pays each winner the whole, in payers' then payees' order, kinds in order.
        payments = [
            (loser, payee, kind, marks)
            for loser in losing
            for payee in winning
            for kind, marks in ((0, game), (1, honour), (2, bonus))
            if marks
        ]
        each = game + honour + bonus
        for s in losing:
            net[s] = -each * len(winning)
        for s in winning:
            net[s] = each * len(losing)
    else:
        payments = []
        neutrals = tuple([s for s in range(n) if s != declarer and s != resister])
        most = max(taken)
        top = [s for s in range(n) if taken[s] == most]
        alone = -1
        if len(top) == 1:
            alone = top[0]
        elif fahne_with >= 0 and (fahne_with in top or fahne_with in neutrals):
            alone = fahne_with
        if alone in (declarer, resister):
            loser = resister if alone == declarer else declarer
            payments.append((loser, alone, 3, 2 * values["solo"] * double))
        elif alone >= 0:
            marks = bonuses["neutral"] * double
            honour = honour_of[won[alone] & figure_bits] * double
            for payer in (declarer, resister):
                payments.append((payer, alone, 4, marks))
                if honour:
                    payments.append((payer, alone, 1, honour))
        else:
            paid = -1
            marks = bonuses["both_lose"] * double
            for payer in (declarer, resister):
                for step in range(1, n):
                    seat = (payer + step) % n
                    if seat != paid and seat in neutrals:
                        payments.append((payer, seat, 5, marks))
                        paid = seat
                        break
        # The figure rule: a neutral who did not win is paid each figure in his tricks by whoever
        # played it (who held it), unless he played it himself.
        owed: dict[tuple[int, int], int] = {}
        for neutral in neutrals:
            if neutral == alone or not won[neutral] & figure_bits:
                continue
            for f, v in FIGURES[trumps]:
                if won[neutral] & f:
                    by = 0
                    while not dealt[by] & f:
                        by += 1
                    if by != neutral:
                        owed[by, neutral] = owed.get((by, neutral), 0) + v * double
        payments.extend([(by, neutral, 6, v) for (by, neutral), v in owed.items()])
        payments.sort()
        winning = () if alone < 0 else (alone,)
        for payer, payee, _, marks in payments:
            net[payer] -= marks
            net[payee] += marks
    fee = rules.cercle_fee
    record = (
        tuple([get(codes) for get in SEATS[n]]),
        tuple(table),
        couleur,
        declarer,
        highest,
        forced,
        trumps,
        called,
        None if ally < 0 else ally,
        None if resister < 0 else resister,
        neutrals,
        discards,
        (0, *winners[:-1]),  # each trick's leader
        tuple(winners),
        tuple(taken),
        None if fahne_with < 0 else fahne_with,
        winning,
        tuple(payments),  # (payer, payee, kind as an index of KINDS, marks)
        fee,
        tuple([m * mark_value - fee for m in net]),
    )
    return tuple(net), record


# --- the check -----------------------------------------------------------------------------------


def agrees(s: SimulatedAlliance, rules: Reglement) -> bool:
    """Whether the bare loop and ``play_deal`` agree on a deal: its payments, net marks, trick
    winners and the rest of what the replay writes out that the bare loop computes."""
    o = play_deal(s.players, s.cards, s.calls, s.contract, s.tricks, rules)
    net, r = bare_alliance(s.players, s.cards, s.calls, s.contract, s.tricks, rules)
    names = s.players

    def name(seat: int | None) -> str | None:
        return None if seat is None else names[seat]

    return (
        net == tuple(o.marks[p] for p in names)
        and [(names[a], names[b], m, KINDS[k]) for a, b, k, m in r[17]]
        == [(p.payer, p.payee, p.marks, p.kind) for p in o.payments]
        and [names[w] for w in r[13]] == [t.winner for t in o.tricks]
        and [names[w] for w in r[12]] == [t.leader for t in o.tricks]
        and r[0] == tuple(tuple(c.code for c in h) for h in o.hands)
        and (name(r[3]), r[5], _SUITS[r[6]], r[7])
        == (o.declarer, o.forced, o.trumps.value, o.called and o.called.code)
        and (name(r[8]), name(r[9]), tuple(names[x] for x in r[10]))
        == (o.ally, o.resister, o.neutrals)
        and r[11] == tuple(c.code for c in o.discards)
        and dict(zip(names, r[14], strict=True)) == o.taken
        and name(r[15]) == o.fahne_with
        and tuple(names[w] for w in r[16]) == o.winners
    )


def outcomes(
    players: Sequence[str],
    cards: Sequence[Card],
    calls: Sequence[Call],
    contract: Contract,
    tricks: Sequence[Sequence[Card]],
    rules: Reglement,
) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """What the engine and the bare loop make of a deal, each as ``("refused", where)`` or
    ``("settled", payments, trick winners, ally)`` in names, to compare."""
    try:
        o = play_deal(players, cards, calls, contract, tricks, rules)
        engine: tuple[Any, ...] = (
            "settled",
            [(p.payer, p.payee, p.marks, p.kind) for p in o.payments],
            [t.winner for t in o.tricks],
            o.ally,
        )
    except GameError as fault:
        engine = ("refused", fault.where)
    try:
        _, r = bare_alliance(players, cards, calls, contract, tricks, rules)
        bare: tuple[Any, ...] = (
            "settled",
            [(players[a], players[b], m, KINDS[k]) for a, b, k, m in r[17]],
            [players[w] for w in r[13]],
            None if r[8] is None else players[r[8]],
        )
    except BareFault as fault:
        bare = ("refused", fault.args[0])
    return engine, bare


def variants(
    s: SimulatedAlliance, rng: random.Random
) -> list[tuple[Sequence[Call], Contract, tuple[tuple[Card, ...], ...]]]:
    """The deal changed on purpose, most of them illegal: two cards of the play swapped (three
    times), one call changed, the contract changed (another lever card turned, another resister or
    nobody at the table), and each other card of the called rank called instead (so a called card
    lying on the table or among the discards, whose ally is below it, is called too)."""
    played = [c for t in s.tricks for c in t]
    n = len(s.players)
    made: list[tuple[Sequence[Call], Contract, tuple[tuple[Card, ...], ...]]] = []
    for _ in range(3):
        i, j = rng.sample(range(len(played)), 2)
        swapped = list(played)
        swapped[i], swapped[j] = swapped[j], swapped[i]
        tricks = tuple(tuple(swapped[k : k + n]) for k in range(0, len(swapped), n))
        made.append((s.calls, s.contract, tricks))
    calls = list(s.calls)
    calls[rng.randrange(len(calls))] = rng.choice(list(Call))
    made.append((calls, s.contract, s.tricks))
    c = s.contract
    if isinstance(c, SoloContract):
        made.append((s.calls, SoloContract(c.trumps, rng.choice([*s.players, "nobody"])), s.tricks))
    else:
        if isinstance(c, LeverContract):
            made.append(
                (s.calls, LeverContract(rng.randint(0, 4), c.called, c.take, c.discard), s.tricks)
            )
        for suit in Suit:
            called = Card(c.called.rank, suit)
            if called != c.called:
                other = (
                    AllianceContract(c.trumps, called)
                    if isinstance(c, AllianceContract)
                    else LeverContract(c.turn, called, c.take, c.discard)
                )
                made.append((s.calls, other, s.tricks))
    return made


def changed_alike(sims: Sequence[SimulatedAlliance], rules: Reglement) -> Counter[str]:
    """The deals changed on purpose (``variants``), through both: how many were refused at each
    place or settled (``where``, cut at its first bracket), and under ``"differ"`` how many the
    engine and the bare loop did not refuse at the same place or settle alike."""
    rng = random.Random(0)
    seen: Counter[str] = Counter()
    for s in sims:
        for calls, contract, tricks in variants(s, rng):
            by_engine, by_bare = outcomes(s.players, s.cards, calls, contract, tricks, rules)
            refused = by_engine[0] == "refused"
            seen[by_engine[1].split("[")[0] if refused else "settled"] += 1
            seen["differ"] += by_engine != by_bare
    return seen


def main() -> None:
    rules = reglement("baden-1854")
    sims = [simulate_alliance_deal(seed=seed, players=4) for seed in range(1000)]
    good = sum(agrees(s, rules) for s in sims)
    print(f"legal deals: {good} of {len(sims)} agree (payments, marks, trick winners, the record)")
    seen = changed_alike(sims, rules)
    differ = seen.pop("differ")
    print(
        f"changed deals: {seen.total() - differ} of {seen.total()} refused at the same place or "
        f"settled alike ({', '.join(f'{k}: {v}' for k, v in sorted(seen.items()))})"
    )


if __name__ == "__main__":
    main()
