"""The games engines: Trente-et-Quarante's replay throughput and the exact odds of a full sixain;
Pharao's replay throughput of whole tailles against a bare loop over the same cards; Alliance's
deals replayed (4 players, full play) against a bare loop dealing and scanning the same cards."""

from __future__ import annotations

import json
import subprocess
import sys
import time

from casino.games.alliance import dealing_plan, play_deal
from casino.games.pharao import play_taille
from casino.games.reglement import reglement
from casino.games.replay import replay_text
from casino.games.simulator import (
    simulate_alliance_deal,
    simulate_pharao_taille,
    simulate_taille,
)
from casino.games.trente_et_quarante import play_talon, points
from tests.bench.harness import median_time, report

TAILLES = 60
PHARAO_TAILLES = 400
ALLIANCE_DEALS = 1000

ODDS_PROBE = """
import json, resource, time, tracemalloc
import numpy
from casino.games.odds import composition_of_decks, first_coup
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.perf_counter()
first_coup(composition_of_decks(6))
seconds = time.perf_counter() - started
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
tracemalloc.start()  # a second run, traced: tracing slows numpy's many small allocations
first_coup(composition_of_decks(6))
peak = tracemalloc.get_traced_memory()[1]
print(json.dumps({"seconds": seconds, "traced_peak": peak, "rss_kib": rss, "base_kib": base}))
"""


def run() -> None:
    run_trente_et_quarante()
    run_pharao()
    run_alliance()


def run_alliance() -> None:
    """Whole deals of Alliance, 4 players, every trick played: through the replay command's
    function (JSON text in, document out), through the engine (``play_deal``: the deal, the
    auction, the contract, each card checked, the settlement), and a bare loop over the same cards
    (dealing them into hands by the plan, then scanning each trick for its winner by suit and a
    rank table: no checks, no auction, no payments)."""
    rules = reglement("baden-1854")
    sims = [simulate_alliance_deal(seed=seed, players=4) for seed in range(ALLIANCE_DEALS)]
    texts = [json.dumps(s.replay_document()) for s in sims]
    plan = dealing_plan(4)
    order = {r: i for i, r in enumerate("23456789TJQKA")}

    def through_replay() -> None:
        for text in texts:
            replay_text(text)

    def through_engine() -> None:
        for s in sims:
            play_deal(s.players, s.cards, s.calls, s.contract, s.tricks, rules)

    trumps = [s.outcome.trumps for s in sims]

    def bare() -> None:
        for s, trump in zip(sims, trumps, strict=True):
            hands: list[list[object]] = [[], [], [], []]
            table = []
            for c, seat in zip(s.cards, plan, strict=True):
                (table if seat < 0 else hands[seat]).append(c)
            leader = 0
            for trick in s.tricks:
                best = trick[0]
                at = 0
                for i, c in enumerate(trick):
                    if c.suit is best.suit:
                        if order[c.rank.value] > order[best.rank.value]:
                            best, at = c, i
                    elif c.suit is trump:
                        best, at = c, i
                leader = (leader + at) % 4

    t_replay = median_time(through_replay, runs=5)
    t_engine = median_time(through_engine, runs=5)
    t_bare = median_time(bare, runs=5)
    deals = len(sims)
    report(
        f"Alliance: {deals} deals of 4 players, every trick played (seeded simple players)",
        [
            (
                "through the replay (JSON text in, document out)",
                f"{deals / t_replay:,.0f} deals/s (median of 5)",
            ),
            ("through the engine (play_deal)", f"{deals / t_engine:,.0f} deals/s"),
            ("bare loop dealing and scanning the same cards", f"{deals / t_bare:,.0f} deals/s"),
            ("ratio replay / bare", f"{t_replay / t_bare:.1f}x"),
            ("ratio engine / bare", f"{t_engine / t_bare:.1f}x"),
        ],
    )


