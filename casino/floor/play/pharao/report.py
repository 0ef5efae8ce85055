"""Pharao's section of the séance report (``casino/reports/shift_report.py`` asks the table's game
for it through the registry): each taille as its 26 draws, its stakes with their marks and acts,
the banker's approvals and the refusals recorded; then the bank's hold against the band expected
from what the stakes actually exposed, draw by draw (``pharao_odds.expected_result``).

The report is the casino's signed document, written in both languages at once like the rest of it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

from reportlab.platypus import Flowable

from audit.models import Anomaly
from casino.floor.play.pharao.models import (
    PharaoApproval,
    PharaoSettlement,
    PharaoStakeAct,
    Taille,
)
from casino.floor.play.pharao.selectors import taille_document
from casino.floor.selectors import shift_figures
from casino.games.pharao_odds import expected_result
from casino.games.pharao_replay import taille_of
from casino.reports.pdf import SMALL, WIDTH, Cards, grid, heading, para, text
from casino.reports.shift_report import hold_drawing, key_values, local, money, person

REFUSALS = {
    "late_stake": "mise tardive / late stake",
    "false_paroli": "faux paroli / false paroli",
    "bottom_card": "carte du dessous / bottom card",
}
DRAW_HEADER = ["no", "banque / bank", "joueurs / players", "plié", "réglé / settled"]
DRAW_WIDTHS = [22, 70, 70, 28, WIDTH - 190]  # the card columns as wide as their headers
STAKE_HEADER = ["mise / stake", "rang", "montant", "tirage", "posée par", "actes / acts", "issue"]
STAKE_WIDTHS = [45, 28, 45, 32, 70, WIDTH - 320, 100]


def section(shift: Any) -> Iterator[Flowable]:
    """The séance's tailles, then its hold against the expected band. A generator, like the
    coups': the PDF is written while the tailles are read."""
    yield heading("Tailles", "Tailles")
    tailles = list(
        Taille.objects.filter(shift=shift).select_related("pack", "opened_by").order_by("id")
    )
    if not tailles:
        yield para("aucune taille / no taille")
    mean = variance = Fraction(0)
    for taille in tailles:
        yield from _taille(taille)
        played, rules = taille_of(taille_document(taille))
        expected = expected_result(played, rules)
        mean += expected.mean
        variance += expected.variance
    yield from _hold(shift, float(mean), math.sqrt(variance))


def _taille(taille: Taille) -> Iterator[Flowable]:
    yield heading(
        f"Taille {taille.number} - paquet {taille.pack.seal_number}",
        f"Taille {taille.number} - pack {taille.pack.seal_number}",
    )
    yield key_values(
        [
            (
                "Ouverte / opened",
                f"{local(taille.opened_at)} par / by {person(taille.opened_by)}",
            ),
            ("Carte du dessous / bottom card", taille.bottom_card),
            ("Phase", taille.get_phase_display()),
        ]
    )
    by_draw: dict[int | None, list[str]] = {}
    for s in (
        PharaoSettlement.objects.filter(taille=taille)
        .select_related("draw", "stake")
        .order_by("id")
    ):
        by_draw.setdefault(s.draw.number if s.draw else None, []).append(_line(s))
    rows: list[list[Any]] = [DRAW_HEADER]
    for draw in taille.draws.order_by("number"):
        rows.append(
            [
                str(draw.number),
                Cards([draw.bank_card], 45),
                Cards([draw.players_card], 45),
                "plié" if draw.plie else "",
                para(text("; ".join(by_draw.get(draw.number, []))), SMALL),
            ]
        )
    if by_draw.get(None):
        rows.append(["fin", "", "", "", para(text("; ".join(by_draw[None])), SMALL)])
    yield grid(rows, DRAW_WIDTHS)
    yield from _stakes(taille)


