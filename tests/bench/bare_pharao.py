"""Pharao's honest floor: a bare loop doing ``play_taille``'s whole work in flat code.

``bare_pharao`` takes the inputs ``play_taille`` takes and does what it does to them: every act
applied or refused for the reason the engine gives (marks along the table, one mark per win,
collects, approved withdrawals and reductions, raises), every stake placed or refused on an
exhausted rank, every draw dealt (the bank's card, the players' card), plié, the dead bottom card,
each line settled with its money and listed in the replay's order, the stakes returned at the end.
It skips what cannot change the result on well-formed input (the pack's integrity, the types and
ranges of amounts, repeated stake ids, the state checks a table terminal needs between cards) and
builds no typed records: stakes are lists, lines and refusals bare tuples. ``exposed`` (what stood
as each draw began, for the odds) is not built: the replay writes none of it.

``make bench BENCH=games`` times it beside the engine, after checking the bank's net of every
taille. ``python -m tests.bench.bare_pharao`` checks the rest, every line, draw and refusal, over
the bench's tailles and harder ones (``tests/games/test_bare_loops.py`` runs a part of it).
"""

from __future__ import annotations

import random
import sys
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from casino.games.cards import RANKS, Card
from casino.games.pharao import Act, Action, Stake, Taille, play_taille
from casino.games.reglement import DEFAULT_PHARAO_MARKS, Reglement, reglement

