"""Patrons and seats (docs/detectors.md, "Patrons and seats"), over a gaming day: holders who win
beyond the binomial tail, Pharao's marks that win beyond it, and false parolis per croupier and
per holder against the room's rate. (The cercle's collusion watch feeds the same queue from
``casino/floor/play/alliance/collusion.py``.)

A holder's **trial** is one unit's decided result for him: at Trente-et-Quarante one coup on one
axis (rouge/noir, couleur/inverse), at Pharao one draw; his stakes on it are netted (won lines
minus lost lines) and the trial is won when they come out ahead, lost when behind, left out when
even or undecided (refait, après, plié, void). Why it wins with probability exactly 1/2 whatever he
staked: ``people_law``; the figure itself is the odds modules' (``win_probabilities``).
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass, field

from django.contrib.auth.models import User
from django.db.models import F

from audit.models import Anomaly
from casino.detectors.frame import Chart, Finding, Link, at_day_end
from casino.detectors.people_law import hypergeometric_upper, wins_tail
from casino.detectors.staff import bounds
from casino.detectors.stats import bonferroni
from casino.detectors.thresholds import ALPHA
from casino.floor.models import Settlement
from casino.floor.play.pharao.models import PharaoSettlement, PharaoStake, PharaoStakeAct
from casino.games.odds import composition_of_decks, first_coup
from casino.games.pharao import DRAWS, SIMPLE
from casino.games.pharao_odds import next_draw
from casino.games.reglement import Reglement

DETECTOR = "patrons"
AXES = {"rouge": "colour", "noir": "colour", "couleur": "couleur", "inverse": "couleur"}
MARKS = ("paroli", "appe")


def win_probabilities() -> dict[str, float]:
    """The chance that a decided trial is won, from the odds modules: a rouge/noir coup (the first
    coup of a sixain; any coup alike, the rows being exchangeable whatever was dealt before), a
    couleur/inverse coup (the colours of a rank's cards are even in a sixain), a Pharao draw
    before the last (players' card against bank's card)."""
    coup = first_coup(composition_of_decks(6))
    draw = next_draw(51, 4, Reglement())
    return {
        "colour": coup.rouge / (coup.rouge + coup.noir),
        "couleur": 0.5,
        "draw": float(draw.players / (draw.players + draw.bank)),
    }


@dataclass
class Trials:
    """A holder's trials over the day: won, lost, and the units (links) of each."""

    won: int = 0
    lost: int = 0
    units: list[tuple[str, str, str]] = field(default_factory=list)  # (link type, id, result)
    recorders: set[int] = field(default_factory=set)

    @property
    def n(self) -> int:
        return self.won + self.lost


def _add(
    trials: dict[str, Trials], holder: str, net: int, unit: tuple[str, str], recorders: set[int]
) -> None:
    if net == 0:
        return
    t = trials.setdefault(holder, Trials())
    if net > 0:
        t.won += 1
    else:
        t.lost += 1
    t.units.append((unit[0], unit[1], "won" if net > 0 else "lost"))
    t.recorders |= recorders


def holder_trials(
    start: dt.datetime, end: dt.datetime
) -> tuple[dict[str, Trials], dict[str, Trials]]:
    """Every holder's trials (all stakes) and mark trials (Pharao stakes carrying a mark)."""
    nets: dict[tuple[str, str, str, str], int] = defaultdict(int)
    who: dict[tuple[str, str, str, str], set[int]] = defaultdict(set)
    for holder, coup, chance, outcome, by in Settlement.objects.filter(
        coup__opened_at__gte=start,
        coup__opened_at__lt=end,
        stake__coup=F("coup"),  # on the stake's own coup, not a prisoner's later fate
        outcome__in=["won", "lost"],
    ).values_list("stake__holder__code", "coup_id", "stake__chance", "outcome", "stake__placed_by"):
        key = (holder, "floor.coup", str(coup), AXES[chance])
        nets[key] += 1 if outcome == "won" else -1
        who[key].add(by)
    marks: dict[tuple[str, str, str, str], int] = defaultdict(int)
    for holder, draw, outcome, mark, by in PharaoSettlement.objects.filter(
        draw__settled_at__gte=start,
        draw__settled_at__lt=end,
        draw__number__lt=DRAWS,  # the last draw's single card is the bank's: no even chance
        outcome__in=["won", "lost"],
    ).values_list("stake__holder__code", "draw_id", "outcome", "mark", "stake__placed_by"):
        key = (holder, "floor.pharaodraw", str(draw), "draw")
        step = 1 if outcome == "won" else -1
        nets[key] += step
        who[key].add(by)
        if mark != SIMPLE:
            marks[key] += step
    results: dict[str, Trials] = {}
    for key, net in sorted(nets.items()):
        _add(results, key[0], net, (key[1], key[2]), who[key])
    marked: dict[str, Trials] = {}
    for key, net in sorted(marks.items()):
        _add(marked, key[0], net, (key[1], key[2]), who[key])
    return results, marked


@dataclass
class Attempts:
    """Marks asked for by one croupier or one holder, and how many were false parolis."""

    asked: int = 0
    false: int = 0
    refs: list[str] = field(default_factory=list)


def false_paroli_counts(
    start: dt.datetime, end: dt.datetime
) -> tuple[dict[int, Attempts], dict[str, Attempts]]:
    """Marks recorded (paroli, appe) and false parolis refused, per croupier and per holder."""
    croupiers: dict[int, Attempts] = defaultdict(Attempts)
    holders: dict[str, Attempts] = defaultdict(Attempts)
    for by, holder in PharaoStakeAct.objects.filter(
        at__gte=start, at__lt=end, act__in=MARKS
    ).values_list("by_id", "stake__holder__code"):
        croupiers[by].asked += 1
        holders[holder].asked += 1
    false = list(
        Anomaly.objects.filter(
            detector="false_paroli", detected_at__gte=start, detected_at__lt=end
        ).values_list("pk", "involved", "evidence")
    )
    stakes = dict(
        PharaoStake.objects.filter(pk__in=[e.get("stake") for _, _, e in false]).values_list(
            "pk", "holder__code"
        )
    )
    for pk, involved, evidence in false:
        holder = stakes.get(evidence.get("stake"))
        for attempts in ([croupiers[involved[0]]] if involved else []) + (
            [holders[holder]] if holder else []
        ):
            attempts.asked += 1
            attempts.false += 1
            attempts.refs.append(f"audit.anomaly:{pk}")
    return dict(croupiers), dict(holders)


@dataclass(frozen=True)
class _Test:
    kind: str  # results, marks, false_paroli
    who: str  # the holder's code, or the croupier's name
    person: int | None
    observed: int
    n: int
    expected: float
    p_value: float
    refs: list[tuple[str, str, str]]
    involved: list[int]
    detail: str


def findings(day: dt.date) -> list[Finding]:
    start, end = bounds(day)
    # Every trial's chance is 1/2 (win_probabilities); the largest of the odds modules' figures
    # is used, so that a rounding in the last digit never makes the test less than exact.
    q = max(win_probabilities().values())
    results, marked = holder_trials(start, end)
    tests: list[_Test] = []
    for kind, trials in (("results", results), ("marks", marked)):
        for holder, t in trials.items():
            tests.append(
                _Test(
                    kind,
                    holder,
                    None,
                    t.won,
                    t.n,
                    t.n * q,
                    wins_tail(t.won, t.n, q),
                    t.units,
                    sorted(t.recorders),
                    f"{t.won} won of {t.n} decided trials",
                )
            )
    croupiers, holders = false_paroli_counts(start, end)
    room_asked = sum(a.asked for a in croupiers.values())
    room_false = sum(a.false for a in croupiers.values())
    names = dict(User.objects.values_list("pk", "username"))
    for group, label in ((croupiers, "croupier"), (holders, "holder")):
        for who, a in group.items():
            p = hypergeometric_upper(a.false, room_asked, room_false, a.asked)
            person = who if label == "croupier" and isinstance(who, int) else None
            tests.append(
                _Test(
                    "false_paroli",
                    f"{label} {names.get(who, who) if person is not None else who}",
                    person,
                    a.false,
                    a.asked,
                    a.asked * room_false / room_asked if room_asked else 0.0,
                    p,
                    [("audit.anomaly", r.split(":")[1], "false paroli") for r in a.refs],
                    [person] if person is not None else [],
                    f"{a.false} false parolis of {a.asked} marks asked; room {room_false} of "
                    f"{room_asked}",
                )
            )
    threshold = bonferroni(ALPHA, len(tests))
    return [
        _finding(t, day, threshold, len(tests))
        for t in tests
        if t.observed > 0 and t.p_value < threshold
    ]


RULES = {
    "results": "The holder's decided trials (one a coup and axis, or a Pharao draw, his stakes on "
    "it netted) won against Binomial(trials, 1/2): the exchange of the two rows, or of the two "
    "cards of a draw, is as likely as the cards as dealt and turns each win into a loss",
    "marks": "The holder's decided Pharao draws on stakes carrying a mark (paroli, sept-et-le-va..."
    ") won against Binomial(trials, 1/2), the same exchange of the draw's two cards",
    "false_paroli": "False parolis among the marks this person asked for (recorded or refused), "
    "against the room's share of false ones: hypergeometric given the room's totals",
}


def _finding(t: _Test, day: dt.date, threshold: float, total: int) -> Finding:
    kind_words = {"results": "wins", "marks": "mark wins", "false_paroli": "false parolis"}
    return Finding(
        detector=DETECTOR,
        summary=f"{t.who}: {t.observed} {kind_words[t.kind]} on {day.isoformat()} "
        f"({t.detail}), {t.expected:.2f} expected",
        rule=RULES[t.kind],
        figures=[
            ("who", t.who),
            ("observed", str(t.observed)),
            ("out of", str(t.n)),
            ("expected", f"{t.expected:.4f}"),
            ("p-value (one-sided, exact)", f"{t.p_value:.3g}"),
            ("tests in this run", str(total)),
        ],
        threshold=f"p < {threshold:.3g} (ALPHA = {ALPHA} / {total} tests, Bonferroni)",
        p_value=t.p_value,
        key=f"{t.kind}:{t.who}:{day.isoformat()}",
        subject=("auth.user", t.person) if t.person is not None else ("floor.account", t.who),
        window=day.isoformat(),
        columns=["record", "result"],
        rows=[[f"{kind.split('.')[1]} {pk}", result] for kind, pk, result in t.refs],
        chart=Chart(
            "band",
            f"{t.who}: {kind_words[t.kind]}",
            [kind_words[t.kind]],
            [float(t.observed)],
            expected=[t.expected],
        ),
        links=[Link(kind, pk, f"{kind.split('.')[1]} {pk}") for kind, pk, _ in t.refs[:200]],
        involved=t.involved,
    )


@at_day_end
def patrons_at_day_end(day: dt.date) -> list[Finding]:
    return findings(day)
