"""Hold against expectation: the bank's actual result at a Trente-et-Quarante table against the
exact law of the result of the stakes actually placed (``casino.games.hold_law``).

When a séance closes, its result is tested; when a gaming day is over, each table's result over
the day, and over the month when the day is its last. Each coup's law is what the engine settles
under each of the coup's joint outcomes, all its stakes together with the prisoners it began with;
the séance's, day's or month's law is their sum (exact on its lattice while it fits, else normal).
The test is two-sided: a table winning too much is as much a question as one losing too much
(steered cards, a short-paying croupier; or cards steered to a confederate, a croupier overpaying).

The actual result is read from the settlements the floor recorded (Σ to_bank + premium − paid),
coup by coup; a dispute's later corrections are not in it (they have their own records).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import F, Sum
from django.utils import timezone

from casino.detectors.frame import Chart, Finding, Link, at_day_end, at_seance_close
from casino.detectors.stats import bonferroni
from casino.detectors.thresholds import ALPHA
from casino.floor.models import Duty, Game, PostedReglement, Shift, Table
from casino.floor.play.trente_et_quarante.coups import engine_stake_of
from casino.floor.play.trente_et_quarante.models import CoupResult, Settlement, Stake
from casino.games.hold_law import Chances, CoupLaw, CoupLaws, SumLaw, joint_of, sum_law
from casino.games.trente_et_quarante import Chance, Prisoner
from casino.games.trente_et_quarante import Stake as EngineStake

DETECTOR = "hold"
TEQ_RULE = (
    "the bank's result against the law of the result of the stakes actually placed: each coup's "
    "six joint outcomes (odds module, first coup of a full shoe), every stake of the coup and the "
    "prisoners it began with settled by the engine; two-sided"
)
PHARAO_RULE = (
    "the bank's result against the exact mean and variance of what the stakes exposed at each "
    "draw (pharao_odds.expected_result, from the cards then left), normal law; two-sided"
)
BATCH = 2000  # coups read at a time
LARGEST = 5  # coups linked from a finding


@dataclass(frozen=True)
class Played:
    """One settled coup: its law, what the bank actually kept, what was staked on it."""

    coup: int
    number: int
    shift: int
    hour: dt.datetime
    staked: int
    actual: int
    law: CoupLaw | None  # None: only its exact mean and variance are known (a Pharao taille)
    agrees: bool  # the recorded settlements are what the engine gives for the recorded outcome
    moments: tuple[float, float] = (0.0, 0.0)  # mean, variance when there is no law
    link: str = "floor.coup"


def _rules(parameters: str) -> Any:
    # The posted version's engine (cached by its text), without the limits: a stake's law does not
    # depend on them (the floor refused what they refuse).
    return PostedReglement(parameters=parameters).engine()


def _prison(raw: Iterable[dict[str, Any]]) -> list[Prisoner]:
    return [Prisoner(p["stake"], Chance(p["chance"]), p["held"], p["level"]) for p in raw]


def played(shifts: Sequence[int], table: int) -> Iterator[Played]:
    """The settled coups of these séances of one table, in the order they were settled, each
    with the prisoners it began with (the previous settled coup's prison at that table)."""
    results = (
        CoupResult.objects.filter(coup__shift_id__in=shifts)
        .order_by("id")
        .values_list("id", flat=True)
    )
    ids = list(results)
    if not ids:
        return
    before = (
        CoupResult.objects.filter(coup__shift__table_id=table, id__lt=ids[0])
        .order_by("-id")
        .values_list("prison_after", flat=True)
        .first()
    )
    prison = _prison(before or [])
    laws: dict[str, CoupLaws] = {}  # by the règlement's text
    # Each distinct stake once: read as values and made the engine's on first sight. A séance
    # repeats a handful of stakes thousands of times, and a model row and an engine stake for
    # every one of them were a good part of a long séance's report.
    seen: dict[tuple[Any, ...], EngineStake] = {}
    for start in range(0, len(ids), BATCH):
        chunk = ids[start : start + BATCH]
        rows = list(
            CoupResult.objects.filter(id__in=chunk)
            .order_by("id")
            .values(
                "coup_id",
                "coup__number",
                "coup__shift_id",
                "coup__reglement__parameters",
                "result",
                "couleur",
                "void",
                "last",
                "prison_after",
                "settled_at",
            )
        )
        coups = [r["coup_id"] for r in rows]
        stakes: dict[int, list[EngineStake]] = {c: [] for c in coups}
        for pk, coup, *shape in (
            Stake.objects.filter(coup_id__in=coups, withdrawal__isnull=True)
            .order_by("id")
            .values_list("id", "coup_id", "chance", "amount", "insured", "on_refait")
        ):
            key = tuple(shape)
            stake = seen.get(key)
            if stake is None:
                chance, amount, insured, on_refait = key
                stake = seen[key] = engine_stake_of(
                    pk, chance=chance, amount=amount, insured=insured, on_refait=on_refait
                )
            stakes[coup].append(stake)
        kept = {
            r["coup_id"]: r["kept"]
            for r in Settlement.objects.filter(coup_id__in=coups)
            .values("coup_id")
            .annotate(kept=Sum(F("to_bank") + F("premium") - F("paid")))
        }
        for r in rows:
            on_coup = stakes[r["coup_id"]]
            parameters = r["coup__reglement__parameters"]
            if parameters not in laws:
                rules = _rules(parameters)
                laws[parameters] = CoupLaws(Chances.of_shoe(rules), rules)
            law = laws[parameters].law(
                stakes=on_coup, prison=prison, last=r["last"], void=r["void"]
            )
            actual = int(kept.get(r["coup_id"]) or 0)
            joint = joint_of(r["result"], r["couleur"])
            if r["void"] or joint is None:
                agrees = len({v for v, _ in law.atoms}) == 1 and law.atoms[0][0] == actual
            else:
                agrees = law.by_joint[joint] == actual
            yield Played(
                r["coup_id"],
                r["coup__number"],
                r["coup__shift_id"],
                timezone.localtime(r["settled_at"]).replace(minute=0, second=0, microsecond=0),
                sum(s.amount for s in on_coup),
                actual,
                law,
                agrees,
            )
            prison = _prison(r["prison_after"])


@dataclass(frozen=True)
class Hour:
    hour: dt.datetime
    coups: int
    staked: int
    actual: int
    law: SumLaw


@dataclass(frozen=True)
class Measure:
    """A window's actual result against its law, hour by hour too."""

    coups: list[Played]
    law: SumLaw
    hours: list[Hour]  # the parts: hours, or gaming days (``by_day``)
    by_day: bool = False

    @property
    def actual(self) -> int:
        return sum(p.actual for p in self.coups)

    @property
    def drop(self) -> int:
        return sum(p.staked for p in self.coups)

    @property
    def p_value(self) -> float:
        return self.law.p_value(self.actual)


def _law(coups: list[Played], *, normal: bool = False) -> SumLaw:
    laws = [p.law for p in coups if p.law is not None]
    if len(laws) == len(coups) and not normal:
        return sum_law(laws)
    moments = [p.moments if p.law is None else (p.law.mean, p.law.variance) for p in coups]
    return SumLaw(  # Pharao, or a part of a month: the exact mean and variance, the normal law
        sum(m for m, _ in moments), sum(v for _, v in moments), len(coups), False
    )


def measure(coups: list[Played], *, by_day: bool = False) -> Measure:
    """The window's law and its parts: by hour (a séance, a day), or by gaming day (a month: its
    parts' bands from their exact mean and variance, the normal law, to keep a month's run short)."""
    parts: dict[dt.datetime, list[Played]] = {}
    for p in coups:
        parts.setdefault(p.hour.replace(hour=0) if by_day else p.hour, []).append(p)
    hours = [
        Hour(
            h,
            len(ps),
            sum(p.staked for p in ps),
            sum(p.actual for p in ps),
            _law(ps, normal=by_day),
        )
        for h, ps in sorted(parts.items())
    ]
    # A window within one hour is its own only part: the same coups in the same order, so the
    # same law, convolved once rather than twice.
    whole = hours[0].law if len(hours) == 1 and not by_day else _law(coups)
    return Measure(coups, whole, hours, by_day)


def pharao_played(shifts: Sequence[int]) -> Iterator[Played]:
    """The tailles of these Pharao séances: what the bank kept of each (Σ to_bank − paid over its
    settlements) against the exact mean and variance of what its stakes exposed, draw by draw
    (``pharao_odds.expected_result``; the draws are a martingale's steps given the layout)."""
    from casino.floor.play.pharao.models import PharaoSettlement, PharaoStake
    from casino.floor.play.pharao.models import Taille as PharaoTaille
    from casino.floor.play.pharao.selectors import taille_document
    from casino.games.pharao_odds import expected_result
    from casino.games.pharao_replay import taille_of

    for taille in PharaoTaille.objects.filter(shift_id__in=shifts).order_by("id"):
        played_taille, rules = taille_of(taille_document(taille))
        expected = expected_result(played_taille, rules)
        kept = PharaoSettlement.objects.filter(taille=taille).aggregate(
            kept=Sum(F("to_bank") - F("paid"))
        )["kept"]
        staked = PharaoStake.objects.filter(taille=taille).aggregate(s=Sum("amount"))["s"]
        yield Played(
            taille.pk,
            taille.number,
            taille.shift_id,
            timezone.localtime(taille.opened_at).replace(minute=0, second=0, microsecond=0),
            int(staked or 0),
            int(kept or 0),
            None,
            True,
            (float(expected.mean), float(expected.variance)),
            "floor.taille",
        )


def window_measure(shifts: Sequence[Shift], *, by_day: bool = False) -> Measure:
    """The séances of one table, read as its game records them."""
    ids = [s.pk for s in shifts]
    if shifts and shifts[0].table.game == Game.PHARAO:
        return measure(list(pharao_played(ids)), by_day=by_day)
    if not shifts:
        return measure([])
    return measure(list(played(ids, shifts[0].table_id)), by_day=by_day)


def seance_measure(shift: Shift) -> Measure:
    return window_measure([shift])


def _money(minor: float) -> str:
    return f"{minor / 100:.2f}"


def hour_chart(m: Measure, *, percent: bool = False) -> Chart:
    """The bank's result per hour with its expected value and 95 % band: in currency units, or
    (``percent``) as the hour's hold, the result over what was staked that hour."""
    bands = [h.law.band() for h in m.hours]

    def scale(h: Hour, value: float) -> float:
        if percent:
            return 100 * value / h.staked if h.staked else 0.0
        return value / 100

    return Chart(
        "bars",
        f"{'hold' if percent else 'result'} by {'day' if m.by_day else 'hour'} against its 95 % band",
        [
            f"{h.hour:%d}"
            if m.by_day
            else f"{h.hour:%Hh}"
            if len(m.hours) <= 24
            else f"{h.hour:%d %Hh}"
            for h in m.hours
        ],
        [scale(h, h.actual) for h in m.hours],
        expected=[scale(h, h.law.mean) for h in m.hours],
        low=[scale(h, low) for h, (low, _) in zip(m.hours, bands, strict=True)],
        high=[scale(h, high) for h, (_, high) in zip(m.hours, bands, strict=True)],
        unit=" %" if percent else "",
    )


def _law_text(law: SumLaw) -> str:
    if law.exact:
        return (
            f"exact, on the lattice of {_money(law.step)} ({len(law.probs)} cells, "
            f"{law.dropped:.1e} of tail mass cut)"
        )
    return f"normal with the exact mean and variance (Berry-Esseen bound {law.berry_esseen:.3g})"


def finding(
    m: Measure,
    *,
    what: str,
    key: str,
    threshold: float,
    tests: int,
    subject: Any,
    window: str,
    links: Sequence[Link],
    involved: Sequence[int],
    rule: str = TEQ_RULE,
) -> Finding | None:
    """The finding when the window's result is beyond its law at ``threshold``, else None."""
    if not m.coups or m.law.variance <= 0:
        return None
    p = m.p_value
    if p >= threshold:
        return None
    law, actual, drop = m.law, m.actual, m.drop
    low, high = law.band()
    disagree = sum(1 for c in m.coups if not c.agrees)
    direction = "won" if actual > law.mean else "lost"
    largest = sorted(m.coups, key=lambda c: -abs(c.actual))[:LARGEST]
    return Finding(
        detector=DETECTOR,
        summary=(
            f"{what}: the bank {direction} {_money(abs(actual))} against an expected "
            f"{_money(law.mean)} (sd {_money(law.sd)}), p = {p:.2g}"
        ),
        rule=rule,
        figures=[
            ("result", _money(actual)),
            ("expected", _money(law.mean)),
            ("standard deviation", _money(law.sd)),
            ("z", f"{law.z(actual):.2f}"),
            ("p-value (two-sided)", f"{p:.3g}"),
            ("95 % band", f"{_money(low)} .. {_money(high)}"),
            ("drop", _money(drop)),
            ("hold", f"{100 * actual / drop:.2f} %" if drop else "-"),
            ("expected hold", f"{100 * law.mean / drop:.2f} %" if drop else "-"),
            ("coups", str(len(m.coups))),
            ("law", _law_text(law)),
            ("coups settled otherwise than the engine says", str(disagree)),
        ],
        threshold=f"p < {threshold:.3g} (ALPHA {ALPHA} / {tests} tests in this run, Bonferroni)",
        p_value=p,
        key=key,
        subject=subject,
        window=window,
        columns=[
            "day" if m.by_day else "hour",
            "coups",
            "stakes",
            "result",
            "expected",
            "95 % band",
        ],
        rows=[
            [
                f"{h.hour:%Y-%m-%d}" if m.by_day else f"{h.hour:%Y-%m-%d %H:00}",
                h.coups,
                _money(h.staked),
                _money(h.actual),
                _money(h.law.mean),
                "{} .. {}".format(*(_money(v) for v in h.law.band())),
            ]
            for h in m.hours
        ],
        chart=hour_chart(m),
        links=[
            *links,
            *(Link("floor.coup", c.coup, f"coup {c.number}: {_money(c.actual)}") for c in largest),
        ],
        involved=involved,
        extra={"drop": str(drop), "result": str(actual)},
    )


def _crew(shifts: Iterable[Shift]) -> list[int]:
    ids = {s.opened_by_id for s in shifts}
    ids |= set(Duty.objects.filter(shift__in=list(shifts)).values_list("person_id", flat=True))
    return sorted(ids)


@at_seance_close
def seance_hold(shift: Any) -> list[Finding]:
    """The closed séance's result against its law (one test)."""
    if shift.table.game not in (Game.TRENTE_ET_QUARANTE, Game.PHARAO):
        return []
    m = seance_measure(shift)
    f = finding(
        m,
        rule=PHARAO_RULE if shift.table.game == Game.PHARAO else TEQ_RULE,
        what=f"Table {shift.table.number}, séance {shift.pk}",
        key=f"seance:{shift.pk}",
        threshold=bonferroni(ALPHA, 1),
        tests=1,
        subject=shift,
        window=f"séance {shift.pk} ({timezone.localtime(shift.opened_at):%Y-%m-%d %H:%M})",
        links=[Link("floor.shift", shift.pk, f"séance {shift.pk}")],
        involved=_crew([shift]),
    )
    return [f] if f else []


def _opened_between(start: dt.date, end: dt.date) -> list[Shift]:
    """Séances opened from ``start`` to ``end`` inclusive (gaming days in the house's time zone)."""
    zone = timezone.get_current_timezone()
    lo = dt.datetime.combine(start, dt.time.min, tzinfo=zone)
    hi = dt.datetime.combine(end + dt.timedelta(days=1), dt.time.min, tzinfo=zone)
    return list(
        Shift.objects.filter(
            opened_at__gte=lo,
            opened_at__lt=hi,
            closed_at__isnull=False,
            table__game__in=[Game.TRENTE_ET_QUARANTE, Game.PHARAO],
        )
        .select_related("table")
        .order_by("opened_at")
    )


@at_day_end
def day_hold(day: dt.date) -> list[Finding]:
    """Each table's result over the gaming day and, when the day is the month's last, over the
    month: one run, one or two tests a table, Bonferroni over all of them. (The month once, at its
    end: tested every day, it would read the whole month thirty times, a minute and more of the
    worker's time each day at twenty tables, for thirty tests of nearly the same figures.)"""
    windows: list[tuple[str, str, list[Shift]]] = []
    last_of_month = (day + dt.timedelta(days=1)).month != day.month
    month = _opened_between(day.replace(day=1) if last_of_month else day, day)
    scopes = [("day", [s for s in month if timezone.localtime(s.opened_at).date() == day])]
    if last_of_month:
        scopes.append(("month", month))
    for scope, shifts in scopes:
        by_table: dict[int, list[Shift]] = {}
        for s in shifts:
            by_table.setdefault(s.table_id, []).append(s)
        windows += [(scope, str(t), group) for t, group in sorted(by_table.items())]
    threshold = bonferroni(ALPHA, len(windows))
    found = []
    for scope, _, shifts in windows:
        table: Table = shifts[0].table
        m = window_measure(shifts, by_day=scope == "month")
        label = f"{day:%Y-%m-%d}" if scope == "day" else f"{day:%Y-%m}"
        f = finding(
            m,
            what=f"Table {table.number}, {'gaming day' if scope == 'day' else 'month'} {label}",
            key=f"table:{table.number}:{scope}:{day:%Y-%m-%d}"
            if scope == "day"
            else f"table:{table.number}:month:{day:%Y-%m}",
            threshold=threshold,
            tests=len(windows),
            subject=table,
            window=f"{scope} {label}, {len(shifts)} séances",
            links=[Link("floor.shift", s.pk, f"séance {s.pk}") for s in shifts],
            involved=_crew(shifts),
            rule=PHARAO_RULE if table.game == Game.PHARAO else TEQ_RULE,
        )
        if f:
            found.append(f)
    return found
