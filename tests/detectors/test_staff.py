"""Staff against the room's rate on a day played through the services: a dealer who mis-announces
and a croupier who past-posts are named, and no one else (the statistic on simulated rooms, its
false alarms and its power: ``test_staff_rooms``)."""

from __future__ import annotations

import random

import pytest
from django.utils import timezone

from audit.models import Anomaly, Severity
from audit.services import anomaly_raise
from casino import clock
from casino.detectors import staff
from casino.detectors.frame import raise_finding
from casino.floor.models import Coup
from casino.people.roles import Role
from casino.people.services import staff_create
from casino.simulation.seance import Crew, House, seance, table_for
from casino.simulation.timeline import play_together

# --- a day played through the services -----------------------------------------------------------


def _person(cast, name: str, role: Role):  # type: ignore[no-untyped-def]
    return staff_create(actor=cast.directeur, username=name, full_name=name, roles=[role])


@pytest.mark.django_db
def test_the_day_end_names_the_mis_announcer_and_the_past_poster(cast, posted) -> None:
    house = House(cast.directeur, cast.caissier, cast.commissaire)
    t = [cast.tailleur] + [_person(cast, f"tailleur{n}", Role.TAILLEUR) for n in (2, 3)]
    c = [cast.croupier] + [_person(cast, f"croupier{n}", Role.CROUPIER) for n in (2, 3)]
    chefs = [cast.chef, _person(cast, "chef2", Role.CHEF_DE_PARTIE)]
    # One séance a table (a table's bank carries over from séance to séance in the simulator).
    tables = [table_for(house, n, limits=(500, 5_000)) for n in (1, 2, 3, 4)]
    crews = [
        (tables[0], Crew(chefs[0], t[0], c[0])),  # tailleur t[0] mis-announces
        (tables[1], Crew(chefs[1], t[1], c[1])),  # croupier c[1] past-posts
        (tables[2], Crew(chefs[0], t[1], c[2])),
        (tables[3], Crew(chefs[1], t[2], c[0])),
    ]
    rng = random.Random(7)
    for table, crew in crews:
        play_together([(clock.now(), seance(table, crew, house, rng, coups=10, stakes_per_coup=1))])
    shifts = {s.shift_id for s in Coup.objects.all()}
    assert len(shifts) == 4
    by_shift = sorted(shifts)
    for n, coup in enumerate(Coup.objects.filter(shift_id=by_shift[0]).order_by("id")[:9]):
        # What coup_settle raises when the spoken announcement is not the cards'.
        anomaly_raise(
            detector="announcement_mismatch",
            severity=Severity.WARNING,
            subject=coup,
            involved=[c[0].pk],
            summary=f"planted mismatch {n}",
            evidence={"spoken": "noir gagne", "computed": "rouge"},
        )
    for n, coup in enumerate(Coup.objects.filter(shift_id=by_shift[1]).order_by("id")[:9]):
        # What stake_place raises when a stake comes after the first card.
        anomaly_raise(
            detector="late_stake",
            severity=Severity.CRITICAL,
            subject=coup,
            involved=[c[1].pk],
            summary=f"planted late stake {n}",
            evidence={"coup": coup.pk, "what": "a stake"},
        )
    day = timezone.localdate(clock.now())
    found = staff.findings(day)
    named = {(f.key.split(":")[0], f.key.split(":")[1], f.involved[0]) for f in found}
    assert named == {
        ("announcement_mismatch", "tailleur", t[0].pk),
        ("late_stake", "croupier", c[1].pk),
    }
    mismatch = next(f for f in found if f.involved == [t[0].pk])
    figures = dict(mismatch.figures)
    assert figures["exposure"].startswith("10 of 40")
    assert int(figures["observed"]) >= 9
    assert len([link for link in mismatch.links if link.type == "floor.coup"]) >= 9
    anomaly = raise_finding(mismatch)
    assert anomaly.involved == [t[0].pk]
    assert anomaly.evidence["table"]["columns"][0] == "kind"
    assert Anomaly.objects.filter(detector="staff").count() == 1
