"""The cercle's collusion watch (issue 15, item 6; docs/detectors.md): when a cercle séance
closes, the worker tests every pair of its players, over the séance and over the week before its
close at every cercle table, and raises a ``collusion`` anomaly for each pair beyond what chance
explains, its evidence naming the deals. The statistics are the engine's
(``casino.games.alliance_collusion``); this module reads the deals and records what it found."""

from __future__ import annotations

import datetime as dt
from typing import Any

from casino.detectors.frame import Chart, Link, raise_finding
from casino.detectors.frame import Finding as DetectorFinding
from casino.floor.models import Shift
from casino.floor.play.alliance.models import DealSettlement
from casino.games.alliance_collusion import (
    DealRecord,
    Finding,
    record_from_render,
    suspicious_pairs,
)

WEEK = dt.timedelta(days=7)


def _records(settlements: Any) -> list[DealRecord]:
    return [
        record_from_render(str(deal), outcome)
        for deal, outcome in settlements.order_by("deal_id").values_list("deal_id", "outcome")
    ]


def collusion_watch(shift_id: int) -> list[Any]:
    """The séance's pairs, and the week's at every cercle table up to its close: each finding an
    anomaly (raised once per séance, and once per pair and calendar week)."""
    shift = Shift.objects.select_related("table").get(pk=shift_id)
    assert shift.closed_at is not None, "the watch runs when the séance has closed"
    seance = DealSettlement.objects.filter(deal__shift=shift)
    week = DealSettlement.objects.filter(
        deal__shift__table__game="alliance",
        deal__shift__closed_at__gt=shift.closed_at - WEEK,
        deal__shift__closed_at__lte=shift.closed_at,
    )
    year, number, _day = shift.closed_at.isocalendar()
    raised = []
    for window, settlements, key in (
        ("séance", seance, f"séance:{shift.pk}"),
        ("week", week, f"week:{year}-W{number:02d}"),
    ):
        for finding in suspicious_pairs(_records(settlements)):
            raised.append(_raise(shift, window, key, finding))
    return raised


def _raise(shift: Shift, window: str, key: str, finding: Finding) -> Any:
    """The finding in the shape of every detector's (``casino.detectors.frame``), for the same
    queue and the same page; its own fields stay beside (``pair``, ``statistics``, ``deals``)."""
    a, b = finding.pair
    fired = ", ".join(
        f"{m.statistic} {m.observed} vs {m.expected:.1f} expected (p={m.p_value:.2g})"
        for m in finding.fired
    )
    deals = [int(ref) for ref in finding.deals]
    return raise_finding(
        DetectorFinding(
            detector="collusion",
            subject=shift,
            summary=f"{shift.table}: {a} and {b} beyond chance over the {window} "
            f"({finding.together} deals together): {fired}",
            rule="How often one of the pair called the other as ally (exact Poisson-binomial "
            "tail, each call finding him with chance 1/(n-1)), and the pair's joint marks against "
            "a random pair of the same deals (normal tail, after 20 deals together).",
            window=window,
            figures=[
                (
                    f"{m.statistic}: observed / expected (sd)",
                    f"{m.observed} / {m.expected:.2f} ({m.sd:.2f})",
                )
                for m in finding.fired
            ]
            + [("deals together", str(finding.together))],
            threshold=f"p < {finding.threshold:.3g} (alpha {finding.alpha:g} / {finding.tests} "
            "tests)",
            p_value=min(m.p_value for m in finding.fired),
            key=f"{key}:{a}:{b}",
            columns=["statistic", "observed", "expected", "sd", "z", "p", "deals counted"],
            rows=[
                [
                    m.statistic,
                    m.observed,
                    f"{m.expected:.2f}",
                    f"{m.sd:.2f}",
                    f"{m.z:.2f}",
                    f"{m.p_value:.3g}",
                    m.trials,
                ]
                for m in finding.fired
            ],
            chart=Chart(
                "bars",
                "observed against expected, per statistic",
                [m.statistic for m in finding.fired],
                [m.observed for m in finding.fired],
                expected=[m.expected for m in finding.fired],
                low=[m.expected - 2 * m.sd for m in finding.fired],
                high=[m.expected + 2 * m.sd for m in finding.fired],
            ),
            links=[Link("floor.shift", shift.pk, f"séance {shift.pk}")]
            + [Link("floor.deal", deal, f"deal {deal}") for deal in deals],
            extra={
                "pair": [a, b],
                "together": finding.together,
                # Figures as decimal text: the audit chain hashes what it stores, and a float's
                # digits are not a record's.
                "alpha": f"{finding.alpha:g}",
                "tests": finding.tests,
                "statistics": [
                    {
                        "statistic": m.statistic,
                        "observed": m.observed,
                        "expected": f"{m.expected:.2f}",
                        "sd": f"{m.sd:.2f}",
                        "z": f"{m.z:.2f}",
                        "p_value": f"{m.p_value:.3g}",
                        "trials": m.trials,
                    }
                    for m in finding.fired
                ],
                "deals": deals,
            },
        )
    )
