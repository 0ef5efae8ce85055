"""The load bench's Server-Timing header (casino/api/timing.py): there when the setting is on,
absent (the middleware out of the chain) when it is off, as in production."""

from __future__ import annotations

import re

import pytest
from django.test import Client, override_settings

TIMING = re.compile(
    r'^cpu;dur=(\d+\.\d\d), db;dur=(\d+\.\d\d);desc="(\d+) queries", app;dur=(\d+\.\d\d)$'
)


def _me(cast, *, timing: bool):  # type: ignore[no-untyped-def]
    """``GET /api/v1/me`` as the tailleur, the timing on or off."""
    # A new client loads the middleware chain afresh, under the overridden setting.
    with override_settings(SERVER_TIMING=timing):
        client = Client()
        client.force_login(cast.tailleur)
        response = client.get("/api/v1/me")
    assert response.status_code == 200
    return response


@pytest.mark.django_db
def test_an_answer_carries_the_servers_cpu_and_wall_time_when_timing_is_on(cast):
    response = _me(cast, timing=True)
    found = TIMING.match(response["Server-Timing"])
    assert found, response["Server-Timing"]
    cpu, db, queries, wall = (float(x) for x in found.groups())
    # The request's own thread spent CPU on it, and not more than the time it took (one thread;
    # a hundredth of a millisecond for the rounding of each); reading who is asking takes
    # statements (the session, the user), whose time is part of the whole.
    assert 0 < cpu <= wall + 0.01
    assert queries >= 1
    assert 0 < db <= wall + 0.01


@pytest.mark.django_db
def test_no_answer_says_how_long_the_server_worked_when_timing_is_off(cast):
    assert "Server-Timing" not in _me(cast, timing=False)
