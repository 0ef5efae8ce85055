"""The review queue in the admin: a detector's finding says on its page what happened and why; the
queue counts what waits by severity, detector and age, and draws the anomalies raised per day;
reviewers act one by one or in bulk with one reason, each step through the audit services, and a
batch with one refused step is refused as a whole, naming it, with nothing recorded."""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from audit.errors import ReviewBatchTooLarge, ReviewerInvolved
from audit.models import Anomaly, AnomalyReview, AnomalyState, AuditEvent, Severity
from audit.queue import PENDING, raised_per_day
from audit.services import BATCH_LIMIT, anomalies_review, anomaly_raise, anomaly_review
from casino import clock
from casino import shown as shown_day
from casino.detectors.frame import Chart, Finding, Link, raise_finding
from casino.errors import RoleRequired
from tests.actors import admin_client

pytestmark = pytest.mark.django_db

QUEUE = "/admin/audit/anomaly/"


def finding(key: str, *, involved: tuple[int, ...] = (), **changes: object) -> Finding:
    values: dict[str, object] = {
        "detector": "staff_cancellations",
        "summary": f"croupier cancels coups beyond the room's rate ({key})",
        "rule": "cancelled coups of one croupier against the room's rate (Poisson upper tail)",
        "figures": [("cancelled", "9"), ("expected at the room's rate", "2.1")],
        "threshold": "p < 0.001 / 12 tests (Bonferroni)",
        "p_value": 0.0000412,
        "key": key,
        "window": "séance 7",
        "columns": ["coup", "cancelled at", "by"],
        "rows": [[101, "14:02", "croupier"], [117, "14:40", "croupier"]],
        "chart": Chart("bars", "cancelled per hour", ["14h", "15h"], [5, 4], expected=[1, 1.1]),
        "links": [
            Link("floor.coup", 101, "coup 101"),
            Link("floor.coup", 117, "coup 117"),
            Link("floor.shift", 7, "séance 7"),
            Link("shoes.pack", 3, "jeu 3"),
            Link("disputes.dispute", 5, "contestation 5"),
        ],
        "involved": involved,
    }
    values.update(changes)
    return Finding(**values)  # type: ignore[arg-type]


def hard_rule(summary: str, **kwargs: object) -> Anomaly:
    return anomaly_raise(
        detector=kwargs.pop("detector", "late_stake"),  # type: ignore[arg-type]
        severity=kwargs.pop("severity", Severity.WARNING),  # type: ignore[arg-type]
        summary=summary,
        evidence={"coup": 3, "late": True},
        **kwargs,  # type: ignore[arg-type]
    )


def recorded() -> tuple[int, int, list[str]]:
    """What a refused act must leave as it was: reviews, the chain, every state."""
    states = list(Anomaly.objects.order_by("pk").values_list("state", flat=True))
    return AnomalyReview.objects.count(), AuditEvent.objects.count(), states


def bulk(client: Client, action: str, anomalies: list[Anomaly], reason: str | None = None):
    """A bulk act as the changelist sends it: the action on the ticked anomalies, then, with a
    reason, the intermediate page's form."""
    data: dict[str, object] = {
        "action": action,
        "_selected_action": [str(a.pk) for a in anomalies],
        "index": "0",
    }
    if reason is None:
        return client.post(QUEUE, data)
    data.pop("index")
    return client.post(QUEUE, {**data, "post": "yes", "reason": reason})


