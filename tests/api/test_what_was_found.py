"""Issue 19, "What was found", each tried as a vendor's client met it: the documented code, status
and ``where``, and nothing recorded (or the evidence recorded, where the refusal is evidence)."""

from __future__ import annotations

import json

import pytest

from audit.models import Anomaly
from casino.floor.coups import coup_close_betting, coup_lay_card, coup_open, stake_place
from casino.floor.models import CoupResult
from shoes.services import pack_open
from tests.api.test_role_matrix import snapshot
from tests.conftest import lay_in_coups

pytestmark = pytest.mark.django_db

RULES_PARAMETERS = {  # RULES.md's parameter table, by name
    "face_value",
    "min_stake",
    "max_stake",
    "burn",
    "player_may_shuffle",
    "end_min_cards",
    "end_min_points",
    "refait_mode",
    "refait_default",
    "max_prison_level",
    "refait_void_on_last_coup",
    "prison_repeat",
    "prison_at_end",
    "end_rule",
    "cut_card_from_end",
    "insurance_min_stake",
    "max_stake_ratio",
    "no_new_taille_before_close",
    "insurance",
    "insurance_unit",
    "insurance_premium",
    "pharao_last_card",
    "pharao_plie_share",
    "pharao_marks",
    "alliance_values",
    "alliance_honours",
    "alliance_bonuses",
    "cercle_fee",
}


def act(client, path, body, key):
    return client.post(path, body, format="json", HTTP_IDEMPOTENCY_KEY=key)


def refused(response, status, code, where):
    body = response.json()
    assert (response.status_code, body["code"], body["where"]) == (status, code, where), body
    return body


# --- 1. every record reads back: a terminal restarted mid-séance finds where it is ---------------


def test_a_terminal_restarted_mid_coup_finds_its_place_in_three_reads(
    api, cast, shift, sixain_in_play
):
    coup = coup_open(actor=cast.tailleur, shift_id=shift.pk)
    stake = stake_place(
        actor=cast.croupier, coup_id=coup.pk, ref="a", holder="3", chance="rouge", amount=2500
    )
    terminal = api(cast.tailleur)  # a fresh start: it knows its table number, nothing else
    table = terminal.get(f"/api/v1/tables/{shift.table.number}").json()
    assert (table["seance"], table["open_coup"], table["pack"]) == (
        shift.pk,
        coup.pk,
        sixain_in_play.pk,
    )
    assert table["balances"]["layout"] == 2500  # the stake on the layout
    seance = terminal.get(f"/api/v1/shifts/{table['seance']}").json()
    assert {d["person"] for d in seance["staff"] if d["ended_at"] is None} >= {"tailleur"}
    found = terminal.get(f"/api/v1/coups/{table['open_coup']}").json()
    assert (found["phase"], [s["id"] for s in found["stakes"]]) == ("betting", [stake.pk])


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/tables",
        "/api/v1/shifts",
        "/api/v1/accounts",
        "/api/v1/movements",
        "/api/v1/coups",
        "/api/v1/counts",
        "/api/v1/transfers",
        "/api/v1/duties",
        "/api/v1/stakes",
        "/api/v1/packs",
        "/api/v1/reglements",
        "/api/v1/people",
    ],
)
def test_the_records_a_client_needs_are_collections(api, cast, shift, path):
    page = api(cast.inspecteur).get(path)
    assert page.status_code == 200, page.content
    assert set(page.json()) == {"next", "previous", "results"}


def test_a_packs_cards_read_back_in_the_order_laid(api, cast, shift, sixain_in_play):
    lay_in_coups(cast, shift, ["KS", "7H", "9D", "2C", "5S"])
    pack = api(cast.inspecteur).get(f"/api/v1/packs/{sixain_in_play.pk}").json()
    assert [c["card"] for c in pack["cards"]] == ["KS", "7H", "9D", "2C", "5S"]
    assert [c["seq"] for c in pack["cards"]] == sorted(c["seq"] for c in pack["cards"])


def test_balances_read_back_as_sums_of_movements(api, cast, shift):
    bank = api(cast.inspecteur).get("/api/v1/accounts/T1:bank").json()
    float_total = sum(int(d) * n for d, n in {"10000": 40, "2500": 40, "500": 100}.items())
    assert bank["balance"] == float_total


