"""The simulator's planted misconduct, which the detectors' demo and tests rely on: a seat that
knows the cards wins every coup it stakes on, a croupier who mis-announces is recorded doing it,
and one who past-posts is refused and recorded each time. An honest séance plants nothing."""

from __future__ import annotations

import random

import pytest

from audit.models import Anomaly
from casino import clock
from casino.floor.models import Settlement, Shift, Stake
from casino.simulation.seance import Crew, House, Planted, seance, table_for
from casino.simulation.timeline import play_together

pytestmark = pytest.mark.django_db


def _play(cast, planted: Planted) -> Shift:
    house = House(cast.directeur, cast.caissier, cast.commissaire)
    crew = Crew(cast.chef, cast.tailleur, cast.croupier)
    table = table_for(house, 7)
    play_together(
        [(clock.now(), seance(table, crew, house, random.Random(5), coups=16, planted=planted))]
    )
    return Shift.objects.get(table=table)


def test_a_seat_that_knows_the_cards_never_loses_and_misconduct_is_on_record(cast, posted):
    shift = _play(cast, Planted(lucky_seat="12", lucky_every=1, misannounce=0.5, past_post=0.2))
    lucky = Stake.objects.filter(coup__shift=shift, holder__code__endswith=":seat:12")
    assert lucky.count() >= 8
    outcomes = set(Settlement.objects.filter(stake__in=lucky).values_list("outcome", flat=True))
    assert outcomes == {"won"}
    mismatches = Anomaly.objects.filter(detector="announcement_mismatch")
    late = Anomaly.objects.filter(detector="late_stake")
    assert mismatches.count() >= 4
    assert late.count() >= 2
    assert {tuple(a.involved) for a in [*mismatches, *late]} == {(cast.croupier.pk,)}


def test_an_honest_seance_plants_nothing(cast, posted):
    shift = _play(cast, Planted())
    assert not Stake.objects.filter(coup__shift=shift, ref__startswith="lucky").exists()
    assert not Anomaly.objects.filter(detector="late_stake").exists()