def test_a_finding_s_page_says_the_rule_figures_threshold_evidence_chart_and_links(cast):
    anomaly = raise_finding(finding("croupier:1", involved=(cast.croupier.pk,)))
    page = admin_client(cast.auditeur).get(f"{QUEUE}{anomaly.pk}/change/").content.decode()

    assert "cancelled coups of one croupier against the room&#x27;s rate" in page
    figures = page[page.index('id="figures"') : page.index("</table>", page.index('id="figures"'))]
    for label, value in (("cancelled", "9"), ("expected at the room&#x27;s rate", "2.1")):
        assert re.search(rf"<th[^>]*>{label}</th><td[^>]*>{value}</td>", figures), label
    assert "4.12e-05" in figures  # the p-value as the evidence keeps it
    assert "p &lt; 0.001 / 12 tests (Bonferroni)" in page
    assert page.count('<svg xmlns="http://www.w3.org/2000/svg" role="img" class="chart"') == 1
    assert "cancelled per hour" in page
    assert "<td>14:40</td>" in page  # the evidence table
    for url in (
        "/admin/floor/coup/101/change/",
        "/admin/floor/coup/117/change/",
        "/admin/floor/shift/7/change/",
        "/admin/shoes/pack/3/change/",
        "/admin/disputes/dispute/5/change/",
        f"/admin/auth/user/{cast.croupier.pk}/change/",  # the person in question
    ):
        assert f'href="{url}"' in page, url
    # The next step, and who may take it; the raw evidence is not shown as well.
    assert f'href="{QUEUE}{anomaly.pk}/review/?to=acknowledged"' in page
    assert "staff_cancellations" in page
    assert '<dl class="readable">' not in page


def test_a_hard_rule_s_page_reads_as_before_and_says_who_may_take_the_next_steps(cast):
    anomaly = hard_rule("a stake after the first card", involved=[cast.auditeur2.pk])
    anomaly_review(actor=cast.auditeur, anomaly_id=anomaly.pk, to_state="acknowledged", reason="vu")
    page = admin_client(cast.auditeur2).get(f"{QUEUE}{anomaly.pk}/change/").content.decode()
    assert '<dl class="readable">' in page
    assert 'id="finding"' not in page
    assert "Historique de l" in page
    assert "vu" in page
    steps = page[page.index('id="next-steps"') :]
    for state in ("dismissed", "escalated", "confirmed"):
        assert f'id="step-{state}"' in steps
        assert f"?to={state}" not in steps  # no button: he is in question
    assert "vous êtes en cause" in steps
    commissioner = admin_client(cast.commissaire).get(f"{QUEUE}{anomaly.pk}/change/")
    assert "il faut le rôle Auditeur interne ou Directeur" in commissioner.content.decode()


def test_auditors_act_in_bulk_with_one_reason_each_step_audited(cast):
    chosen = [hard_rule(f"late stake {i}") for i in range(3)]
    other = hard_rule("left alone")
    client = admin_client(cast.auditeur)

    asked = bulk(client, "acknowledge_selected", chosen)
    assert asked.status_code == 200
    page = asked.content.decode()
    assert all(f"late stake {i}" in page for i in range(3))
    assert "left alone" not in page
    before = AuditEvent.objects.count()

    done = bulk(client, "acknowledge_selected", chosen, reason="vus ensemble, ronde du soir")
    assert done.status_code == 302
    assert {a.state for a in Anomaly.objects.filter(pk__in=[a.pk for a in chosen])} == {
        AnomalyState.ACKNOWLEDGED
    }
    assert Anomaly.objects.get(pk=other.pk).state == AnomalyState.OPEN
    reviews = AnomalyReview.objects.filter(anomaly__in=chosen)
    assert [(r.actor_id, r.reason) for r in reviews] == [
        (cast.auditeur.pk, "vus ensemble, ronde du soir")
    ] * 3
    events = AuditEvent.objects.filter(seq__gt=before, action="anomaly.reviewed")
    assert sorted(e.subject_id for e in events) == sorted(str(a.pk) for a in chosen)

    dismissed = bulk(client, "dismiss_selected", chosen[:2], reason="fausse alerte")
    assert dismissed.status_code == 302
    assert Counter(Anomaly.objects.values_list("state", flat=True)) == Counter(
        {"dismissed": 2, "acknowledged": 1, "open": 1}
    )
    no_reason = bulk(client, "escalate_selected", chosen[2:], reason="  ")
    assert no_reason.status_code == 200
    assert Anomaly.objects.get(pk=chosen[2].pk).state == (AnomalyState.ACKNOWLEDGED)