# --- 2. one path per collection -------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/coups/list",
        "/api/v1/disputes/raise",
        "/api/v1/packs/receive",
        "/api/v1/reglements/post",
    ],
)
def test_the_split_paths_are_gone(api, cast, path):
    answer = api(cast.inspecteur).get(path)
    assert (answer.status_code, answer.json()["code"]) == (404, "not_found")


# --- 3. the same fault, the same code ---------------------------------------------------------------


@pytest.mark.parametrize("amount", ["2500", 2500.0, 25.5, True, -5, 0, None, [2500], 10**13])
def test_a_bad_amount_is_invalid_wherever_it_is_sent(api, cast, shift, sixain_in_play, amount):
    coup = coup_open(actor=cast.tailleur, shift_id=shift.pk)
    croupier, caissier, tailleur = api(cast.croupier), api(cast.caissier), api(cast.tailleur)
    before = snapshot()
    stake = act(
        croupier,
        "/api/v1/stakes",
        {"coup": coup.pk, "ref": "a", "holder": "3", "chance": "rouge", "amount": amount},
        "s",
    )
    refused(stake, 400, "invalid", "amount")
    transfer = act(
        caissier,
        "/api/v1/transfers",
        {"shift": shift.pk, "kind": "fill", "amount": amount},
        "t",
    )
    refused(transfer, 400, "invalid", "amount")
    batch = act(
        tailleur,
        "/api/v1/coups/batch",
        {
            "shift": shift.pk,
            "cards": ["KS"],
            "stakes": [{"ref": "a", "holder": "3", "chance": "rouge", "amount": amount}],
        },
        "b",
    )
    refused(batch, 400, "invalid", "stakes[0].amount")
    assert snapshot() == before


def test_an_amount_beyond_the_table_is_the_rules_refusal_on_every_path(
    api, cast, shift, sixain_in_play
):
    over = shift.max_stake + 1
    tailleur, croupier = api(cast.tailleur), api(cast.croupier)
    before = snapshot()
    batch = act(
        tailleur,
        "/api/v1/coups/batch",
        {
            "shift": shift.pk,
            "cards": ["KS"],
            "stakes": [{"ref": "a", "holder": "3", "chance": "rouge", "amount": over}],
        },
        "b",
    )
    refused(batch, 422, "stake_refused", "stakes[0].amount")
    assert snapshot() == before
    coup = coup_open(actor=cast.tailleur, shift_id=shift.pk)
    before = snapshot()
    stake = act(
        croupier,
        "/api/v1/stakes",
        {"coup": coup.pk, "ref": "a", "holder": "3", "chance": "rouge", "amount": over},
        "s",
    )
    refused(stake, 422, "stake_refused", "amount")
    assert snapshot() == before


def test_opening_a_pack_whose_seal_is_unverified_is_a_state_conflict(api, cast, shift, receive):
    pack, chef = receive(), api(cast.chef)
    before = snapshot()
    answer = act(chef, f"/api/v1/packs/{pack.pk}/open", {"shift": shift.pk}, "o")
    refused(answer, 409, "seal_not_verified", "pack")
    assert snapshot() == before


def test_a_late_stake_is_the_rules_refusal_and_its_evidence_is_kept(
    api, cast, shift, sixain_in_play
):
    coup = coup_open(actor=cast.tailleur, shift_id=shift.pk)
    coup_close_betting(actor=cast.tailleur, coup_id=coup.pk)
    coup_lay_card(actor=cast.tailleur, coup_id=coup.pk, code="KS")
    answer = act(
        api(cast.croupier),
        "/api/v1/stakes",
        {"coup": coup.pk, "ref": "late", "holder": "3", "chance": "rouge", "amount": 1000},
        "late",
    )
    refused(answer, 422, "late_stake", "coup")
    assert Anomaly.objects.filter(detector="late_stake").count() == 1


def test_a_missing_field_and_an_unknown_one_are_named(api, cast, shift):
    client = api(cast.caissier)
    refused(
        act(client, "/api/v1/transfers", {"shift": shift.pk, "kind": "fill"}, "m"),
        400,
        "missing_field",
        "amount",
    )
    refused(
        act(
            client,
            "/api/v1/transfers",
            {"shift": shift.pk, "kind": "fill", "amount": 100, "amout": 100},
            "u",
        ),
        400,
        "unknown_field",
        "amout",
    )
    refused(client.get("/api/v1/transfers?shfit=1"), 400, "unknown_field", "shfit")
    refused(client.get("/api/v1/transfers?shift=x"), 400, "invalid", "shift")
    refused(client.get("/api/v1/transfers?page_size=501"), 400, "invalid_page", "page_size")
    refused(client.get("/api/v1/transfers?cursor=nonsense"), 400, "invalid_page", "cursor")


