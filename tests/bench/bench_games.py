"""The games engines, each game's replay and engine against a bare loop doing the engine's work in
flat code over the same inputs, checked to agree with it first: Trente-et-Quarante's sixains (and
the exact odds of a full sixain), Pharao's whole tailles (``bare_pharao``), Alliance's deals of
4 players played out (``bare_alliance``)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

from casino.games.alliance import play_deal
from casino.games.cards import RANKS, Card, Suit
from casino.games.pharao import play_taille
from casino.games.reglement import Reglement, reglement
from casino.games.replay import replay_text
from casino.games.simulator import (
    simulate_alliance_deal,
    simulate_pharao_taille,
    simulate_taille,
)
from casino.games.trente_et_quarante import (
    Chance,
    Stake,
    Taille,
    play_talon,
    points,
    rank_points,
)
from tests.bench.bare_alliance import agrees, bare_alliance
from tests.bench.bare_pharao import bare_pharao, engine_bank_net
from tests.bench.harness import interleaved_medians, report

TAILLES = 60
PHARAO_TAILLES = 400
ALLIANCE_DEALS = 1000
# The replay command reads JSON and writes REPLAY.md's document, work no bare loop does: its
# ratio is printed; the aim is the engine's (docs/speed.md, "The replay's aim, decided").
COMMAND = "the command; the aim is the engine's"


def _ratios(t_replay: float, t_engine: float, t_bare: float) -> list[tuple[str, str]]:
    """Each game's two ratios to its bare loop, with the aim each is held to."""
    return [
        ("ratio replay / bare", f"{t_replay / t_bare:.1f}x ({COMMAND})"),
        ("ratio engine / bare", f"{t_engine / t_bare:.1f}x (aim: within 5x)"),
    ]


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
    auction, the contract, each card checked, the settlement), and a bare loop doing the same work
    in flat code (``bare_alliance``: bit masks for hands, no typed records), checked to agree
    with the engine on every deal before any timing."""
    rules = reglement("baden-1854")
    sims = [simulate_alliance_deal(seed=seed, players=4) for seed in range(ALLIANCE_DEALS)]
    texts = [json.dumps(s.replay_document()) for s in sims]
    for s in sims:
        assert agrees(s, rules), s.seed

    def through_replay() -> None:
        for text in texts:
            replay_text(text)

    def through_engine() -> None:
        for s in sims:
            play_deal(s.players, s.cards, s.calls, s.contract, s.tricks, rules)

    def bare() -> None:
        for s in sims:
            bare_alliance(s.players, s.cards, s.calls, s.contract, s.tricks, rules)

    t_replay, t_engine, t_bare = interleaved_medians(through_replay, through_engine, bare)
    deals = len(sims)
    report(
        f"Alliance: {deals} deals of 4 players, every trick played (seeded simple players)",
        [
            (
                "through the replay (JSON text in, document out)",
                f"{deals / t_replay:,.0f} deals/s (median of 5 rounds, interleaved)",
            ),
            ("through the engine (play_deal)", f"{deals / t_engine:,.0f} deals/s"),
            ("bare loop doing the same work (bare_alliance)", f"{deals / t_bare:,.0f} deals/s"),
            *_ratios(t_replay, t_engine, t_bare),
        ],
    )


def run_pharao() -> None:
    """Whole tailles of Pharao (26 draws each) with stakes, marks, approvals and refused acts:
    through the replay command's function (JSON text in, document out), through the engine alone
    (``play_taille``), and a bare loop doing the same work in flat code (``bare_pharao``: every
    act applied or refused, every stake placed, every draw settled; no typed records), checked to
    agree with the engine on the bank's net before any timing."""
    rules = reglement("baden-1854")
    sims = [simulate_pharao_taille(seed=seed, reglement=rules) for seed in range(PHARAO_TAILLES)]
    texts = [json.dumps(s.replay_document()) for s in sims]
    draws = 26 * len(sims)
    stakes = sum(len(s.stakes) for s in sims)
    acts = sum(len(s.actions) for s in sims)
    for s in sims:
        taille = play_taille(s.cards, s.stakes, s.actions, rules)
        assert bare_pharao(s.cards, s.stakes, s.actions, rules)[0] == engine_bank_net(taille)

    def through_replay() -> None:
        for text in texts:
            replay_text(text)

    def through_engine() -> None:
        for s in sims:
            play_taille(s.cards, s.stakes, s.actions, rules)

    def bare() -> None:
        for s in sims:
            bare_pharao(s.cards, s.stakes, s.actions, rules)

    t_replay, t_engine, t_bare = interleaved_medians(through_replay, through_engine, bare)
    report(
        f"Pharao: {PHARAO_TAILLES} whole tailles ({draws} draws, {stakes} stakes, {acts} acts)",
        [
            (
                "through the replay (JSON text in, document out)",
                f"{draws / t_replay:,.0f} draws/s (median of 5 rounds, interleaved)",
            ),
            ("through the engine (play_taille)", f"{draws / t_engine:,.0f} draws/s"),
            ("bare loop doing the same work (bare_pharao)", f"{draws / t_bare:,.0f} draws/s"),
            *_ratios(t_replay, t_engine, t_bare),
        ],
    )


