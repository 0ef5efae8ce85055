"""Who may do what, over the API and in the admin: one table of cases per surface."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from rest_framework import renderers

from audit.models import Anomaly, AnomalyReview, AnomalyState, AuditEvent, Severity
from audit.services import anomaly_raise
from casino.api.models import IdempotentRequest
from tests.actors import PASSWORD, login_admin

READERS = ["inspecteur", "auditeur", "directeur", "comite", "commissaire"]
NON_READERS = ["chef", "tailleur", "croupier", "caissier", "outsider", "root"]


@pytest.fixture
def anomaly(cast) -> Anomaly:
    return anomaly_raise(
        detector="test_detector",
        severity=Severity.WARNING,
        summary="a stake after the first card",
        evidence={"stake": 1},
        involved=[cast.tailleur.pk, cast.auditeur2.pk],
    )


def review(api, user, anomaly, key="k1", HTTP_ACCEPT="application/json", **body):
    body = {"to_state": "acknowledged", "reason": "seen on camera", **body}
    return api(user).post(
        f"/api/v1/anomalies/{anomaly.pk}/reviews",
        body,
        format="json",
        HTTP_IDEMPOTENCY_KEY=key,
        HTTP_ACCEPT=HTTP_ACCEPT,
    )


def every(client, url: str) -> list[dict]:
    """Every record of a collection, page after page by its cursors."""
    found: list[dict] = []
    while url:
        response = client.get(url)
        assert response.status_code == 200, response.json()
        found += response.json()["results"]
        url = response.json()["next"]
    return found


@pytest.mark.parametrize("who", READERS)
def test_oversight_reads_the_audit_log(api, cast, who):
    events = every(api(getattr(cast, who)), "/api/v1/audit/events")
    assert len(events) == AuditEvent.objects.count() > 0


@pytest.mark.parametrize("who", NON_READERS)
def test_the_floor_does_not_read_the_audit_log(api, cast, who):
    response = api(getattr(cast, who)).get("/api/v1/audit/events")
    assert response.status_code == 403
    assert set(response.json()) == {"code", "message", "where"}
    assert response.json()["code"] == "role_required"


def test_anonymous_is_asked_to_authenticate(api, cast):
    response = api(None).get("/api/v1/audit/events")
    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"


@pytest.mark.parametrize(
    ("who", "status", "code"),
    [
        ("auditeur", 201, None),
        ("directeur", 201, None),
        ("inspecteur", 403, "role_required"),
        ("comite", 403, "role_required"),
        ("commissaire", 403, "role_required"),
        ("chef", 403, "role_required"),
        ("tailleur", 403, "role_required"),
        ("croupier", 403, "role_required"),
        ("caissier", 403, "role_required"),
        ("outsider", 403, "role_required"),
        ("root", 403, "role_required"),
        ("auditeur2", 403, "reviewer_involved"),
    ],
)
def test_who_may_acknowledge_an_anomaly(api, cast, anomaly, who, status, code):
    response = review(api, getattr(cast, who), anomaly)
    assert response.status_code == status, response.json()
    anomaly.refresh_from_db()
    if status == 201:
        assert anomaly.state == AnomalyState.ACKNOWLEDGED
        assert AuditEvent.objects.filter(action="anomaly.reviewed").count() == 1
    else:
        assert response.json()["code"] == code
        assert anomaly.state == AnomalyState.OPEN
        assert not AnomalyReview.objects.exists()


def test_escalated_anomalies_are_ruled_on_by_the_commissioner(api, cast, anomaly):
    assert review(api, cast.auditeur, anomaly, "a").status_code == 201
    assert review(api, cast.auditeur, anomaly, "b", to_state="escalated").status_code == 201
    refused = review(api, cast.auditeur, anomaly, "c", to_state="confirmed")
    assert refused.json()["code"] == "role_required"
    ruled = review(api, cast.commissaire, anomaly, "d", to_state="confirmed", reason="proven")
    assert ruled.status_code == 201
    assert [r["to_state"] for r in ruled.json()["reviews"]] == [
        "acknowledged",
        "escalated",
        "confirmed",
    ]


@pytest.mark.parametrize(
    ("body", "status", "code", "where"),
    [
        ({"reason": "   "}, 422, "reason_required", "reason"),
        ({"to_state": "confirmed"}, 409, "illegal_review_step", "state"),
        ({"to_state": "open"}, 409, "illegal_review_step", "state"),
        ({"to_state": "forgotten"}, 400, "invalid", "to_state"),
        ({"reasn": "typo"}, 400, "unknown_field", "reasn"),
    ],
)
def test_bad_review_requests_get_a_clear_error_and_change_nothing(
    api, cast, anomaly, body, status, code, where
):
    response = review(api, cast.auditeur, anomaly, **body)
    assert response.status_code == status
    assert (response.json()["code"], response.json()["where"]) == (code, where)
    anomaly.refresh_from_db()
    assert anomaly.state == AnomalyState.OPEN


def test_a_retried_review_is_recorded_once(api, cast, anomaly):
    first = review(api, cast.auditeur, anomaly, key="same")
    again = review(api, cast.auditeur, anomaly, key="same")
    assert (first.status_code, again.status_code) == (201, 201)
    assert again.json() == first.json()
    assert again["Idempotent-Replay"] == "true"
    assert AnomalyReview.objects.count() == 1
    reused = review(api, cast.auditeur, anomaly, key="same", to_state="dismissed")
    assert reused.status_code == 409
    assert reused.json()["code"] == "idempotency_key_reused"


def test_a_writes_answer_is_rendered_once_the_bytes_kept_for_a_retry_sent(
    api, cast, anomaly, monkeypatch
):
    rendered: list[object] = []
    render = renderers.JSONRenderer.render

    def counted(self, data, *args, **kwargs):
        rendered.append(data)
        return render(self, data, *args, **kwargs)

    monkeypatch.setattr(renderers.JSONRenderer, "render", counted)
    response = review(api, cast.auditeur, anomaly)
    assert response.status_code == 201
    answer = json.loads(response.content)
    # Once to keep it (the test client renders the request's body too); the client got those bytes.
    assert [data for data in rendered if data == answer] == [answer]
    assert IdempotentRequest.objects.get(user=cast.auditeur, key="k1").body == answer


def test_an_answer_asked_indented_is_written_indented(api, cast, anomaly):
    response = review(api, cast.auditeur, anomaly, HTTP_ACCEPT="application/json; indent=2")
    assert response.status_code == 201
    assert response.content.startswith(b'{\n  "')
    compact = review(api, cast.auditeur, anomaly, key="k2", to_state="dismissed")
    assert compact.content.startswith(b'{"')


def test_a_write_without_idempotency_key_is_refused(api, cast, anomaly):
    response = api(cast.auditeur).post(
        f"/api/v1/anomalies/{anomaly.pk}/reviews",
        {"to_state": "acknowledged", "reason": "x"},
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["code"] == "idempotency_key_required"


def test_the_openapi_schema_describes_the_api(api, cast):
    response = api(cast.inspecteur).get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    assert "/api/v1/anomalies/{id}/reviews" in paths
    assert "/api/v1/audit/verify" in paths


def test_the_token_endpoint_gives_a_token_to_staff(cast):
    response = Client().post(
        "/api/v1/token",
        {"username": "tailleur", "password": PASSWORD},
        content_type="application/json",
    )
    assert response.status_code == 200
    assert len(response.json()["token"]) == 40


# --- the admin ---------------------------------------------------------------------------------


def admin_client(user) -> Client:
    client = Client()
    login_admin(client, user)
    return client


@pytest.mark.parametrize(
    ("who", "status"),
    [
        ("inspecteur", 200),
        ("auditeur", 200),
        ("directeur", 200),
        ("comite", 200),
        ("commissaire", 200),
        ("chef", 200),
        ("root", 200),
        ("tailleur", 403),
        ("croupier", 403),
        ("caissier", 403),
        ("outsider", 403),
    ],
)
def test_who_sees_the_anomaly_queue_in_the_admin(cast, anomaly, who, status):
    response = admin_client(getattr(cast, who)).get("/admin/audit/anomaly/?state__exact=open")
    assert response.status_code == status
    if status == 200:
        assert b"a stake after the first card" in response.content


def test_an_inspector_cannot_review_in_the_admin(cast, anomaly):
    client = admin_client(cast.inspecteur)
    response = client.post(
        f"/admin/audit/anomaly/{anomaly.pk}/review/",
        {"to_state": "acknowledged", "reason": "looks fine"},
    )
    assert response.status_code == 200  # the form again, with the refusal
    assert "il faut le rôle".encode() in response.content
    anomaly.refresh_from_db()
    assert anomaly.state == AnomalyState.OPEN


def test_an_auditor_reviews_in_the_admin_and_must_give_a_reason(cast, anomaly):
    client = admin_client(cast.auditeur)
    page = client.get(f"/admin/audit/anomaly/{anomaly.pk}/change/")
    assert b"stake" in page.content
    assert "Examiner" in page.content.decode()
    no_reason = client.post(
        f"/admin/audit/anomaly/{anomaly.pk}/review/", {"to_state": "acknowledged", "reason": ""}
    )
    assert no_reason.status_code == 200
    anomaly.refresh_from_db()
    assert anomaly.state == AnomalyState.OPEN
    done = client.post(
        f"/admin/audit/anomaly/{anomaly.pk}/review/",
        {"to_state": "acknowledged", "reason": "checked the video"},
    )
    assert done.status_code == 302
    anomaly.refresh_from_db()
    assert anomaly.state == AnomalyState.ACKNOWLEDGED


@pytest.mark.parametrize(
    "url",
    [
        "/admin/audit/auditevent/1/change/",
        "/admin/audit/auditevent/1/delete/",
        "/admin/audit/auditevent/add/",
        "/admin/audit/anomaly/{anomaly}/delete/",
    ],
)
def test_nobody_edits_history_in_the_admin_not_even_a_superuser(cast, anomaly, url):
    url = url.format(anomaly=anomaly.pk)
    response = admin_client(cast.root).post(url, {"payload": "{}", "post": "yes"})
    assert response.status_code in (403, 302)
    assert AuditEvent.objects.get(seq=1).payload != "{}"
    assert Anomaly.objects.filter(pk=anomaly.pk).exists()


def test_an_inspector_changes_nothing_in_the_admin(cast):
    client = admin_client(cast.inspecteur)
    response = client.post(
        f"/admin/auth/user/{cast.tailleur.pk}/change/", {"username": "renamed", "roles": ["comite"]}
    )
    assert response.status_code == 403
    cast.tailleur.refresh_from_db()
    assert cast.tailleur.username == "tailleur"


def test_the_director_grants_roles_in_the_admin_through_the_service(cast):
    client = admin_client(cast.directeur)
    url = f"/admin/auth/user/{cast.croupier.pk}/act/roles/"
    refused = client.post(url, {"roles": ["croupier", "comite"]})
    assert refused.status_code == 200
    assert "ne peuvent pas être tenus par une même personne".encode() in refused.content
    granted = client.post(url, {"roles": ["croupier", "tailleur"]})
    assert granted.status_code == 302, granted.content[:2000]
    assert AuditEvent.objects.filter(action="staff.roles_changed").exists()


def test_a_page_of_anomalies_names_the_people_in_question_in_queries_that_do_not_grow(api, cast):
    """The usernames of everyone a page's anomalies involve are read in one query (issue 17's
    month: 104 queries a page), each anomaly still naming its own, in its own order."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    staff = [cast.tailleur, cast.croupier, cast.chef, cast.auditeur2]

    def raised(n: int) -> None:
        for i in range(n):
            anomaly_raise(
                detector="test_detector",
                severity=Severity.WARNING,
                summary=f"anomaly {i}",
                evidence={"i": i},
                involved=[staff[i % 4].pk, staff[(i + 1) % 4].pk, 10**9],  # and one unknown
            )

    def read() -> tuple[int, list[dict]]:
        client = api(cast.inspecteur)
        client.get("/api/v1/anomalies")
        with CaptureQueriesContext(connection) as captured:
            page = client.get("/api/v1/anomalies").json()["results"]
        return len(captured), page

    raised(1)
    few, _page = read()
    raised(11)
    many, page = read()
    assert many == few
    named = [sorted((staff[i % 4], staff[(i + 1) % 4]), key=lambda u: u.pk) for i in range(11)]
    assert [a["involved"] for a in page] == [
        [u.username for u in pair] for pair in named[:1] + named
    ]
    alone = api(cast.inspecteur).get(f"/api/v1/anomalies/{page[5]['id']}").json()
    assert alone["involved"] == page[5]["involved"]