def test_a_body_that_is_not_json_is_bad_json(api, cast, shift):
    answer = api(cast.caissier).post(
        "/api/v1/transfers",
        "{not json",
        content_type="application/json",
        HTTP_IDEMPOTENCY_KEY="j",
    )
    refused(answer, 400, "bad_json", "body")
    form = api(cast.caissier).post(
        "/api/v1/transfers",
        {"shift": shift.pk, "kind": "fill", "amount": 100},
        HTTP_IDEMPOTENCY_KEY="f",
    )  # form-encoded: every value a string
    refused(form, 415, "unsupported_media_type", "Content-Type")


def test_an_unknown_reference_is_404_naming_the_path_parameter(api, cast):
    client = api(cast.inspecteur)
    refused(client.get("/api/v1/coups/999999"), 404, "not_found", "id")
    refused(client.get("/api/v1/tables/99"), 404, "not_found", "number")
    refused(client.get("/api/v1/accounts/T9:bank"), 404, "not_found", "code")
    refused(
        act(api(cast.tailleur), "/api/v1/coups/999999/close-betting", {}, "x"),
        404,
        "not_found",
        "coup",
    )


# --- 4. strict types, one reference per record, RULES.md's names -------------------------------------


def test_reglement_parameters_are_json_in_rules_names(api, cast, posted):
    served = api(cast.croupier).get(f"/api/v1/reglements/{posted.pk}").json()
    assert isinstance(served["parameters"], dict)
    assert set(served["parameters"]) - {"name"} <= RULES_PARAMETERS


def test_a_stake_is_named_by_its_id_in_the_coup_the_prison_and_the_ledger(
    api, cast, shift, sixain_in_play
):
    coup = coup_open(actor=cast.tailleur, shift_id=shift.pk)
    stake = stake_place(
        actor=cast.croupier, coup_id=coup.pk, ref="a", holder="3", chance="rouge", amount=2500
    )
    coup_close_betting(actor=cast.tailleur, coup_id=coup.pk)
    # A refait (both rows 31) imprisons the stake under baden-1854.
    for code in ["KS", "KH", "KD", "AC", "KC", "KS", "KH", "AS"]:
        coup_lay_card(actor=cast.tailleur, coup_id=coup.pk, code=code)
    client = api(cast.inspecteur)
    settled = act(api(cast.croupier), f"/api/v1/coups/{coup.pk}/settle", {}, "settle").json()
    assert settled["outcome"]["result"] == "refait"
    assert [s["stake"] for s in settled["settlements"]] == [stake.pk]
    assert [p["stake"] for p in settled["outcome"]["prison_after"]] == [stake.pk]
    assert CoupResult.objects.get(coup=coup).prison_after[0]["stake"] in (stake.pk, str(stake.pk))
    moved = client.get(f"/api/v1/movements?coup={coup.pk}").json()["results"]
    assert {m["refers_to"]["stake"] for m in moved} == {stake.pk}
    assert (
        client.get(f"/api/v1/tables/{shift.table.number}").json()["prison"][0]["stake"] == stake.pk
    )


def test_a_played_talons_export_names_rules_parameters(cast, shift, sixain_in_play):
    from casino.reports.export import replay_document

    lay_in_coups(cast, shift, ["KS", "7H", "9D", "2C", "5S", "TH", "QD", "AS", "4C", "3H", "9S"])
    document = replay_document(sixain_in_play)
    assert set(document["reglement"]["overrides"]) <= RULES_PARAMETERS
    json.dumps(document)  # JSON all the way down


def test_an_integer_given_as_a_string_or_a_float_is_refused_and_records_nothing(
    api, cast, shift, verified
):
    pack, chef = verified(), api(cast.chef)
    before = snapshot()
    for value in (str(shift.pk), float(shift.pk)):
        refused(
            act(chef, f"/api/v1/packs/{pack.pk}/open", {"shift": value}, f"{value}"),
            400,
            "invalid",
            "shift",
        )
    assert snapshot() == before
    pack_open(actor=cast.chef, pack_id=pack.pk, shift_id=shift.pk)  # as an integer it opens
