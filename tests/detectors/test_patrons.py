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
from casino.floor.play.pharao.models import PharaoStakeAct
from casino.simulation.pharao import pharao_seance, pharao_table_for
from casino.simulation.seance import Crew, House, Planted, seance, table_for
from casino.simulation.timeline import play_together


def test_every_decided_trial_is_an_even_chance_in_the_odds_modules() -> None:
    for name, p in patrons.win_probabilities().items():
        assert abs(p - 0.5) < 1e-12, name


# --- a séance played through the services -------------------------------------------------------


@pytest.mark.django_db
def test_the_day_end_names_the_lucky_seat(cast, posted) -> None:
    house = House(cast.directeur, cast.caissier, cast.commissaire)
    table = table_for(house, 1, limits=(500, 5_000))
    crew = Crew(cast.chef, cast.tailleur, cast.croupier)
    lucky = Planted(lucky_seat="L", lucky_amount=1000, lucky_every=1)  # knows the talon's order
    play = seance(table, crew, house, random.Random(3), coups=18, stakes_per_coup=2, planted=lucky)
    play_together([(clock.now(), play)])
    day = timezone.localdate(clock.now())
    found = patrons.findings(day)
    assert [f.key for f in found] == [f"results:T1:seat:L:{day.isoformat()}"]
    lucky = found[0]
    figures = dict(lucky.figures)
    assert figures["observed"] == figures["out of"]
    assert int(figures["observed"]) >= 15  # one trial a decided coup
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
