"""What every statistical detector has in common: its finding, how a finding becomes an anomaly,
and when the detectors run.

A finding says what happened and why, the same way for every detector, so that the anomaly page
(``audit.admin``) shows any of them without knowing which it is: the rule in one sentence, the
figures (observed, expected, how far out, the p-value), the threshold it was held against, and the
evidence as a table, a chart and links to the records. The evidence is stored in the anomaly and
hashed into the audit chain: figures are decimal text, never floats (a float's digits are not a
record's).

Runs. ``at_seance_close`` and ``at_day_end`` register a family's functions; the worker calls
``run_seance_close`` when a séance has closed and ``run_day_end`` when a gaming day is over
(``casino.detectors.tasks``, asked through the outbox in the act's transaction). A detector may
run as often as it likes: each finding carries a key, and the queue holds one anomaly per key.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import models

from audit.models import Anomaly, Severity
from audit.services import anomaly_raise


@dataclass(frozen=True)
class Link:
    """A record the evidence points at: ``type`` is a model's label (``floor.coup``)."""

    type: str
    id: object
    label: str = ""

    def to_json(self) -> dict[str, str]:
        return {"type": self.type, "id": str(self.id), "label": self.label or f"{self.id}"}


@dataclass(frozen=True)
class Chart:
    """A picture of the evidence, drawn by the anomaly page without any outside resource.

    ``bars``: one bar per label (``values``), with ``low``/``high`` an optional band per bar and
    ``expected`` an optional mark per bar; ``band``: one observed value against its expected value
    and band (``values`` = [observed], ``expected`` = [mean], ``low``/``high`` = [band]).
    """

    kind: str  # "bars" or "band"
    title: str
    labels: Sequence[str]
    values: Sequence[float]
    expected: Sequence[float] = ()
    low: Sequence[float] = ()
    high: Sequence[float] = ()
    unit: str = ""

    def to_json(self) -> dict[str, Any]:
        def text(values: Sequence[float]) -> list[str]:
            return [f"{v:.6g}" for v in values]

        return {
            "kind": self.kind,
            "title": self.title,
            "labels": [str(label) for label in self.labels],
            "values": text(self.values),
            "expected": text(self.expected),
            "low": text(self.low),
            "high": text(self.high),
            "unit": self.unit,
        }


@dataclass(frozen=True)
class Finding:
    """What a detector found, for a person to review.

    ``figures`` are (label, value) pairs already written as text; ``table`` is the evidence row by
    row under ``columns``; ``key`` makes the finding raise one anomaly however often the detector
    runs; ``involved`` are the people whose acts are in question (they cannot review it).
    """

    detector: str
    summary: str
    rule: str
    figures: Sequence[tuple[str, str]]
    threshold: str
    p_value: float
    key: str
    subject: models.Model | tuple[str, object] | None = None
    window: str = ""
    columns: Sequence[str] = ()
    rows: Sequence[Sequence[object]] = ()
    chart: Chart | None = None
    links: Sequence[Link] = ()
    involved: Sequence[int] = ()
    severity: Severity = Severity.WARNING
    extra: dict[str, Any] = field(default_factory=dict)

    def evidence(self) -> dict[str, Any]:
        evidence: dict[str, Any] = {
            "rule": self.rule,
            "window": self.window,
            "figures": [[label, value] for label, value in self.figures],
            "threshold": self.threshold,
            "p_value": f"{self.p_value:.3g}",
        }
        if self.columns:
            evidence["table"] = {
                "columns": list(self.columns),
                "rows": [[str(cell) for cell in row] for row in self.rows],
            }
        if self.chart is not None:
            evidence["chart"] = self.chart.to_json()
        if self.links:
            evidence["links"] = [link.to_json() for link in self.links]
        evidence.update(self.extra)
        return evidence


def raise_finding(finding: Finding) -> Anomaly:
    """The finding as an anomaly in the review queue (once per key), audited as every anomaly."""
    return anomaly_raise(
        detector=finding.detector,
        severity=finding.severity,
        summary=finding.summary,
        evidence=finding.evidence(),
        subject=finding.subject,
        involved=finding.involved,
        dedup_key=f"{finding.detector}:{finding.key}",
    )


SeanceDetector = Callable[[Any], Sequence[Finding]]  # the closed Shift
DayDetector = Callable[[dt.date], Sequence[Finding]]  # the gaming day (the house's time zone)

SEANCE_CLOSE: list[SeanceDetector] = []
DAY_END: list[DayDetector] = []


def at_seance_close(fn: SeanceDetector) -> SeanceDetector:
    SEANCE_CLOSE.append(fn)
    return fn


def at_day_end(fn: DayDetector) -> DayDetector:
    DAY_END.append(fn)
    return fn


def run_seance_close(shift: Any) -> list[Anomaly]:
    """Every séance detector over the closed séance; each finding raised."""
    return [raise_finding(f) for detector in SEANCE_CLOSE for f in detector(shift)]


def run_day_end(day: dt.date) -> list[Anomaly]:
    """Every day detector over the gaming day; each finding raised."""
    return [raise_finding(f) for detector in DAY_END for f in detector(day)]
