"""The bench's bare loops (``tests/bench/bare_pharao.py``, ``bare_alliance.py``) do the engines'
work: ``make bench``'s engine / bare ratios compare like with like only while they agree with
the engines. A rule changed on one side and not the other fails here, not only in the bench."""

from __future__ import annotations

from casino.games.reglement import reglement
from casino.games.simulator import simulate_alliance_deal
from tests.bench.bare_alliance import agrees, changed_alike
from tests.bench.bare_pharao import bench_cases, check, harder_cases


def test_the_pharao_bare_loop_writes_every_line_and_refusal_the_engine_writes():
    rules = reglement("baden-1854")
    assert check("the bench's tailles", bench_cases(100), rules)
    assert check("many mistakes, acts twice, lists shuffled", harder_cases(100), rules)


def test_the_alliance_bare_loop_settles_and_refuses_as_the_engine():
    rules = reglement("baden-1854")
    sims = [simulate_alliance_deal(seed=seed, players=4) for seed in range(200)]
    assert all(agrees(s, rules) for s in sims)
    seen = changed_alike(sims, rules)
    assert seen["differ"] == 0
    assert seen["tricks"]  # illegal cards refused
    assert seen["settled"]  # and legal changes played
