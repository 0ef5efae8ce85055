"""Disputes and the police register over the API."""

from __future__ import annotations

import hashlib
import itertools

from django.core.files.uploadedfile import SimpleUploadedFile

from casino.disputes.models import Dispute
from casino.floor.models import Movement
from tests.disputes.test_disputes import played_coup

KEYS = itertools.count()


def act(client, url, body=None, **extra):
    return client.post(
        url, body or {}, format=extra.pop("format", "json"), HTTP_IDEMPOTENCY_KEY=f"d{next(KEYS)}"
    )


def test_a_dispute_from_raising_to_the_ruling_over_the_api(api, cast, shift, sixain_in_play):
    coup, stake = played_coup(cast, shift)
    croupier, chef = api(cast.croupier), api(cast.chef)
    raised = act(
        croupier,
        "/api/v1/disputes",
        {"subject": "stake", "subject_id": stake.pk, "claim": "on noir", "on_behalf_of": "seat 3"},
    )
    assert raised.status_code == 201, raised.json()
    dispute = raised.json()
    assert (dispute["state"], dispute["subject"], dispute["subject_id"]) == (
        "open",
        "stake",
        stake.pk,
    )
    # The engine's settlement beside the recorded one, as recorded: they agree.
    assert dispute["recomputation"]["corrections"] == []
    rows = dispute["recomputation"]["recorded"] + dispute["recomputation"]["computed"]
    assert {(r["stake"], r["coup"]) for r in rows} == {(stake.pk, coup.pk)}  # by reference
    scan = b"%PDF-1.4 scan of the croupier's sheet"
    uploaded = croupier.post(
        f"/api/v1/disputes/{dispute['id']}/evidence",
        {"file": SimpleUploadedFile("sheet.pdf", scan, content_type="application/pdf")},
        format="multipart",
        HTTP_IDEMPOTENCY_KEY="scan-1",
    )
    assert uploaded.status_code == 201, uploaded.json()
    assert uploaded.json()["sha256"] == hashlib.sha256(scan).hexdigest()

    assert (
        act(chef, f"/api/v1/disputes/{dispute['id']}/review", {"note": "heard"}).status_code == 201
    )
    bad = act(chef, f"/api/v1/disputes/{dispute['id']}/decide", {"reasoning": "x", "verdict": 1})
    assert (bad.status_code, bad.json()["code"], bad.json()["where"]) == (
        400,
        "unknown_field",
        "verdict",
    )
    article = Dispute.objects.get().reglement.articles[0]["number"]
    decided = act(
        chef,
        f"/api/v1/disputes/{dispute['id']}/decide",
        {
            "articles": [article],
            "reasoning": "believed",
            "findings": [{"stake": stake.pk, "chance": "noir"}],
        },
    )
    assert decided.status_code == 201, decided.json()
    ruling = decided.json()["decisions"][0]
    assert ruling["findings"] == [{"stake": stake.pk, "chance": "noir"}]
    assert ruling["corrections"] == [{"credit": "T1:bank", "debit": "T1:seat:3", "amount": 2000}]
    assert Movement.objects.filter(reference=f"dispute:{dispute['id']}").count() == 1

    refused = act(api(cast.inspecteur), f"/api/v1/disputes/{dispute['id']}/appeal", {"note": "x"})
    assert (refused.status_code, refused.json()["code"]) == (403, "role_required")
    queue = api(cast.inspecteur).get("/api/v1/disputes?state=decided").json()
    assert [d["id"] for d in queue["results"]] == [dispute["id"]]


def test_the_police_register_over_the_api(api, cast):
    commissaire, directeur = api(cast.commissaire), api(cast.directeur)
    written = act(
        commissaire,
        "/api/v1/police/observations",
        {"visited_at": "2026-11-02T21:30:00Z", "checks": "seals", "injunctions": "post it"},
    )
    assert written.status_code == 201, written.json()
    observation = written.json()
    assert (
        observation["follow_up_due"] == "2026-11-10T21:30:00Z"
    )  # eight days later (the API speaks UTC)
    answered = act(
        directeur,
        f"/api/v1/police/observations/{observation['id']}/follow-up",
        {"action": "posted"},
    )
    assert answered.json()["follow_up"]["director"] == "directeur"
    refused = act(
        api(cast.directeur),
        "/api/v1/police/observations",
        {"visited_at": "2026-11-03T10:00:00Z", "checks": "mine"},
    )
    assert (refused.status_code, refused.json()["code"]) == (403, "role_required")
    assert api(cast.chef).get("/api/v1/police/observations").status_code == 403
    assert len(api(cast.inspecteur).get("/api/v1/police/observations").json()["results"]) == 1