def _line(s: PharaoSettlement) -> str:
    money_moved = [
        f"{word} {money(amount)}"
        for word, amount in (("payé", s.paid), ("rendu", s.returned), ("banque", s.to_bank))
        if amount
    ]
    return " ".join([f"{s.stake.ref} ({s.stake.rank}) {s.outcome}", *money_moved, f"[{s.mark}]"])


def _stakes(taille: Taille) -> Iterator[Flowable]:
    stakes = list(taille.stakes.select_related("holder", "placed_by").order_by("rank", "id"))
    if not stakes:
        return
    acts: dict[int, list[str]] = {}
    for a in (
        PharaoStakeAct.objects.filter(stake__taille=taille)
        .select_related("by", "approval__approved_by")
        .order_by("id")
    ):
        said = a.act if a.amount is None else f"{a.act} {money(a.amount)}"
        if a.approval is not None:
            said += f" (ok {a.approval.approved_by.username})"
        acts.setdefault(a.stake_id, []).append(f"{said} @{a.draw} [{a.mark}]")
    last: dict[int, str] = {}
    for s in PharaoSettlement.objects.filter(taille=taille).select_related("draw").order_by("id"):
        last[s.stake_id] = f"{s.outcome} {s.draw.number if s.draw else 'fin'}"
    rows: list[list[Any]] = [STAKE_HEADER]
    rows += [
        [
            s.ref,
            s.rank,
            money(s.amount),
            str(s.draw),
            s.placed_by.username,
            para(text(", ".join(acts.get(s.pk, [])) or "-"), SMALL),
            last.get(s.pk, "-"),
        ]
        for s in stakes
    ]
    yield grid(rows, STAKE_WIDTHS)
    approvals = (
        PharaoApproval.objects.filter(stake__taille=taille)
        .select_related("stake__placed_by", "approved_by")
        .order_by("id")
    )
    used = set(
        PharaoStakeAct.objects.filter(approval__in=approvals).values_list("approval_id", flat=True)
    )
    refusals = Anomaly.objects.filter(
        subject_type=Taille._meta.label_lower,
        subject_id=str(taille.pk),
        detector__in=list(REFUSALS),
    ).order_by("detected_at", "id")
    lines = [
        f"{a.act} {money(a.amount) if a.amount else ''} {a.stake.ref}: posée par / placed by "
        f"{a.stake.placed_by.username}, approuvée par / approved by {a.approved_by.username} "
        f"avant le tirage / before draw {a.draw}, "
        + ("utilisée / used" if a.pk in used else "non utilisée / unused")
        for a in approvals
    ]
    lines += [f"{REFUSALS[r.detector]} ({local(r.detected_at)}): {r.summary}" for r in refusals]
    if lines:
        yield grid(
            [
                ["approbations et refus / approvals and refusals"],
                *[[para(text(x), SMALL)] for x in lines],
            ],
            [WIDTH],
        )


def _hold(shift: Any, mean: float, sd: float) -> Iterator[Flowable]:
    """The bank's actual hold against the expected one and its 95 % band, both over the money
    staked (placements and raises): the expectation is exact for the stakes actually exposed at
    each draw, the band a normal approximation."""
    figures = shift_figures(shift)
    yield heading("Hold réel et attendu", "Actual vs. expected hold")
    if not figures.drop:
        yield para("aucune mise / no stakes")
        return
    expected, low, high = (
        100 * v / figures.drop for v in (mean, mean - 1.96 * sd, mean + 1.96 * sd)
    )
    actual = 100 * figures.win / figures.drop
    yield hold_drawing(actual, expected, low, high)
    yield para(
        text(
            f"hold réel / actual {actual:.2f} %; attendu / expected {expected:.2f} %, bande à "
            f"95 % / 95 % band [{low:.2f} %, {high:.2f} %] (pharao_odds: exact expectation and "
            f"variance of each stake at each draw from the cards left, plié included; normal "
            f"approximation over {figures.drop / 100:,.2f} staked)"
        ),
        SMALL,
    )
