"""The statistics of the people detectors (staff, patrons and seats): pure Python, no database.

**Staff.** A kind of event (a dispute, an announcement mismatch, a late stake...) happens on the
room's units of play (coups, draws, deals). Under honest work its rate per unit is the same
whoever is on duty. Given the room's total ``N`` of that kind over the window, the events fall on
the units as ``N`` independent uniform draws (the conditional law of independent Poisson counts
of one rate), so a person's count is Binomial(N, share), ``share`` his part of the exposure: no
rate to estimate. The tail is one-sided and exact (``stats.binomial_upper``).

>>> tally = Tally()
>>> for unit in range(100):
...     tally.unit({"tailleur": ["ann" if unit < 20 else "bob"]})
>>> for _ in range(6):
...     tally.event("announcement_mismatch", {"tailleur": ["ann"]}, by_actor=False, ref="c")
>>> [(t.person, t.count, round(t.expected, 2), f"{t.p_value:.2g}") for t in tally.tests()]
[('ann', 6, 1.2, '6.4e-05'), ('bob', 0, 4.8, '1')]

**Results.** A holder's trial is one decided result on one unit: the exchange of the two rows of a
coup (or the two cards of a Pharao draw) is exactly as likely as the cards as dealt, whatever was
dealt before, and it turns every win of the unit into a loss and back; so the holder wins a trial
with probability exactly 1/2 whatever he chose to stake, and his wins over n trials are
Binomial(n, 1/2) (``wins_tail``).

**Rates of refusals.** A count among a person's own attempts against the room's share of refused
attempts, given the room's totals: hypergeometric (``hypergeometric_upper``).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from casino.detectors.stats import binomial_upper

POSTS = ("tailleur", "croupier", "chef_de_partie")
# The staff detector's kinds of event, and whether each is one person's act (counted for him
# alone, at his post) or an event of the unit (counted for everyone on duty at it).
STAFF_KINDS: dict[str, bool] = {
    "dispute": False,
    "announcement_mismatch": False,
    "late_stake": True,
    "coup_cancelled": False,
    "correction": False,
}


@dataclass(frozen=True)
class StaffTest:
    """One person at one post against the room's rate of one kind of event."""

    kind: str
    post: str
    person: int | str
    count: int  # the events attributed to him
    exposure: int  # his units (or, for an act one person does, his units at that post)
    total_exposure: int  # the room's
    room_events: int  # the room's events of the kind (at this post)
    p_value: float
    refs: tuple[str, ...] = ()

    @property
    def share(self) -> float:
        return self.exposure / self.total_exposure if self.total_exposure else 0.0

    @property
    def expected(self) -> float:
        return self.room_events * self.share


@dataclass
class Tally:
    """Units and events of one window, attributed to the people on duty.

    ``unit(holders)``: one unit of play, with the people at each post then (``{post: [ids]}``).
    ``event(kind, holders, by_actor, ref, actor)``: an event on a unit. An event *of the unit*
    (a dispute, a mismatch, a cancellation, a correction) counts for everyone at each post; an
    *act of one person* (``by_actor``: a late stake) counts only for the actor, at the post he
    held, against his share of the slots (unit, person) of that post.
    """

    units: dict[str, dict[int | str, int]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(int))
    )
    units_held: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    slots: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    counts: dict[tuple[str, str, int | str], list[str]] = field(
        default_factory=lambda: defaultdict(list)
    )
    room: dict[tuple[str, str], int] = field(default_factory=lambda: defaultdict(int))
    by_actor: dict[str, bool] = field(default_factory=dict)

    def unit(self, holders: Mapping[str, Sequence[int | str]], weight: int = 1) -> None:
        for post, people in holders.items():
            if not people:
                continue
            self.units_held[post] += weight
            self.slots[post] += weight * len(people)
            for person in people:
                self.units[post][person] += weight

    def event(
        self,
        kind: str,
        holders: Mapping[str, Sequence[int | str]],
        *,
        by_actor: bool,
        ref: str,
        actor: int | str | None = None,
    ) -> None:
        self.by_actor[kind] = by_actor
        if by_actor:
            for post, people in holders.items():
                if actor in people:
                    self.room[kind, post] += 1
                    self.counts[kind, post, actor].append(ref)
                    return
            return  # an actor off duty at every post: no one's rate to hold it against
        for post, people in holders.items():
            if people:
                self.room[kind, post] += 1
            for person in people:
                self.counts[kind, post, person].append(ref)

    def tests(self, kinds: Sequence[str] | None = None) -> list[StaffTest]:
        """Every (kind, post, person with exposure) test; ``kinds`` defaults to those seen."""
        found = []
        for kind in kinds if kinds is not None else sorted(self.by_actor):
            actor = self.by_actor.get(kind, False)
            for post in POSTS:
                total = self.slots[post] if actor else self.units_held[post]
                n = self.room[kind, post]
                for person, exposure in sorted(self.units[post].items(), key=lambda i: str(i[0])):
                    refs = self.counts.get((kind, post, person), [])
                    p = binomial_upper(len(refs), n, exposure / total) if total else 1.0
                    found.append(
                        StaffTest(kind, post, person, len(refs), exposure, total, n, p, tuple(refs))
                    )
        return found


def wins_tail(wins: int, trials: int, p: float = 0.5) -> float:
    """P(W ≥ wins) for W ~ Binomial(trials, p): a holder's won trials.

    >>> round(wins_tail(15, 20), 5)
    0.02069
    """
    return binomial_upper(wins, trials, p)


def hypergeometric_upper(observed: int, population: int, marked: int, drawn: int) -> float:
    """P(X ≥ observed) for X the marked among ``drawn`` of ``population`` holding ``marked``:
    a person's refused attempts among his ``drawn``, the room's ``marked`` of ``population``.

    >>> hypergeometric_upper(3, 10, 3, 3) * math.comb(10, 3)
    1.0
    """
    if observed <= 0:
        return 1.0
    top = min(marked, drawn)
    if observed > top:
        return 0.0
    whole = math.comb(population, drawn)
    tail = sum(
        math.comb(marked, k) * math.comb(population - marked, drawn - k)
        for k in range(observed, top + 1)
    )
    return tail / whole
