"""Staff against the room's rate (docs/detectors.md, "Staff"): per tailleur, croupier and chef de
partie, the disputes, announcement mismatches, late-stake attempts, cancelled coups and
corrections on the play they worked, each held against the room's rate over the gaming day and
over the 30 days ending with it.

Who worked what comes from the duties (``Duty``: post, person, from ``started_at`` to its end, or
the séance's close); the exposure is the units of play during a duty: Trente-et-Quarante's coups
(when opened), Pharao's draws (when settled), the cercle's deals (when begun). An event belongs to
the people on duty at its moment: a coup's anomaly at the coup's opening, a dispute at the moment
of the record it is about, a correction likewise. The statistics are ``people_law``'s.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from django.contrib.auth.models import User
from django.utils import timezone

from audit.models import Anomaly
from casino.detectors.frame import Chart, Finding, Link, at_day_end
from casino.detectors.people_law import POSTS, STAFF_KINDS, StaffTest, Tally
from casino.detectors.stats import bonferroni
from casino.detectors.thresholds import ALPHA
from casino.floor.models import Coup, CoupCancellation, Duty, Movement, Shift
from casino.floor.play.alliance.models import Deal
from casino.floor.play.pharao.models import PharaoDraw, Taille

DETECTOR = "staff"
WINDOW_DAYS = 30
KINDS = STAFF_KINDS
KIND_WORDS = {
    "dispute": "disputes",
    "announcement_mismatch": "announcement mismatches",
    "late_stake": "late-stake attempts",
    "coup_cancelled": "cancelled coups",
    "correction": "corrections",
}
POST_WORDS = {"tailleur": "tailleur", "croupier": "croupier", "chef_de_partie": "chef de partie"}


def bounds(day: dt.date, days: int = 1) -> tuple[dt.datetime, dt.datetime]:
    """The ``days`` gaming days ending with ``day``, midnight to midnight in the house's zone."""
    end = dt.datetime.combine(
        day + dt.timedelta(days=1), dt.time.min, tzinfo=timezone.get_current_timezone()
    )
    return end - dt.timedelta(days=days), end


class Roster:
    """Who held each post at a séance, at any moment."""

    def __init__(self, shift_ids: Iterable[int]) -> None:
        self.spans: dict[int, list[tuple[str, int, dt.datetime, dt.datetime | None]]] = defaultdict(
            list
        )
        closed = dict(Shift.objects.filter(pk__in=shift_ids).values_list("pk", "closed_at"))
        for duty in Duty.objects.filter(shift__in=closed).select_related("end"):
            end = getattr(duty, "end", None)
            until = end.at if end is not None else closed.get(duty.shift_id)
            self.spans[duty.shift_id].append((duty.post, duty.person_id, duty.started_at, until))

    def at(self, shift_id: int, moment: dt.datetime) -> dict[str, list[int]]:
        holders: dict[str, list[int]] = {post: [] for post in POSTS}
        for post, person, start, until in self.spans.get(shift_id, ()):
            if start <= moment and (until is None or moment < until):
                holders.setdefault(post, []).append(person)
        return holders


def _units(start: dt.datetime, end: dt.datetime) -> list[tuple[int, dt.datetime]]:
    """The units of play in the window: (séance, moment)."""
    units: list[tuple[int, dt.datetime]] = list(
        Coup.objects.filter(opened_at__gte=start, opened_at__lt=end).values_list(
            "shift_id", "opened_at"
        )
    )
    units += PharaoDraw.objects.filter(settled_at__gte=start, settled_at__lt=end).values_list(
        "taille__shift_id", "settled_at"
    )
    units += Deal.objects.filter(opened_at__gte=start, opened_at__lt=end).values_list(
        "shift_id", "opened_at"
    )
    return units


Event = tuple[str, int, dt.datetime, int | None, str]  # kind, séance, moment, actor, ref


