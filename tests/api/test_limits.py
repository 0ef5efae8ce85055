"""What a client sends that the API will not take: a clean 4xx ``{code, message, where}``, never a
500, and nothing recorded."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile

from audit.chain import audit_record
from audit.models import AuditEvent
from casino.api.models import IdempotentRequest
from casino.api.pagination import MAX_LIMIT
from casino.disputes import services
from casino.disputes.models import Evidence
from tests.disputes.test_disputes import disputed  # noqa: F401  (a fixture)

# --- pages -------------------------------------------------------------------------------------


@pytest.fixture
def events(db):
    from django.db import transaction

    with transaction.atomic():
        for n in range(MAX_LIMIT + 5):
            audit_record(actor=None, action="test.listed", payload={"n": n})


@pytest.mark.parametrize(
    ("query", "where"),
    [
        ("limit=100000", "limit"),
        ("limit=0", "limit"),
        ("limit=-1", "limit"),
        ("limit=ten", "limit"),
        ("limit=1e3", "limit"),
        ("limit=%D9%A5", "limit"),  # an Arabic-Indic five: int() would take it
        ("offset=-5", "offset"),
        ("offset=99999999999999999999999", "offset"),
        ("offset=1.5", "offset"),
    ],
)
def test_a_page_that_is_not_one_is_refused_by_name(api, cast, events, query, where):
    answer = api(cast.inspecteur).get(f"/api/v1/audit/events?{query}")
    assert answer.status_code == 400, answer.content
    body = answer.json()
    assert (body["code"], body["where"]) == ("invalid_page", where)
    assert query.split("=")[1][:10] in body["message"] or "%" in query


def test_pages_hold_at_most_the_maximum(api, cast, events):
    client = api(cast.inspecteur)
    full = client.get(f"/api/v1/audit/events?limit={MAX_LIMIT}&offset=1").json()
    assert full["count"] == AuditEvent.objects.count() > MAX_LIMIT + 1
    assert len(full["results"]) == MAX_LIMIT
    assert len(client.get("/api/v1/audit/events").json()["results"]) == 100  # PAGE_SIZE
    beyond = client.get("/api/v1/audit/events?offset=4611686018427387904").json()
    assert beyond["results"] == []


# --- the API's schema --------------------------------------------------------------------------


@pytest.mark.parametrize("url", ["/api/schema/", "/api/docs/"])
def test_the_schema_and_docs_are_for_signed_in_staff(api, cast, url):
    refused = api(None).get(url)
    assert refused.status_code in (401, 403)
    assert b"/api/v1/" not in refused.content
    assert b"swagger" not in refused.content.lower()
    shown = api(cast.outsider).get(url)  # any login, no role needed
    assert shown.status_code == 200
    assert b"/api/v1/" in shown.content or b"swagger" in shown.content.lower()


# --- evidence uploads --------------------------------------------------------------------------


def upload(
    client, dispute, content: bytes, *, key: str, name="photo.jpg", content_type="image/jpeg"
):
    return client.post(
        f"/api/v1/disputes/{dispute.pk}/evidence",
        {"file": SimpleUploadedFile(name, content, content_type=content_type)},
        format="multipart",
        HTTP_IDEMPOTENCY_KEY=key,
    )


def assert_nothing_recorded() -> None:
    assert not Evidence.objects.exists()
    assert not AuditEvent.objects.filter(action="dispute.evidence_added").exists()
    assert not IdempotentRequest.objects.exists()
    media = Path(settings.MEDIA_ROOT)
    assert not media.exists() or not any(p.is_file() for p in media.rglob("*"))


def test_a_body_too_large_for_any_evidence_is_refused_unread(api, cast, disputed):  # noqa: F811
    dispute = disputed[2]
    answer = upload(
        api(cast.croupier), dispute, b"x" * (services.MAX_EVIDENCE_BYTES + 70_000), key="big"
    )
    assert answer.status_code == 413
    assert (answer.json()["code"], answer.json()["where"]) == ("upload_too_large", "file")
    assert_nothing_recorded()


def test_a_file_one_byte_too_large_is_refused(api, cast, disputed):  # noqa: F811
    dispute = disputed[2]
    answer = upload(
        api(cast.croupier), dispute, b"x" * (services.MAX_EVIDENCE_BYTES + 1), key="big"
    )
    assert answer.status_code == 400
    body = answer.json()
    assert (body["code"], body["where"]) == ("invalid_dispute", "file")
    assert str(services.MAX_EVIDENCE_BYTES + 1) in body["message"]
    assert_nothing_recorded()


@pytest.mark.parametrize(
    "content_type",
    ["image/" + "x" * 200, "not a type", "image/jpeg\x00", "/jpeg"],
)
def test_a_content_type_that_is_not_one_is_refused(api, cast, disputed, content_type):  # noqa: F811
    answer = upload(api(cast.croupier), disputed[2], b"jpeg", key="ct", content_type=content_type)
    assert answer.status_code == 400, answer.content
    assert answer.json()["code"] in ("invalid_dispute", "invalid")
    assert_nothing_recorded()


def test_a_long_file_name_is_shortened_not_a_500(api, cast, disputed):  # noqa: F811
    answer = upload(api(cast.croupier), disputed[2], b"jpeg", key="long", name="p" * 400 + ".jpg")
    assert answer.status_code == 201, answer.content
    assert 0 < len(Evidence.objects.get().name) <= 200


def test_a_file_name_with_control_characters_is_refused_or_cleaned(api, cast, disputed):  # noqa: F811
    answer = upload(api(cast.croupier), disputed[2], b"jpeg", key="ctl", name="a\x01b\x1f.jpg")
    if answer.status_code == 201:  # the multipart parser may clean it first
        assert not any(ord(c) < 32 for c in Evidence.objects.get().name)
    else:
        assert (answer.status_code, answer.json()["code"]) == (400, "invalid_dispute")
        assert_nothing_recorded()


def test_the_same_key_with_another_file_is_a_reused_key(api, cast, disputed):  # noqa: F811
    client, dispute = api(cast.croupier), disputed[2]
    first = upload(client, dispute, b"the first photo", key="photo")
    assert first.status_code == 201
    again = upload(client, dispute, b"the first photo", key="photo")
    assert (again.status_code, again["Idempotent-Replay"]) == (201, "true")
    other = upload(client, dispute, b"another photo!!", key="photo")  # same name, same size
    assert (other.status_code, other.json()["code"]) == (409, "idempotency_key_reused")
    assert Evidence.objects.count() == 1
    assert AuditEvent.objects.filter(action="dispute.evidence_added").count() == 1
