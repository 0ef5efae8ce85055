"""The detectors' frame: a finding becomes one anomaly with its evidence, however often it runs;
the worker's runs are asked through the outbox when a séance closes and when a day is over."""

from __future__ import annotations

import doctest

import pytest

import casino.detectors.stats
import casino.detectors.svg
from audit.models import Anomaly, AuditEvent
from casino.detectors import frame
from casino.detectors.frame import Chart, Finding, Link, raise_finding
from casino.detectors.svg import svg


def test_the_pure_parts_say_what_they_do() -> None:
    assert doctest.testmod(casino.detectors.stats).failed == 0
    assert doctest.testmod(casino.detectors.svg).failed == 0


def _finding(**changes: object) -> Finding:
    values: dict[str, object] = {
        "detector": "test_detector",
        "summary": "table 1: something beyond chance",
        "rule": "the count against its binomial tail",
        "figures": [("observed", "12"), ("expected", "4.0")],
        "threshold": "p < 0.001",
        "p_value": 0.00012345,
        "key": "table:1",
        "columns": ["coup", "result"],
        "rows": [[1, "rouge"], [2, "noir"]],
        "chart": Chart("bars", "per hour", ["14h", "15h"], [1.5, -2.0], low=[-3, -3], high=[3, 3]),
        "links": [Link("floor.shift", 7, "séance 7")],
    }
    values.update(changes)
    return Finding(**values)  # type: ignore[arg-type]


@pytest.mark.django_db(transaction=True)
def test_a_finding_is_raised_once_with_its_evidence_as_text() -> None:
    first = raise_finding(_finding())
    again = raise_finding(_finding(summary="the same finding, found again"))
    assert again.pk == first.pk
    assert Anomaly.objects.count() == 1
    assert AuditEvent.objects.filter(action="anomaly.raised").count() == 1
    evidence = Anomaly.objects.get().evidence
    assert evidence["p_value"] == "0.000123"
    assert evidence["figures"] == [["observed", "12"], ["expected", "4.0"]]
    assert evidence["table"] == {
        "columns": ["coup", "result"],
        "rows": [["1", "rouge"], ["2", "noir"]],
    }
    assert evidence["chart"]["values"] == ["1.5", "-2"]
    assert evidence["links"] == [{"type": "floor.shift", "id": "7", "label": "séance 7"}]
    # The stored chart draws the same picture as the one the detector made.
    assert svg(evidence["chart"]) == svg(_finding().chart)  # type: ignore[arg-type]


def test_a_chart_escapes_what_it_draws() -> None:
    picture = svg(Chart("bars", "<script>", ["<b>"], [1.0]))
    assert "<script>" not in picture
    assert "&lt;script&gt;" in picture


@pytest.mark.django_db(transaction=True)
def test_runs_raise_what_every_registered_detector_finds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(frame, "DAY_END", [lambda day: [_finding(key=f"day:{day}")]])
    import datetime as dt

    raised = frame.run_day_end(dt.date(2026, 11, 23))
    assert [a.dedup_key for a in raised] == ["test_detector:day:2026-11-23"]