def _anomaly_events(detector: str, kind: str, start: dt.datetime, end: dt.datetime) -> list[Event]:
    """Hard-rule anomalies about a coup (or a Pharao taille), at their coup's opening (a
    taille's: at the anomaly's own moment)."""
    found = list(
        Anomaly.objects.filter(
            detector=detector,
            subject_type__in=["floor.coup", "floor.taille"],
            detected_at__gte=start - dt.timedelta(days=1),
            detected_at__lt=end + dt.timedelta(days=1),
        ).values_list("pk", "subject_type", "subject_id", "detected_at", "involved")
    )
    coups = Coup.objects.in_bulk([int(s) for _, t, s, _, _ in found if t == "floor.coup"])
    tailles = Taille.objects.in_bulk([int(s) for _, t, s, _, _ in found if t == "floor.taille"])
    events: list[Event] = []
    for pk, subject_type, subject_id, detected_at, involved in found:
        if subject_type == "floor.coup":
            coup = coups.get(int(subject_id))
            if coup is None:
                continue
            shift_id, moment, ref = coup.shift_id, coup.opened_at, f"floor.coup:{coup.pk}"
        else:
            taille = tailles.get(int(subject_id))
            if taille is None:
                continue
            shift_id, moment, ref = taille.shift_id, detected_at, f"floor.taille:{taille.pk}"
        if start <= moment < end:
            actor = involved[0] if involved else None
            events.append((kind, shift_id, moment, actor, f"{ref}|audit.anomaly:{pk}"))
    return events


def _dispute_moment(dispute: Any) -> tuple[int, dt.datetime] | None:
    shift = dispute.seance()
    if shift is None:
        return None
    record = dispute.subject()
    for name in ("opened_at", "placed_at", "settled_at", "at"):
        moment = getattr(record, name, None)
        if isinstance(moment, dt.datetime):
            return shift.pk, moment
    return None


def _dispute_events(start: dt.datetime, end: dt.datetime) -> list[Event]:
    """Disputes about the window's play (raised then or later), and the corrections ordered on
    them (a decision whose correcting movements were posted)."""
    from casino.disputes.models import Dispute

    corrected = {
        int(ref.split(":")[1])
        for ref in Movement.objects.filter(
            kind=Movement.Kind.DISPUTE_CORRECTION, at__gte=start
        ).values_list("reference", flat=True)
        if ref.startswith("dispute:")
    }
    events: list[Event] = []
    for dispute in Dispute.objects.filter(raised_at__gte=start).order_by("pk"):
        where = _dispute_moment(dispute)
        if where is None or not start <= where[1] < end:
            continue
        ref = f"disputes.dispute:{dispute.pk}"
        events.append(("dispute", where[0], where[1], None, ref))
        if dispute.pk in corrected:
            events.append(("correction", where[0], where[1], None, ref))
    return events


def _cancellation_events(start: dt.datetime, end: dt.datetime) -> list[Event]:
    return [
        ("coup_cancelled", shift_id, opened_at, by_id, f"floor.coup:{coup_id}")
        for coup_id, shift_id, opened_at, by_id in CoupCancellation.objects.filter(
            coup__opened_at__gte=start, coup__opened_at__lt=end
        ).values_list("coup_id", "coup__shift_id", "coup__opened_at", "by_id")
    ]


def tally(start: dt.datetime, end: dt.datetime) -> Tally:
    """The window's units and events, attributed to who was on duty."""
    units = _units(start, end)
    events = (
        _dispute_events(start, end)
        + _anomaly_events("announcement_mismatch", "announcement_mismatch", start, end)
        + _anomaly_events("late_stake", "late_stake", start, end)
        + _cancellation_events(start, end)
    )
    roster = Roster({shift for shift, _ in units} | {e[1] for e in events})
    counted = Tally()
    for shift_id, moment in units:
        counted.unit(roster.at(shift_id, moment))
    for kind, shift_id, moment, actor, ref in events:
        counted.event(kind, roster.at(shift_id, moment), by_actor=KINDS[kind], ref=ref, actor=actor)
    return counted


def _links(refs: Sequence[str]) -> list[Link]:
    links: dict[str, Link] = {}
    for ref in refs:
        for part in ref.split("|"):
            model, pk = part.split(":")
            links.setdefault(part, Link(model, pk, f"{model.split('.')[1]} {pk}"))
    return list(links.values())


