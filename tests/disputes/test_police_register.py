"""The police observations register and its eight days."""

from __future__ import annotations

import datetime as dt

import pytest

from audit.models import Anomaly
from casino.errors import Conflict, RoleRequired
from casino.police.services import follow_up_record, follow_ups_overdue, observation_record

VISIT = dt.datetime(2026, 11, 2, 21, 30, tzinfo=dt.UTC)


def test_an_observation_left_without_follow_up_for_eight_days_raises_an_anomaly(cast, table):
    observation = observation_record(
        actor=cast.commissaire,
        visited_at=VISIT,
        checks="seals of the sixains in store; the règlement posted at table 1",
        injunctions="post the règlement at the cage as well",
        table_number=1,
    )
    answered = observation_record(
        actor=cast.commissaire, visited_at=VISIT, checks="the receipt register"
    )
    follow_up_record(actor=cast.directeur, observation_id=answered.pk, action="nothing to do")
    eight_days = dt.timedelta(days=8)
    assert follow_ups_overdue(now=VISIT + eight_days) == []
    raised = follow_ups_overdue(now=VISIT + eight_days + dt.timedelta(seconds=1))
    assert [a.subject_id for a in raised] == [str(observation.pk)]
    assert raised[0].detector == "police_follow_up_overdue"
    follow_ups_overdue(now=VISIT + 2 * eight_days)  # detectors run often: still one anomaly
    assert Anomaly.objects.filter(detector="police_follow_up_overdue").count() == 1
    # A late follow-up is still recorded, and says it was late.
    late = follow_up_record(
        actor=cast.directeur, observation_id=observation.pk, action="posted at the cage"
    )
    assert late.at > observation.follow_up_due


def test_who_writes_in_the_register(cast):
    with pytest.raises(RoleRequired):
        observation_record(actor=cast.directeur, visited_at=VISIT, checks="x")
    observation = observation_record(actor=cast.commissaire, visited_at=VISIT, checks="x")
    for who in (cast.commissaire, cast.chef, cast.inspecteur):
        with pytest.raises(RoleRequired):
            follow_up_record(actor=who, observation_id=observation.pk, action="done")
    follow_up_record(actor=cast.directeur, observation_id=observation.pk, action="done")
    with pytest.raises(Conflict):
        follow_up_record(actor=cast.directeur, observation_id=observation.pk, action="again")