def test_a_batch_with_one_refused_step_is_refused_whole_naming_it_and_nothing_is_recorded(cast):
    anomalies = [hard_rule(f"late stake {i}") for i in range(3)]
    own = hard_rule("auditeur2's own late stake", involved=[cast.auditeur2.pk])
    batch = [*anomalies, own]
    anomalies_review(
        actor=cast.auditeur, anomaly_ids=[a.pk for a in batch], to_state="acknowledged", reason="r"
    )
    before = recorded()

    # The person in question dismisses his own anomaly among others.
    refused = bulk(admin_client(cast.auditeur2), "dismiss_selected", batch, reason="rien")
    assert refused.status_code == 200
    assert f"l&#x27;anomalie {own.pk} (auditeur2&#x27;s own late stake)" in refused.content.decode()
    assert "rien n&#x27;est enregistré" in refused.content.decode()
    assert recorded() == before

    # A superuser holds no role.
    refused = bulk(admin_client(cast.root), "dismiss_selected", anomalies, reason="ménage")
    assert refused.status_code == 200
    assert "il faut le rôle" in refused.content.decode()
    assert recorded() == before

    # A croupier does not even see the queue.
    croupier = admin_client(cast.croupier)
    assert croupier.get(QUEUE).status_code == 403
    assert bulk(croupier, "dismiss_selected", anomalies, reason="moi").status_code == 403
    assert recorded() == before

    # A chef de partie reads the queue but has no bulk acts: the forced action is unknown.
    chef = bulk(admin_client(cast.chef), "dismiss_selected", anomalies, reason="moi")
    assert chef.status_code == 200
    assert recorded() == before

    # The commissioner rules only on what was escalated; one step illegal refuses the batch.
    refused = bulk(admin_client(cast.commissaire), "confirm_selected", anomalies, reason="vu")
    assert refused.status_code == 200
    assert recorded() == before

    # Directly to the service: the same refusals.
    ids = [a.pk for a in batch]
    for actor in (cast.croupier, cast.root):
        with pytest.raises(RoleRequired):
            anomalies_review(actor=actor, anomaly_ids=ids, to_state="dismissed", reason="r")
    with pytest.raises(ReviewerInvolved, match=f"anomal[a-z]* {own.pk}"):
        anomalies_review(actor=cast.auditeur2, anomaly_ids=ids, to_state="dismissed", reason="r")
    with pytest.raises(ReviewBatchTooLarge):
        anomalies_review(
            actor=cast.auditeur,
            anomaly_ids=range(BATCH_LIMIT + 1),
            to_state="dismissed",
            reason="r",
        )
    with pytest.raises(RoleRequired):
        anomalies_review(actor=cast.root, anomaly_ids=[own.pk], to_state="dismissed", reason="r")
    assert recorded() == before


