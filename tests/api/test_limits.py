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
from casino.api.pagination import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE
from casino.disputes import services
from casino.disputes.models import Evidence
from tests.disputes.test_disputes import disputed  # noqa: F401  (a fixture)

# --- pages -------------------------------------------------------------------------------------


@pytest.fixture
def events(db):
    from django.db import transaction

    with transaction.atomic():
        for n in range(MAX_PAGE_SIZE + 5):
            audit_record(actor=None, action="test.listed", payload={"n": n})


@pytest.mark.parametrize(
    ("query", "code", "where"),
    [
        ("page_size=100000", "invalid_page", "page_size"),
        (f"page_size={MAX_PAGE_SIZE + 1}", "invalid_page", "page_size"),
        ("page_size=0", "invalid_page", "page_size"),
        ("page_size=-1", "invalid_page", "page_size"),
        ("page_size=ten", "invalid_page", "page_size"),
        ("page_size=1e3", "invalid_page", "page_size"),
        ("page_size=1.5", "invalid_page", "page_size"),
        ("page_size=%D9%A5", "invalid_page", "page_size"),  # an Arabic-Indic five: int() takes it
        ("cursor=-5", "invalid_page", "cursor"),
        ("cursor=99999999999999999999999", "invalid_page", "cursor"),
        ("cursor=bz0tNQ==", "invalid_page", "cursor"),  # a well-formed cursor to offset -5
        # The pages of offsets are gone: their parameters are unknown, refused by name.
        ("limit=10", "unknown_field", "limit"),
        ("offset=5", "unknown_field", "offset"),
    ],
)
def test_a_page_that_is_not_one_is_refused_by_name(api, cast, events, query, code, where):
    answer = api(cast.inspecteur).get(f"/api/v1/audit/events?{query}")
    assert answer.status_code == 400, answer.content
    body = answer.json()
    assert (body["code"], body["where"]) == (code, where)
    if code == "invalid_page":  # the message names the value refused
        assert query.split("=")[1][:10] in body["message"] or "%" in query


def test_pages_hold_at_most_the_maximum(api, cast, events):
    client = api(cast.inspecteur)
    full = client.get(f"/api/v1/audit/events?page_size={MAX_PAGE_SIZE}").json()
    assert len(full["results"]) == MAX_PAGE_SIZE
    assert full["previous"] is None
    assert len(client.get("/api/v1/audit/events").json()["results"]) == DEFAULT_PAGE_SIZE == 100
    # Page after page by the cursors: every event once, in order, and the last page says so.
    seen, url = [], full["next"]
    seen += [e["seq"] for e in full["results"]]
    while url:
        page = client.get(url).json()
        assert len(page["results"]) <= MAX_PAGE_SIZE
        seen += [e["seq"] for e in page["results"]]
        url = page["next"]
    assert seen == list(AuditEvent.objects.order_by("seq").values_list("seq", flat=True))
    assert len(seen) > MAX_PAGE_SIZE + 1
    # A cursor placed beyond the last event: an empty page, not an error.
    beyond = client.get("/api/v1/audit/events?cursor=cD00NjExNjg2MDE4NDI3Mzg3OTA0")
    assert beyond.status_code == 200, beyond.content
    assert (beyond.json()["results"], beyond.json()["next"]) == ([], None)


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
    assert answer.status_code == 422
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
    # Malformed (400 invalid), or refused by the rules of evidence (422 invalid_dispute).
    assert (answer.status_code, answer.json()["code"]) in (
        (422, "invalid_dispute"),
        (400, "invalid"),
    )
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
        assert (answer.status_code, answer.json()["code"]) == (422, "invalid_dispute")
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
