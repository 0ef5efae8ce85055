"""Internal audit works the anomaly queue in a browser: reads a detector's finding on its page,
acknowledges it, acknowledges and then dismisses several in bulk with one reason, escalates the
finding; the commissioner confirms the escalated anomaly. Each step is recorded once, with its
reason and the person who took it."""

from __future__ import annotations

import datetime as dt

import pytest

from audit.models import Anomaly, AnomalyReview, AnomalyState, Severity
from audit.services import anomaly_raise
from casino import clock
from casino.detectors.frame import Chart, Finding, Link, raise_finding
from tests.browser.conftest import screenshot

pytestmark = pytest.mark.django_db(transaction=True)

QUEUE = "/admin/audit/anomaly/"


def a_croupier_s_cancellations(croupier_pk: int) -> Anomaly:
    """A staff detector's finding, as one would raise it at a séance's close."""
    hours = ["14h", "15h", "16h", "17h", "18h", "19h"]
    return raise_finding(
        Finding(
            detector="staff_cancelled_coups",
            summary="croupier: 7 coups cancelled in séance 12, the room's rate gives 1.4",
            rule=(
                "Coups cancelled on one croupier's watch against the room's rate over the last "
                "30 days: the upper tail of a Poisson law with the room's mean"
            ),
            window="séance 12",
            figures=[
                ("coups dealt", "212"),
                ("cancelled (observed)", "7"),
                ("cancelled (expected at the room's rate)", "1.4"),
                ("room's rate", "0.66 %"),
            ],
            threshold="p < 0.001 / 45 (Bonferroni over the staff tested at this close)",
            p_value=0.0000183,
            key="seance:12:croupier",
            columns=["coup", "hour", "reason given"],
            rows=[
                [3401, "14:12", "card exposed"],
                [3417, "15:03", "miscount"],
                [3418, "15:05", "miscount"],
                [3436, "16:40", "card exposed"],
                [3450, "17:22", "late stake"],
                [3461, "18:10", "miscount"],
                [3477, "19:31", "card exposed"],
            ],
            chart=Chart(
                "bars",
                "cancelled coups per hour against the room's rate",
                hours,
                [1, 2, 1, 1, 1, 1],
                expected=[0.23] * 6,
            ),
            links=[
                *(Link("floor.coup", pk, f"coup {pk}") for pk in (3401, 3417, 3418, 3436)),
                Link("floor.shift", 12, "séance 12"),
                Link("shoes.pack", 31, "jeu 31"),
                Link("disputes.dispute", 4, "contestation 4"),
            ],
            involved=[croupier_pk],
            severity=Severity.CRITICAL,
        )
    )


def a_month_of_hard_rules() -> list[Anomaly]:
    """What the hard rules raised over three weeks, for the queue's counts and picture; the last
    three in the last day."""
    now = clock.now()
    raised = []
    kinds = [
        ("late_stake", Severity.WARNING, "a stake after the first card at table {n}"),
        ("foreign_card", Severity.CRITICAL, "a foreign card in the talon at table {n}"),
        ("announcement_mismatch", Severity.INFO, "the announcement differs at table {n}"),
    ]
    for i, days in enumerate((20, 17, 13, 12, 9, 8, 6, 4, 3, 2, 1, 0, 0, 0)):
        detector, severity, summary = kinds[i % 3]
        with clock.ManualClock(now - dt.timedelta(days=days, hours=i)):
            raised.append(
                anomaly_raise(
                    detector=detector,
                    severity=severity,
                    summary=summary.format(n=i % 5 + 1),
                    evidence={"coup": 3000 + i},
                )
            )
    return raised


def review(page, anomaly: Anomaly, verb: str, reason: str) -> None:  # type: ignore[no-untyped-def]
    """On the anomaly's page, the next step's button, then its reason."""
    page.goto(f"{QUEUE}{anomaly.pk}/change/")
    page.locator("#next-steps a.button", has_text=verb).click()
    page.fill("textarea[name=reason]", reason)
    page.click("input[type=submit]")
    page.wait_for_url(f"**{QUEUE}{anomaly.pk}/change/")
    assert page.locator(".messagelist .success").count() == 1


def bulk(page, action: str, anomalies: list[Anomaly], reason: str) -> None:  # type: ignore[no-untyped-def]
    """Tick the anomalies in the queue, choose the act, give one reason on the page that asks."""
    page.goto(QUEUE)
    for anomaly in anomalies:
        page.check(f"input[name=_selected_action][value='{anomaly.pk}']")
    page.select_option("select[name=action]", action)
    page.click("button[name=index]")
    assert page.locator("#batch tbody tr").count() == len(anomalies)
    if action == "dismiss_selected":
        screenshot(page, "anomaly-bulk")
    page.fill("#bulk-review textarea[name=reason]", reason)
    page.click("#bulk-review input[type=submit]")
    page.wait_for_url(f"**{QUEUE}")
    assert page.locator(".messagelist .success").count() == 1


def test_internal_audit_works_the_queue_and_the_commissioner_confirms(pages, cast):
    finding = a_croupier_s_cancellations(cast.croupier.pk)
    hard = a_month_of_hard_rules()
    recent = hard[-3:]  # raised in the last day

    auditor = pages(cast.auditeur)
    auditor.goto(QUEUE)
    assert auditor.locator("#by-severity").is_visible()
    assert auditor.locator("#over-time rect").count() > 10
    open_critical = auditor.locator("#by-severity tbody tr", has_text="critique").locator("td")
    critical = Anomaly.objects.filter(severity=Severity.CRITICAL, state=AnomalyState.OPEN)
    assert open_critical.first.inner_text() == str(critical.count())
    screenshot(auditor, "anomaly-queue")

    auditor.goto(f"{QUEUE}{finding.pk}/change/")
    assert "0.66 %" in auditor.inner_text("#figures")
    assert auditor.locator("#chart svg").is_visible()
    assert auditor.locator("#links a", has_text="contestation 4").get_attribute("href") == (
        "/admin/disputes/dispute/4/change/"
    )
    screenshot(auditor, "anomaly-page")

    review(auditor, finding, "Prendre en compte", "à vérifier avec le chef de partie")
    bulk(auditor, "acknowledge_selected", recent, "vues à la ronde du matin")
    bulk(auditor, "dismiss_selected", recent[:2], "annonces corrigées sur-le-champ, rien à suivre")
    review(auditor, finding, "Transmettre au commissaire", "sept annulations : à la police")

    commissioner = pages(cast.commissaire)
    review(commissioner, finding, "Confirmer", "constaté ; procès-verbal dressé")

    def steps(anomaly: Anomaly) -> list[tuple[str, str, str]]:
        return [
            (r.actor.username, r.to_state, r.reason)
            for r in AnomalyReview.objects.filter(anomaly=anomaly).order_by("at")
        ]

    assert steps(finding) == [
        ("auditeur", "acknowledged", "à vérifier avec le chef de partie"),
        ("auditeur", "escalated", "sept annulations : à la police"),
        ("commissaire", "confirmed", "constaté ; procès-verbal dressé"),
    ]
    for anomaly in recent[:2]:
        assert steps(anomaly) == [
            ("auditeur", "acknowledged", "vues à la ronde du matin"),
            ("auditeur", "dismissed", "annonces corrigées sur-le-champ, rien à suivre"),
        ]
    assert Anomaly.objects.get(pk=recent[2].pk).state == AnomalyState.ACKNOWLEDGED
    assert AnomalyReview.objects.count() == 3 + 3 + 2