def bare_trente_et_quarante(
    talon: Sequence[Card], stakes: Mapping[int, Sequence[Stake]], rules: Reglement
) -> tuple[int, list[tuple[Any, ...]]]:
    """A bare loop doing the engine's work over the same cards and stakes, in flat code: the
    rows laid to 31, the result and couleur decided, each stake settled (insurance, refaits by
    the player's choice, prisoners carried with their level) under the count rule, and what a
    replay writes out kept as bare tuples (each coup's totals and result, each stake's money);
    no checks, no typed records. Returns the bank's net (kept + premiums - paid), which the
    engine must agree with, and those tuples. Written for the bench's règlement only."""
    written_for = (rules.refait_mode, rules.prison_repeat, rules.end_rule, rules.prison_at_end)
    assert written_for == ("choice", "level", "count", "carry"), written_for
    by_rank = {r: rank_points(r, rules) for r in RANKS}
    values = [by_rank[c.rank] for c in talon]
    cards_left, points_left, position, coup, bank = len(talon), sum(values), 0, 0, 0
    prison: list[list[Any]] = []  # [stake, chance, held, level]
    record: list[tuple[Any, ...]] = []
    while cards_left >= rules.end_min_cards and points_left >= rules.end_min_points:
        coup += 1
        first = talon[position]
        noir = rouge = 0
        while noir <= 30 and position < len(talon):
            noir += values[position]
            position += 1
        while noir > 30 and rouge <= 30 and position < len(talon):
            rouge += values[position]
            position += 1
        cards_left, points_left = len(talon) - position, points_left - noir - rouge
        last = cards_left < rules.end_min_cards or points_left < rules.end_min_points
        refait = noir == rouge == 31
        won: tuple[Chance, Chance] | None = None
        if rouge > 30 and noir != rouge:
            row = Chance.NOIR if noir < rouge else Chance.ROUGE
            black_won = row is Chance.NOIR
            first_black = first.suit in (Suit.SPADES, Suit.CLUBS)
            won = (row, Chance.COULEUR if first_black is black_won else Chance.INVERSE)
        void = rouge <= 30 or (refait and last and rules.refait_void_on_last_coup)
        record.append((coup, noir, rouge, won, refait, void))
        if void:  # stakes returned, prisoners stay
            record.extend((p[0], 0) for p in prison)
            record.extend((s.id, 0) for s in stakes.get(coup, ()))
            continue
        kept = []
        for p in prison:
            taken = 0
            if refait:
                if p[3] + 1 > rules.max_prison_level:
                    taken = p[2]
                else:
                    p[3] += 1
            elif won is not None:
                if p[1] not in won:
                    taken = p[2]
                else:
                    p[3] -= 1
            bank += taken
            record.append((p[0], taken))
            if not taken and p[3]:
                kept.append(p)
        prison = kept
        for s in stakes.get(coup, ()):
            change = 0
            if s.insured:
                change = rules.insurance_premium * -(-s.amount // rules.insurance_unit)
            if refait and not s.insured:
                choice = s.on_refait or rules.refait_default
                if choice == "half":
                    change += s.amount // 2
                else:
                    chance = s.chance if choice == "prison" else choice[1]
                    prison.append([s.id, chance, s.amount, 1])
            elif won is not None:
                change += -s.amount if s.chance in won else s.amount
            bank += change
            record.append((s.id, change))
    return bank, record


def bank_net(taille: Taille) -> int:
    """The bank's net over a taille: what it kept and the premiums, less what it paid."""
    settlements = [s for c in taille.coups for s in c.settlements] + list(taille.end.settlements)
    return sum(s.to_bank + s.premium - s.paid for s in settlements)


def run_trente_et_quarante() -> None:
    """Whole sixains of Trente-et-Quarante, 5 stakes per coup: through the replay command's
    function (JSON text in, document out), through the engine (``play_talon``), and a bare loop
    doing the same dealing, deciding and settling (``bare_trente_et_quarante``, checked to agree
    with the engine on the bank's net); beside it, the floor of the old bench: summing the values
    of the cards the coups used."""
    rules = reglement("trente-et-quarante-modern")
    sims = [
        simulate_taille(seed=seed, reglement=rules, stakes_per_coup=5) for seed in range(TAILLES)
    ]
    texts = [json.dumps(s.replay_document()) for s in sims]
    coups = sum(len(s.taille.coups) for s in sims)
    for s in sims:
        assert bare_trente_et_quarante(s.talon, s.stakes, rules)[0] == bank_net(s.taille), s.seed
    # Only the cards the coups used: the floor of the work is adding up those values.
    used = [s.talon[: len(s.talon) - s.taille.end.cards_left] for s in sims]

    def through_replay() -> None:
        for text in texts:
            replay_text(text)

    def engine() -> None:
        for s in sims:
            play_talon(s.talon, s.stakes, rules)

    def bare() -> None:
        for s in sims:
            bare_trente_et_quarante(s.talon, s.stakes, rules)

    def summing() -> None:
        for cards in used:
            total = 0
            for c in cards:
                total += points(c, rules)

    t_replay, t_engine, t_bare, t_summing = interleaved_medians(
        through_replay, engine, bare, summing
    )
    report(
        f"Trente-et-Quarante: {TAILLES} full sixains, 5 stakes per coup ({coups} coups)",
        [
            (
                "through the replay (JSON text in, document out)",
                f"{coups / t_replay:,.0f} coups/s (median of 5 rounds, interleaved)",
            ),
            ("through the engine (play_talon)", f"{coups / t_engine:,.0f} coups/s"),
            ("bare loop dealing, deciding and settling the same", f"{coups / t_bare:,.0f} coups/s"),
            ("the old floor: summing the card values only", f"{coups / t_summing:,.0f} coups/s"),
            *_ratios(t_replay, t_engine, t_bare),
            ("ratio engine / summing (the old ratio)", f"{t_engine / t_summing:.1f}x"),
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
