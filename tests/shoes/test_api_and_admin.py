"""The card room and table terminals over the API, and the pack register in the admin."""

from __future__ import annotations

import pytest
from django.test import Client

from audit.models import Anomaly
from shoes.models import CardLaid, Pack, PackEvent, PackState
from tests.actors import login_admin
from tests.conftest import lay_in_coups
from tests.shoes.test_custody import in_play

RECEIPT = {
    "kind": "sixain",
    "maker": "Grimaud",
    "maker_pack_numbers": "G-77..82",
    "seal_number": "RF-API-1",
    "sealing_authority": "Préfecture de police",
    "store_location": "coffre B",
}


def post(api, user, url, body, key):
    return api(user).post(url, body, format="json", HTTP_IDEMPOTENCY_KEY=key)


def test_the_same_request_sent_twice_records_one_act(api, cast):
    first = post(api, cast.caissier, "/api/v1/packs", RECEIPT, "r-1")
    again = post(api, cast.caissier, "/api/v1/packs", RECEIPT, "r-1")
    assert (first.status_code, again.status_code) == (201, 201)
    assert again.json() == first.json()
    assert Pack.objects.count() == 1
    pk = first.json()["id"]
    stored = [post(api, cast.caissier, f"/api/v1/packs/{pk}/store", {}, "s-1") for _ in range(2)]
    assert [r.status_code for r in stored] == [201, 201]
    assert PackEvent.objects.filter(kind="stored").count() == 1


def test_the_commissioner_verifies_over_the_api_and_a_tailleur_cannot(api, cast):
    pk = post(api, cast.caissier, "/api/v1/packs", RECEIPT, "r").json()["id"]
    post(api, cast.caissier, f"/api/v1/packs/{pk}/store", {}, "s")
    body = {"seal_number_read": "RF-API-1", "verdict": "intact"}
    refused = post(api, cast.tailleur, f"/api/v1/packs/{pk}/verification", body, "v1")
    assert refused.status_code == 403
    assert refused.json()["code"] == "role_required"
    done = post(api, cast.commissaire, f"/api/v1/packs/{pk}/verification", body, "v2")
    assert done.status_code == 201
    assert done.json()["state"] == "verified"
    assert [e["kind"] for e in done.json()["timeline"]] == ["received", "stored", "verified"]


@pytest.mark.parametrize(
    ("body", "code", "where"),
    [
        ({**RECEIPT, "colour": "red"}, "unknown_field", "colour"),
        ({**RECEIPT, "kind": "deck"}, "invalid", "kind"),
        ({k: v for k, v in RECEIPT.items() if k != "seal_number"}, "missing_field", "seal_number"),
    ],
)
def test_bad_receipts_get_a_clear_error(api, cast, body, code, where):
    response = post(api, cast.caissier, "/api/v1/packs", body, "bad")
    assert response.status_code == 400
    assert (response.json()["code"], response.json()["where"]) == (code, where)
    assert not Pack.objects.exists()


def test_a_foreign_card_over_the_api_is_refused_recorded_once_and_retried_safely(
    api, cast, verified, shift
):
    pack = in_play(cast, verified(), shift)
    lay_in_coups(cast, shift, ["QH", "QH", "QH", "AS"])  # noir 31: rouge is next
    lay_in_coups(cast, shift, ["QH", "QH"])
    coup = pack.coups.get()
    cards = f"/api/v1/coups/{coup.pk}/cards"
    assert post(api, cast.tailleur, cards, {"code": "QH"}, "c5").status_code == 201  # the sixth
    refused = post(api, cast.tailleur, cards, {"code": "QH"}, "c6")
    retried = post(api, cast.tailleur, cards, {"code": "QH"}, "c6")
    assert refused.status_code == retried.status_code == 422
    assert refused.json()["code"] == "foreign_card"
    assert retried.json() == refused.json()
    assert Anomaly.objects.filter(detector="foreign_card").count() == 1
    assert CardLaid.objects.filter(pack=pack, card="QH").count() == 6


def test_the_register_lists_and_filters_packs(api, cast, receive, verified, shift):
    in_play(cast, verified(), shift)
    receive()
    everything = api(cast.inspecteur).get("/api/v1/packs").json()
    assert (len(everything["results"]), everything["next"]) == (2, None)
    playing = api(cast.inspecteur).get("/api/v1/packs?state=in_play&table=1").json()
    assert [p["state"] for p in playing["results"]] == ["in_play"]
    assert api(cast.outsider).get("/api/v1/packs").status_code == 403


def admin(user) -> Client:
    client = Client()
    login_admin(client, user)
    return client


def test_the_admin_register_filters_by_state_and_table_and_shows_the_timeline(
    cast, receive, verified, shift
):
    pack = in_play(cast, verified(), shift)
    receive()
    page = admin(cast.chef).get("/admin/shoes/pack/?state__exact=in_play&table=1")
    assert page.status_code == 200
    assert pack.seal_number.encode() in page.content
    detail = admin(cast.inspecteur).get(f"/admin/shoes/pack/{pack.pk}/change/")
    assert detail.status_code == 200
    for word in ("ouvert", "coupé par M. Dupont, galerie", "Historique"):
        assert word in detail.content.decode()


def test_the_commissioners_verification_is_one_action_in_the_admin(cast, receive):
    pack = receive()
    page = admin(cast.commissaire).get(f"/admin/shoes/pack/{pack.pk}/change/")
    assert "Vérifier le scellé" in page.content.decode()
    refused = admin(cast.chef).post(
        f"/admin/shoes/pack/{pack.pk}/verify/",
        {"seal_number_read": pack.seal_number, "verdict": "intact"},
    )
    assert "il faut le rôle commissaire".encode() in refused.content
    done = admin(cast.commissaire).post(
        f"/admin/shoes/pack/{pack.pk}/verify/",
        {"seal_number_read": pack.seal_number, "verdict": "intact", "remarks": "scellé intact"},
    )
    assert done.status_code == 302
    pack.refresh_from_db()
    assert pack.state == PackState.VERIFIED


def test_nobody_edits_a_pack_in_the_admin(cast, receive):
    pack = receive()
    response = admin(cast.root).post(
        f"/admin/shoes/pack/{pack.pk}/change/", {"seal_number": "forged"}
    )
    assert response.status_code == 403
    assert (
        admin(cast.root).post(f"/admin/shoes/pack/{pack.pk}/delete/", {"post": "yes"}).status_code
        == 403
    )
    pack.refresh_from_db()
    assert pack.seal_number != "forged"


def test_the_commissioner_signs_the_day_in_the_admin_and_nobody_else(cast, receive):
    pack = receive()
    page = admin(cast.commissaire).get("/admin/shoes/registervisa/sign/")
    assert pack.seal_number.encode() in page.content
    refused = admin(cast.directeur).post("/admin/shoes/registervisa/sign/", {"remarks": "vu"})
    assert "il faut le rôle commissaire".encode() in refused.content
    signed = admin(cast.commissaire).post("/admin/shoes/registervisa/sign/", {"remarks": "vu"})
    assert signed.status_code == 302
    again = admin(cast.commissaire).post("/admin/shoes/registervisa/sign/", {"remarks": "encore"})
    assert "porte déjà un visa".encode() in again.content