def _row(test: StaffTest, window: str) -> list[str]:
    return [
        KIND_WORDS[test.kind],
        window,
        str(test.count),
        f"{test.expected:.2f}",
        f"{test.exposure} / {test.total_exposure}",
        str(test.room_events),
        f"{test.p_value:.3g}",
    ]


def findings(day: dt.date) -> list[Finding]:
    """Every person whose count of a kind is beyond the room's rate, over the day or 30 days."""
    windows = {
        "day": tally(*bounds(day)),
        f"{WINDOW_DAYS} days": tally(*bounds(day, WINDOW_DAYS)),
    }
    tests = {name: counted.tests(list(KINDS)) for name, counted in windows.items()}
    total = sum(len(t) for t in tests.values())
    threshold = bonferroni(ALPHA, total)
    by_person: dict[tuple[str, int | str], dict[str, dict[str, StaffTest]]] = defaultdict(
        lambda: defaultdict(dict)
    )
    for name, found in tests.items():
        for test in found:
            by_person[test.post, test.person][name][test.kind] = test
    names = dict(User.objects.values_list("pk", "username"))
    raised: list[Finding] = []
    period = day.toordinal() // WINDOW_DAYS
    for (post, person), per_window in sorted(by_person.items(), key=lambda i: str(i[0])):
        rows = [_row(t, name) for name, kinds in per_window.items() for t in kinds.values()]
        fired_today = set()
        for name, kinds in per_window.items():
            for kind, test in kinds.items():
                if test.p_value >= threshold or test.count == 0:
                    continue
                if name != "day" and kind in fired_today:
                    continue  # the day's finding already says it, with these figures
                if name == "day":
                    fired_today.add(kind)
                key = f"{kind}:{post}:{person}:" + (
                    day.isoformat() if name == "day" else f"30d:{period}"
                )
                raised.append(
                    _finding(
                        test, name, day, key, threshold, total, rows, kinds, names.get(person, "?")
                    )
                )
    return raised


def _finding(
    test: StaffTest,
    window: str,
    day: dt.date,
    key: str,
    threshold: float,
    total: int,
    rows: list[list[str]],
    kinds: dict[str, StaffTest],
    name: str,
) -> Finding:
    who = f"{POST_WORDS[test.post]} {name}"
    span = day.isoformat() if window == "day" else f"{WINDOW_DAYS} days to {day.isoformat()}"
    attribution = (
        "the attempts this person made at this post"
        if KINDS[test.kind]
        else "the events on the units this person worked at this post"
    )
    return Finding(
        detector=DETECTOR,
        summary=f"{who}: {test.count} {KIND_WORDS[test.kind]} over {span}, "
        f"{test.expected:.2f} expected at the room's rate",
        rule=(
            f"Of the room's {test.room_events} {KIND_WORDS[test.kind]} at the {POST_WORDS[test.post]} "
            f"post, {attribution}, against Binomial(room's count, this person's share of the "
            "exposure): under honest work every unit of play has the same rate whoever is on duty"
        ),
        figures=[
            ("person", who),
            ("window", span),
            ("observed", str(test.count)),
            ("expected", f"{test.expected:.4f}"),
            ("exposure", f"{test.exposure} of {test.total_exposure} ({test.share:.4f})"),
            ("room's count", str(test.room_events)),
            ("p-value (one-sided, exact)", f"{test.p_value:.3g}"),
            ("tests in this run", str(total)),
        ],
        threshold=f"p < {threshold:.3g} (ALPHA = {ALPHA} / {total} tests, Bonferroni)",
        p_value=test.p_value,
        key=key,
        subject=("auth.user", test.person),
        window=span,
        columns=["kind", "window", "count", "expected", "exposure", "room's count", "p-value"],
        rows=rows,
        chart=Chart(
            "bars",
            f"{who}: counts against the room's rate ({window})",
            [KIND_WORDS[k] for k in kinds],
            [float(t.count) for t in kinds.values()],
            expected=[t.expected for t in kinds.values()],
        ),
        links=_links(test.refs),
        involved=[test.person] if isinstance(test.person, int) else [],
    )


@at_day_end
def staff_at_day_end(day: dt.date) -> list[Finding]:
    return findings(day)