SIMPLE = "simple"
PHARAO_TAILLES = 400  # as bench_games'
DRAW_OF = tuple(i // 2 + 1 for i in range(51))  # the draw dealing cards[i]
WRITTEN_FOR = (None, None, "dead", Fraction(1, 2), DEFAULT_PHARAO_MARKS)

# The marks table as two lookups, one per move: mark won at -> (mark reached, riding, protected).
PAROLI_NEXT, APPE_NEXT = (
    {
        source: (name, riding, protected)
        for name, (source, move, riding, protected, _) in DEFAULT_PHARAO_MARKS.items()
        if source is not None and move == by
    }
    for by in ("paroli", "appe")
)

PAROLI, APPE, COLLECT, WITHDRAW, REDUCE, RAISE = (
    Act.PAROLI,
    Act.APPE,
    Act.COLLECT,
    Act.WITHDRAW,
    Act.REDUCE,
    Act.RAISE,
)


def bare_pharao(
    cards: Sequence[Card],
    stakes: Sequence[tuple[int, Stake]],
    actions: Sequence[tuple[int, Action]],
    rules: Reglement,
) -> tuple[int, list[tuple[Any, ...]]]:
    """The engine's work on one taille, flat. Returns the bank's net (kept less paid) and what a
    replay writes out, in one stream of bare tuples: for each draw, the draw ``(number, bank
    card, players' card, plie)``, then as they happen before it the refusals ``(draw, stake, do,
    reason)`` and the acts' lines, then the lines of the stakes on its ranks in the order the
    stakes were given; after the last draw the stakes returned. A line is ``(stake, outcome,
    paid, returned, to_bank, mark)``. Written for the bench's règlement only (no limits, the
    bottom card dead, half to the bank on a plié, the default marks table)."""
    written_for = (
        rules.min_stake,
        rules.max_stake,
        rules.pharao_last_card,
        rules.pharao_plie_share,
        rules.pharao_marks,
    )
    assert written_for == WRITTEN_FOR, written_for
    ranks = [c.rank for c in cards]
    # A rank is exhausted before draw n when none of cards[2n-2 .. 50] is of it: when the draw
    # dealing its last card before the bottom card comes before n (each rank has one there).
    last = dict(zip(ranks[:51], DRAW_OF, strict=True))
    placed: list[list[tuple[int, Stake]]] = [[] for _ in range(27)]
    for i, (n, stake) in enumerate(stakes):
        placed[n].append((i, stake))
    acts: list[list[Action]] = [[] for _ in range(27)]
    for n, a in actions:
        acts[n].append(a)
    # A standing stake: [given order, id, rank, base, mark, riding, protected, won on, marked].
    standing: dict[str, list[Any]] = {}
    bucket: dict[Any, list[list[Any]]] = {r: [] for r in RANKS}  # by rank, in the given order
    record: list[tuple[Any, ...]] = []
    write = record.append
    stake_of = standing.get
    bank = 0
    for n, left, right, lr, rr, todo, new in zip(
        range(1, 27),
        cards[::2],
        cards[1::2],
        ranks[::2],
        ranks[1::2],
        acts[1:],
        placed[1:],
        strict=True,
    ):
        plie = lr is rr and n < 26
        write((n, left, right, plie))
        for a in todo:
            sid = a.stake
            act = a.act
            s = stake_of(sid)
            if s is None:
                write((n, sid, act, "unknown_stake"))
            elif act is PAROLI or act is APPE:
                if s[7] != n - 1 or s[8]:
                    write((n, sid, act, "false_paroli"))
                    continue
                row = (PAROLI_NEXT if act is PAROLI else APPE_NEXT).get(s[4])
                if row is None:
                    write((n, sid, act, "bad_mark"))
                    continue
                s[4] = row[0]
                s[5] = row[1] * s[3]
                s[6] = row[2] * s[3]
                s[8] = True
            elif act is COLLECT or act is WITHDRAW:
                if (s[7] != n - 1) if act is COLLECT else (a.approved_by is None):
                    write((n, sid, act, "not_approved"))
                    continue
                del standing[sid]
                bucket[s[2]].remove(s)
                write(
                    (sid, "collected" if act is COLLECT else "withdrawn", 0, s[5] + s[6], 0, s[4])
                )
            elif act is REDUCE:
                amount = a.amount
                assert amount is not None
                if a.approved_by is None:
                    write((n, sid, act, "not_approved"))
                elif s[4] != SIMPLE or s[3] - amount < 1:
                    write((n, sid, act, "bad_mark"))
                else:
                    s[3] = s[5] = s[3] - amount
                    write((sid, "reduced", 0, amount, 0, SIMPLE))
            else:  # raise
                amount = a.amount
                assert amount is not None
                if s[4] != SIMPLE:
                    write((n, sid, act, "bad_mark"))
                elif last[s[2]] < n:
                    write((n, sid, act, "rank_exhausted"))
                else:
                    s[3] = s[5] = s[3] + amount
        for i, (sid, r, amount) in new:
            if last[r] < n:
                write((n, sid, "stake", "rank_exhausted"))
                continue
            s = [i, sid, r, amount, SIMPLE, amount, 0, -1, False]
            standing[sid] = s
            on = bucket[r]
            on.append(s)
            if len(on) > 1 and on[-2][0] > i:  # a stake given earlier placed later
                on.sort()
        if plie:  # half of all that stands to the bank, the rest a simple stake
            for s in bucket[lr]:
                stands = s[5] + s[6]
                taken = stands >> 1
                bank += taken
                write((s[1], "plie", 0, 0, taken, s[4]))
                # Half, rounded down, leaves at least 1 of a stake standing: none ends here. Its
                # win, if pending, was on an earlier draw and can no longer be marked or collected:
                # no need to clear it.
                s[3] = s[5] = stands - taken
                s[4] = SIMPLE
                s[6] = 0
            continue
        lost = bucket[lr]
        if lost:
            bucket[lr] = []
        won = bucket[rr]  # none when both cards of draw 26 are of one rank: lost once
        if not won:
            for s in lost:
                del standing[s[1]]
                bank += s[5]
                write((s[1], "lost", 0, s[6], s[5], s[4]))
        elif n == 26:  # the bottom card counts for nobody
            for s in sorted(lost + won) if lost else won:
                if s[2] is lr:
                    del standing[s[1]]
                    bank += s[5]
                    write((s[1], "lost", 0, s[6], s[5], s[4]))
                else:
                    write((s[1], "dead", 0, 0, 0, s[4]))
        elif not lost:
            for s in won:
                bank -= s[5]
                write((s[1], "won", s[5], 0, 0, s[4]))
                s[7] = n
                s[8] = False
        else:  # the lines in the order the stakes were given
            for s in sorted(lost + won) if lost[-1][0] > won[0][0] else lost + won:
                if s[2] is lr:
                    del standing[s[1]]
                    bank += s[5]
                    write((s[1], "lost", 0, s[6], s[5], s[4]))
                else:
                    bank -= s[5]
                    write((s[1], "won", s[5], 0, 0, s[4]))
                    s[7] = n
                    s[8] = False
    for s in sorted(standing.values()):
        write((s[1], "returned", 0, s[5] + s[6], 0, s[4]))
    return bank, record


def engine_bank_net(result: Taille) -> int:
    """The bank's net over a taille played by the engine: what it kept less what it paid."""
    return sum(s.to_bank - s.paid for d in result.draws for s in d.settlements) + sum(
        s.to_bank - s.paid for s in result.end
    )


def engine_record(result: Taille) -> list[tuple[Any, ...]]:
    """``bare_pharao``'s stream of tuples written from the engine's result (a draw's refusals
    right after it: the result keeps them apart from the acts' lines, as the replay does)."""
    refused: list[list[tuple[Any, ...]]] = [[] for _ in range(27)]
    for r in result.refused:
        refused[r.draw].append((r.draw, r.stake, r.do, r.reason))
    record: list[tuple[Any, ...]] = []
    for d in result.draws:
        record.append((d.number, d.bank, d.players, d.plie))
        record += refused[d.number]
        record += (
            (s.stake, s.outcome.value, s.paid, s.returned, s.to_bank, s.mark) for s in d.settlements
        )
    record += (
        (s.stake, s.outcome.value, s.paid, s.returned, s.to_bank, s.mark) for s in result.end
    )
    return record


def apart(record: Sequence[tuple[Any, ...]]) -> tuple[list[tuple[Any, ...]], ...]:
    """A stream as the replay writes it: the draws, the lines (each draw's after it), the
    refusals."""
    draws, lines, refusals = [], [], []
    for t in record:
        if len(t) == 6:
            lines.append(t)
        elif isinstance(t[1], Card):
            draws.append(t)
            lines.append(t[:1])
        else:
            refusals.append(t)
    return draws, lines, refusals


def money_by_stake(lines: Sequence[tuple[Any, ...]]) -> dict[str, list[int]]:
    """Each stake's paid, returned and kept amounts over the taille."""
    money: dict[str, list[int]] = {}
    for line in lines:
        if len(line) == 6:
            total = money.setdefault(line[0], [0, 0, 0])
            total[0] += line[2]
            total[1] += line[3]
            total[2] += line[4]
    return money


def check(label: str, cases: Sequence[tuple[Any, ...]], rules: Reglement) -> bool:
    """Compare bare and engine over ``cases`` (cards, stakes, actions); print the counts."""
    agree = dict.fromkeys(("net", "money", "lines", "draws", "refusals"), 0)
    counted = dict.fromkeys(("lines", "refusals"), 0)
    faults: list[str] = []
    for number, (cards, stake_list, action_list) in enumerate(cases):
        taille = play_taille(cards, stake_list, action_list, rules)
        bank, record = bare_pharao(cards, stake_list, action_list, rules)
        draws, lines, refusals = apart(record)
        e_draws, e_lines, e_refusals = apart(engine_record(taille))
        counted["lines"] += len(e_lines) - len(e_draws)
        counted["refusals"] += len(e_refusals)
        same = {
            "net": bank == engine_bank_net(taille),
            "money": money_by_stake(lines) == money_by_stake(e_lines),
            "lines": lines == e_lines,
            "draws": draws == e_draws,
            "refusals": refusals == e_refusals,
        }
        for what, yes in same.items():
            agree[what] += yes
            if not yes and len(faults) < 3:
                faults.append(f"case {number}: {what} differ")
    total = len(cases)
    print(f"{label}: {total} tailles, {counted['lines']} lines, {counted['refusals']} refusals")
    print(f"  bank's net agrees                        {agree['net']}/{total}")
    print(f"  each stake's paid, returned, kept agree  {agree['money']}/{total}")
    print(f"  every line (outcome, money, mark), order {agree['lines']}/{total}")
    print(f"  every draw (cards, plié)                 {agree['draws']}/{total}")
    print(f"  every refusal (draw, stake, act, reason) {agree['refusals']}/{total}")
    for fault in faults:
        print(f"  {fault}")
    return not faults


def bench_cases(count: int = PHARAO_TAILLES) -> list[tuple[Any, ...]]:
    """The bench's tailles (cards, stakes, actions)."""
    from casino.games.simulator import simulate_pharao_taille

    rules = reglement("baden-1854")
    sims = [simulate_pharao_taille(seed=seed, reglement=rules) for seed in range(count)]
    return [(s.cards, s.stakes, s.actions) for s in sims]


def harder_cases(count: int = PHARAO_TAILLES) -> list[tuple[Any, ...]]:
    """Tailles the bench's never are: many refused acts, some acts given twice (a second mark, a
    second collect), the stakes and acts out of draw order."""
    from casino.games.simulator import simulate_pharao_taille

    rules = reglement("baden-1854")
    rng = random.Random(1854)
    harder = []
    for seed in range(count):
        s = simulate_pharao_taille(seed=10_000 + seed, reglement=rules, mistakes=0.6)
        stake_list, action_list = list(s.stakes), []
        for action in s.actions:
            action_list += [action] * (1 + (rng.random() < 0.2))
        rng.shuffle(stake_list)
        rng.shuffle(action_list)
        harder.append((s.cards, tuple(stake_list), tuple(action_list)))
    return harder


def main() -> int:
    rules = reglement("baden-1854")
    ok = check("the bench's tailles", bench_cases(), rules)
    ok = check("many mistakes, acts twice, lists shuffled", harder_cases(), rules) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