def test_the_queue_counts_by_severity_detector_and_age_and_draws_the_days(cast):
    now = clock.now()
    made: list[tuple[Anomaly, dt.timedelta]] = []
    plan = [  # (age, severity, detector)
        (dt.timedelta(hours=2), Severity.CRITICAL, "hold_seance"),
        (dt.timedelta(hours=5), Severity.WARNING, "hold_seance"),
        (dt.timedelta(days=3), Severity.WARNING, "sixain_refait"),
        (dt.timedelta(days=3, hours=1), Severity.INFO, "late_stake"),
        (dt.timedelta(days=9), Severity.CRITICAL, "late_stake"),
        (dt.timedelta(days=12), Severity.WARNING, "hold_seance"),
        (dt.timedelta(days=40), Severity.WARNING, "hold_seance"),  # older than the picture
    ]
    for age, severity, detector in sorted(plan, key=lambda p: -p[0]):
        with clock.ManualClock(now - age):
            made.append((hard_rule(f"{detector} {age}", severity=severity, detector=detector), age))
    first = made[0][0]  # the oldest
    anomaly_review(
        actor=cast.auditeur, anomaly_id=made[1][0].pk, to_state="acknowledged", reason="r"
    )
    for step in ("acknowledged", "escalated"):
        anomaly_review(actor=cast.auditeur, anomaly_id=made[2][0].pk, to_state=step, reason="r")
    anomaly_review(
        actor=cast.auditeur, anomaly_id=made[3][0].pk, to_state="acknowledged", reason="r"
    )
    anomaly_review(actor=cast.auditeur, anomaly_id=made[3][0].pk, to_state="dismissed", reason="r")

    client = admin_client(cast.auditeur)
    response = client.get(QUEUE)
    counts = response.context["counts"]

    def expected(key) -> dict[str, dict[str, int]]:  # type: ignore[no-untyped-def]
        table: dict[str, Counter[str]] = {}
        for anomaly, age in made:
            anomaly.refresh_from_db()
            if anomaly.state in PENDING:
                table.setdefault(key(anomaly, age), Counter())[anomaly.state] += 1
        return {k: dict(v) for k, v in table.items()}

    def shown(rows) -> dict[str, dict[str, int]]:  # type: ignore[no-untyped-def]
        return {row.label: row.counts for row in rows if row.counts}

    def bucket(age: dt.timedelta) -> str:
        if age < dt.timedelta(days=1):
            return "moins d'un jour"
        return "de 1 à 7 jours" if age <= dt.timedelta(days=7) else "plus de 7 jours"

    assert shown(counts.by_detector) == expected(lambda a, age: a.detector)
    assert shown(counts.by_severity) == expected(lambda a, age: a.get_severity_display())
    assert shown(counts.by_age) == expected(lambda a, age: bucket(age))
    assert counts.pending == 6
    assert counts.oldest_open == first.detected_at

    # Each count is a link to those anomalies; the age filter and oldest-open-first order work.
    older = client.get(QUEUE, {"age": "older", "state__exact": "open"}).context["cl"]
    opened = [m.pk for m, _age in made if Anomaly.objects.get(pk=m.pk).state == "open"]
    assert {a.pk for a in older.result_list} == {
        m.pk for m, age in made if age > dt.timedelta(days=7) and m.pk in opened
    }
    oldest = client.get(response.context["oldest_open_url"]).context["cl"].result_list
    assert [a.pk for a in oldest] == opened  # made oldest first
    chef = admin_client(cast.chef)  # reads the queue, has no bulk acts: no checkbox column
    url = chef.get(QUEUE).context["oldest_open_url"]
    assert [a.pk for a in chef.get(url).context["cl"].result_list] == opened
    # The picture: the last 30 days, by severity; the 40-day-old one is not in it.
    days = raised_per_day(shown_day.today())
    assert sum(sum(c.values()) for _d, c in days) == 6
    page = response.content.decode()
    assert 'id="over-time"' in page
    assert page.count("critique</title></rect>") == 2


def many(count: int, *, start: int = 0) -> None:
    """``count`` anomalies straight into the table, spread over 30 days, every severity, state
    and a dozen detectors: a read test needs the rows, not each one's audit trail."""
    now = clock.now()
    severities, states = list(Severity), [*PENDING, AnomalyState.DISMISSED]
    Anomaly.objects.bulk_create(
        Anomaly(
            detector=f"detector_{i % 12}",
            severity=severities[i % 3],
            state=states[i % 4],
            summary=f"anomaly {i}",
            evidence={"coup": i},
            detected_at=now - dt.timedelta(hours=i % 720),
            dedup_key=f"many:{i}",
        )
        for i in range(start, start + count)
    )


def test_the_queue_page_asks_the_same_few_queries_however_many_anomalies_wait(cast):
    client = admin_client(cast.auditeur)
    many(20)
    with CaptureQueriesContext(connection) as few:
        assert client.get(QUEUE).status_code == 200
    many(400, start=20)
    with CaptureQueriesContext(connection) as lots:
        response = client.get(QUEUE)
    assert len(lots) == len(few)
    assert response.context["counts"].pending == 315  # three states in four
    assert len(lots) <= 20, [q["sql"][:120] for q in lots.captured_queries]

    # Every open one at once is more than a batch holds: the page says so and asks nothing.
    everything = {"action": "acknowledge_selected", "select_across": "1", "index": "0"}
    asked = client.post(QUEUE, {**everything, "_selected_action": ["1"]}).content.decode()
    assert f"au plus {BATCH_LIMIT} anomalies" in asked
    assert 'id="bulk-review"' not in asked