def run_pharao() -> None:
    """Whole tailles of Pharao (26 draws each) with stakes, marks, approvals and refused acts:
    through the replay command's function (JSON text in, document out), through the engine alone
    (``play_taille``), and a bare loop over the same cards (pairing them and comparing ranks)."""
    rules = reglement("baden-1854")
    sims = [simulate_pharao_taille(seed=seed, reglement=rules) for seed in range(PHARAO_TAILLES)]
    texts = [json.dumps(s.replay_document()) for s in sims]
    draws = 26 * len(sims)
    stakes = sum(len(s.stakes) for s in sims)
    acts = sum(len(s.actions) for s in sims)

    def through_replay() -> None:
        for text in texts:
            replay_text(text)

    def through_engine() -> None:
        for s in sims:
            play_taille(s.cards, s.stakes, s.actions, rules)

    def bare() -> None:
        for s in sims:
            cards = s.cards
            plie = 0
            for i in range(0, 52, 2):
                if cards[i].rank is cards[i + 1].rank:
                    plie += 1

    by_draw = [
        [[(stake.rank, stake.amount) for n, stake in s.stakes if n == d] for d in range(1, 27)]
        for s in sims
    ]

    def bare_settling() -> None:
        # The same loop settling the same stakes on their ranks: even money, half on a plié, no
        # marks, acts, limits or checks; the floor under any engine.
        for s, placed in zip(sims, by_draw, strict=True):
            cards = s.cards
            standing: dict[object, list[int]] = {}
            bank = 0
            for d in range(26):
                for rank, amount in placed[d]:
                    standing.setdefault(rank, []).append(amount)
                left, right = cards[2 * d].rank, cards[2 * d + 1].rank
                if left is right:
                    bank += sum(a // 2 for a in standing.get(left, ()))
                else:
                    bank += sum(standing.pop(left, ()))
                    bank -= sum(standing.get(right, ()))

    t_replay = median_time(through_replay, runs=5)
    t_engine = median_time(through_engine, runs=5)
    t_bare = median_time(bare, runs=5)
    t_settling = median_time(bare_settling, runs=5)
    report(
        f"Pharao: {PHARAO_TAILLES} whole tailles ({draws} draws, {stakes} stakes, {acts} acts)",
        [
            (
                "through the replay (JSON text in, document out)",
                f"{draws / t_replay:,.0f} draws/s (median of 5)",
            ),
            ("through the engine (play_taille)", f"{draws / t_engine:,.0f} draws/s"),
            ("bare loop over the same cards (pairs, plié test)", f"{draws / t_bare:,.0f} draws/s"),
            (
                "the same loop settling the stakes by rank (no marks, acts, checks)",
                f"{draws / t_settling:,.0f} draws/s",
            ),
            ("ratio replay / bare", f"{t_replay / t_bare:,.0f}x"),
            ("ratio engine / bare", f"{t_engine / t_bare:,.0f}x"),
            ("ratio engine / bare settling loop", f"{t_engine / t_settling:.1f}x"),
        ],
    )


def run_trente_et_quarante() -> None:
    rules = reglement("trente-et-quarante-modern")
    sims = [
        simulate_taille(seed=seed, reglement=rules, stakes_per_coup=5) for seed in range(TAILLES)
    ]
    coups = sum(len(s.taille.coups) for s in sims)
    # Only the cards the coups used: the floor of the work is adding up those values.
    used = [s.talon[: len(s.talon) - s.taille.end.cards_left] for s in sims]

    def engine() -> None:
        for s in sims:
            play_talon(s.talon, s.stakes, rules)

    def bare() -> None:
        for cards in used:
            total = 0
            for c in cards:
                total += points(c, rules)

    t_engine = median_time(engine, runs=5)
    t_bare = median_time(bare, runs=5)
    report(
        f"Replay (play_talon), {TAILLES} full sixains, 5 stakes per coup",
        [
            (
                "coups dealt and settled",
                f"{coups / t_engine:,.0f} coups/s ({coups} coups, median of 5)",
            ),
            ("bare loop summing the same card values", f"{coups / t_bare:,.0f} coups/s"),
            ("ratio engine / bare", f"{t_engine / t_bare:.1f}x"),
        ],
    )

    runs = []
    for _ in range(3):
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", ODDS_PROBE], capture_output=True, text=True, check=True
        )
        wall = time.perf_counter() - started
        runs.append((json.loads(done.stdout), wall))
    runs.sort(key=lambda r: r[0]["seconds"])
    probe, wall = runs[1]
    report(
        "Exact odds of a full 312-card sixain (first_coup, in a fresh process)",
        [
            ("computation", f"{probe['seconds']:.2f} s (median of 3)"),
            ("the probe process (interpreter, imports, two runs)", f"{wall:.2f} s"),
            ("peak traced memory of the computation", f"{probe['traced_peak'] / 2**20:.1f} MiB"),
            (
                "peak RSS of the process",
                f"{probe['rss_kib'] / 1024:.0f} MiB "
                f"({probe['base_kib'] / 1024:.0f} MiB after imports)",
            ),
        ],
    )
