"""Patrons and seats on séances played through the services: a lucky seat (one who knows the
cards) is named; a Pharao séance's marks and false parolis are counted from its records (the
statistic on simulated days, its false alarms and its power: ``test_patrons_days``)."""

from __future__ import annotations

import random

import pytest
from django.utils import timezone

from audit.models import Anomaly
from casino import clock
from casino.detectors import patrons
from casino.detectors.frame import raise_finding
from casino.floor import coups
from casino.floor.play.pharao.models import PharaoStakeAct
from casino.games.simulator import random_stakes
from casino.simulation import pace
from casino.simulation.pharao import pharao_seance, pharao_table_for
from casino.simulation.seance import (
    Crew,
    House,
    _cards_pass,
    _close,
    _mind_the_bank,
    _new_pack,
    _open,
    _Seance,
    table_for,
)
from casino.simulation.timeline import Play, play_together


def test_every_decided_trial_is_an_even_chance_in_the_odds_modules() -> None:
    for name, p in patrons.win_probabilities().items():
        assert abs(p - 0.5) < 1e-12, name


# --- a séance played through the services -------------------------------------------------------

VALUE = {"A": 1, "T": 10, "J": 10, "Q": 10, "K": 10}


def _rows(talon: list[str]) -> tuple[int, int, str] | None:
    """What the next coup will be, read from the talon: the totals of noir and rouge and the
    colour of its first card (None if the talon cannot complete both rows)."""
    totals, at = [], 0
    for _ in range(2):
        total = 0
        while total <= 30:
            if at >= len(talon):
                return None
            code = talon[at]
            total += VALUE.get(code[0]) or int(code[0])
            at += 1
        totals.append(total)
    return totals[0], totals[1], "noir" if talon[0][1] in "SC" else "rouge"


def _lucky_coup(s: _Seance, n: int) -> Play:
    """A coup as the simulator plays it (random stakes of seats 1 to 9), with seat ``L``, who
    knows the talon's order, on the winning colour and on couleur or inverse, whichever wins."""
    rng, crew = s.rng, s.crew
    yield pace.pause(rng, pace.BETWEEN_COUPS)
    coup = coups.coup_open(actor=crew.tailleur, shift_id=s.open_shift.pk)
    for stake in random_stakes(rng, n, rng.randint(0, 2), s.open_shift.rules(), prefix="p"):
        coups.stake_place(
            actor=crew.croupier,
            coup_id=coup.pk,
            ref=stake.id,
            holder=str(rng.randint(1, 9)),
            chance=stake.chance.value,
            amount=stake.amount,
        )
    known = _rows(s.talon)
    if known is not None and known[0] != known[1]:
        noir, rouge, first = known
        winner = "noir" if noir < rouge else "rouge"
        for ref, chance in (("L1", winner), ("L2", "couleur" if first == winner else "inverse")):
            coups.stake_place(
                actor=crew.croupier,
                coup_id=coup.pk,
                ref=f"{ref}-{n}",
                holder="L",
                chance=chance,
                amount=1000,
            )
    coups.coup_close_betting(actor=crew.tailleur, coup_id=coup.pk)
    laid = None
    while s.talon and (laid is None or not laid.coup_complete):
        laid = coups.coup_lay_card(actor=crew.tailleur, coup_id=coup.pk, code=s.talon.pop(0))
    yield pace.pause(rng, pace.SETTLEMENT)
    if coups.coup_settle(actor=crew.croupier, coup_id=coup.pk).last:
        yield from _cards_pass(s)


def _lucky_seance(s: _Seance, number: int) -> Play:
    yield from _open(s)
    for n in range(number):
        if not s.talon:
            yield from _new_pack(s)
        yield from _mind_the_bank(s)
        yield from _lucky_coup(s, n)
    if s.talon:
        yield from _cards_pass(s)
    yield from _close(s)


@pytest.mark.django_db
def test_the_day_end_names_the_lucky_seat(cast, posted) -> None:
    house = House(cast.directeur, cast.caissier, cast.commissaire)
    table = table_for(house, 1, limits=(500, 5_000))
    s = _Seance(table, Crew(cast.chef, cast.tailleur, cast.croupier), house, random.Random(3))
    play_together([(clock.now(), _lucky_seance(s, 10))])
    day = timezone.localdate(clock.now())
    found = patrons.findings(day)
    assert [f.key for f in found] == [f"results:T1:seat:L:{day.isoformat()}"]
    lucky = found[0]
    figures = dict(lucky.figures)
    assert figures["observed"] == figures["out of"]
    assert int(figures["observed"]) >= 15  # two trials a decided coup
    assert lucky.involved == [cast.croupier.pk]  # who recorded the seat's stakes
    assert {link.type for link in lucky.links} == {"floor.coup"}
    anomaly = raise_finding(lucky)
    assert Anomaly.objects.filter(detector="patrons").get() == anomaly
    assert anomaly.evidence["table"]["rows"][0][1] == "won"


@pytest.mark.django_db
def test_a_pharao_seance_counts_its_marks_and_false_parolis(cast, posted) -> None:
    house = House(cast.directeur, cast.caissier, cast.commissaire)
    table = pharao_table_for(house, 5)
    crew = Crew(cast.chef, cast.tailleur, cast.croupier)
    play = pharao_seance(table, crew, house, random.Random(13), tailles_to_play=1, mistakes=0.3)
    play_together([(clock.now(), play)])
    start, end = patrons.bounds(timezone.localdate(clock.now()))
    croupiers, holders = patrons.false_paroli_counts(start, end)
    false = Anomaly.objects.filter(detector="false_paroli").count()
    marks = PharaoStakeAct.objects.filter(act__in=patrons.MARKS).count()
    assert false > 0
    assert croupiers[cast.croupier.pk].false == false
    assert croupiers[cast.croupier.pk].asked == marks + false
    assert sum(a.false for a in holders.values()) == false
    results, marked = patrons.holder_trials(start, end)
    assert results
    assert sum(t.n for t in marked.values()) <= sum(t.n for t in results.values())
    # An honest séance (its mistakes are the room's rate, every patron's alike): nothing found.
    assert patrons.findings(timezone.localdate(clock.now())) == []
