"""The table terminal's API: a whole sixain, concurrent terminals, retries and refusals."""

from __future__ import annotations

import itertools
import subprocess
import sys
import threading
from collections import Counter

import pytest
from django.db import connections

from audit.models import Anomaly
from casino.floor.models import (
    Account,
    Coup,
    CoupResult,
    Movement,
    Settlement,
    Stake,
)
from casino.floor.services import balance, table_account
from casino.games.reglement import reglement
from casino.games.replay import replay
from casino.games.simulator import simulate_taille
from tests.conftest import ROOT

KEYS = itertools.count()


def act(client, url, body=None):
    return client.post(url, body or {}, format="json", HTTP_IDEMPOTENCY_KEY=f"k{next(KEYS)}")


@pytest.mark.reglement("trente-et-quarante-modern")
def test_a_full_sixain_played_through_the_api_equals_the_replay(api, cast, shift, sixain_in_play):
    spec = {
        "preset": "trente-et-quarante-modern",
        "overrides": {"min_stake": shift.table.min_stake, "max_stake": shift.table.max_stake},
    }
    sim = simulate_taille(seed=2031, reglement=reglement(spec), stakes_per_coup=4)
    tailleur, croupier = api(cast.tailleur), api(cast.croupier)
    cards = iter(str(c) for c in sim.talon)
    number = 0
    while True:
        number += 1
        coup = act(tailleur, "/api/v1/coups", {"shift": shift.pk}).json()
        for s in sim.stakes.get(number, []):
            body = {
                "coup": coup["id"],
                "ref": s.id,
                "holder": "4",
                "chance": s.chance.value,
                "amount": s.amount,
                "insured": s.insured,
            }
            if s.on_refait is not None:
                body["on_refait"] = (
                    s.on_refait if isinstance(s.on_refait, str) else f"move:{s.on_refait[1].value}"
                )
            assert act(croupier, "/api/v1/stakes", body).status_code == 201
        act(tailleur, f"/api/v1/coups/{coup['id']}/close-betting")
        while True:
            code = next(cards, None)
            if code is None:
                break
            laid = act(tailleur, f"/api/v1/coups/{coup['id']}/cards", {"code": code}).json()
            if laid["coup_complete"]:
                break
        settled = act(croupier, f"/api/v1/coups/{coup['id']}/settle").json()
        if settled["outcome"]["last"]:
            break
    expected = replay(sim.replay_document(spec))["coups"]
    got = [
        api(cast.inspecteur).get(f"/api/v1/coups/{c.pk}").json()
        for c in Coup.objects.order_by("id")
    ]
    assert len(got) == len(expected)
    # A settlement names its stake by the stake's id (a prisoner's, by that of a coup before):
    # its terminal label, the replay's id, is the stake's ``ref``.
    ref_of = {s["id"]: s["ref"] for c in got for s in c["stakes"]}
    for want, have in zip(expected, got, strict=True):
        outcome = have["outcome"]
        assert (
            outcome["noir"],
            outcome["rouge"],
            outcome["result"],
            outcome["couleur"],
            outcome["void"],
            outcome["last"],
            outcome["announcement"],
        ) == (
            want["noir"],
            want["rouge"],
            want["result"],
            want["couleur"],
            want["void"],
            want["last"],
            want["announcement"],
        )
        assert all(s["coup"] == have["id"] for s in have["settlements"])
        settled = [
            {**{k: v for k, v in s.items() if k != "coup"}, "stake": ref_of[s["stake"]]}
            for s in have["settlements"]
        ]
        assert sorted(settled, key=lambda s: (s["stake"], s["outcome"])) == sorted(
            want["settlements"], key=lambda s: (s["stake"], s["outcome"])
        )
    # The ledger, movement for movement: each stake placed and each amount of each settlement of
    # the replay is exactly one movement between the right accounts, and nothing else moved.
    replayed = replay(sim.replay_document(spec))
    for number, (want, have) in enumerate(zip(replayed["coups"], got, strict=True), start=1):
        placed = {s.id: s.amount for s in sim.stakes.get(number, [])}
        settlements = want["settlements"]
        if number == len(got):
            settlements = [*settlements, *replayed["end"].get("settlements", [])]
        expected = Counter(("seat", "layout", amount) for amount in placed.values())
        for s in settlements:
            expected.update(implied_movements(s, placed_now=s["stake"] in placed))
        movements = list(
            Movement.objects.filter(reference__startswith=f"coup:{have['id']}:")
            .select_related("credit", "debit")
            .order_by("id")
        )
        assert Counter((m.credit.kind, m.debit.kind, m.amount) for m in movements) == expected
        # Losers are collected before winners are paid (1.2.9).
        settling = [m for m in movements if m.kind != Movement.Kind.STAKE_PLACED]
        paying = [i for i, m in enumerate(settling) if m.debit.kind == Account.Kind.SEAT]
        collecting = [i for i, m in enumerate(settling) if m.debit.kind != Account.Kind.SEAT]
        assert not paying or not collecting or max(collecting) < min(paying)
    assert balance(table_account(shift.table, Account.Kind.LAYOUT)) == 0


def implied_movements(s, *, placed_now):
    """What RULES.md 1.6 says a settlement moves, as (from, to, amount) by kind of account. A
    stake's money stands on the layout in the coup it was placed in, in prison afterwards."""
    source = "layout" if placed_now and s["outcome"] != "refunded" else "prison"
    moves = []
    if s["premium"]:
        moves.append(("seat", "bank", s["premium"]))
    if s["to_bank"]:
        moves.append((source, "bank", s["to_bank"]))
    if s["outcome"] == "imprisoned":
        moves.append(("layout", "prison", s["held"]))
    if s["returned"]:
        moves.append((source, "seat", s["returned"]))
    if s["paid"]:
        moves.append(("bank", "seat", s["paid"]))
    return moves


def test_retried_requests_record_nothing_new(api, cast, shift, sixain_in_play):
    tailleur, croupier = api(cast.tailleur), api(cast.croupier)
    coup = act(tailleur, "/api/v1/coups", {"shift": shift.pk}).json()
    body = {"coup": coup["id"], "ref": "a", "holder": "2", "chance": "noir", "amount": 1000}
    url = "/api/v1/stakes"
    first = croupier.post(url, body, format="json", HTTP_IDEMPOTENCY_KEY="same")
    again = croupier.post(url, body, format="json", HTTP_IDEMPOTENCY_KEY="same")
    assert (first.status_code, again.status_code) == (201, 201)
    assert again["Idempotent-Replay"] == "true"
    assert Stake.objects.count() == 1


def test_two_terminals_posting_to_the_same_coup_lose_nothing(
    transactional_db, api, cast, shift, sixain_in_play
):
    tailleur = api(cast.tailleur)
    coup = act(tailleur, "/api/v1/coups", {"shift": shift.pk}).json()
    url = "/api/v1/stakes"
    statuses: list[int] = []

    def terminal(name: str, user) -> None:
        client = api(user)
        try:
            for i in range(10):
                response = client.post(
                    url,
                    {
                        "coup": coup["id"],
                        "ref": f"{name}{i}",
                        "holder": name,
                        "chance": "rouge",
                        "amount": 500,
                    },
                    format="json",
                    HTTP_IDEMPOTENCY_KEY=f"{name}-{i}",
                )
                statuses.append(response.status_code)
        finally:
            connections.close_all()

    threads = [
        threading.Thread(target=terminal, args=(n, u))
        for n, u in (("left", cast.croupier), ("right", cast.tailleur))
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert statuses == [201] * 20
    assert Stake.objects.filter(coup_id=coup["id"]).count() == 20


def test_refusals_over_the_api(api, cast, shift, sixain_in_play):
    tailleur, croupier = api(cast.tailleur), api(cast.croupier)
    coup = act(tailleur, "/api/v1/coups", {"shift": shift.pk}).json()
    stakes, on = "/api/v1/stakes", {"coup": coup["id"]}
    over = croupier.post(
        stakes,
        {**on, "ref": "big", "holder": "1", "chance": "rouge", "amount": 700_000},
        format="json",
        HTTP_IDEMPOTENCY_KEY="over",
        HTTP_ACCEPT_LANGUAGE="en",  # the message names the limit: asked for in English
    )
    assert (over.status_code, over.json()["code"]) == (422, "stake_refused")
    assert "above the table maximum 600000" in over.json()["message"]
    typo = act(
        croupier, stakes, {**on, "ref": "t", "holder": "1", "chanse": "rouge", "amount": 500}
    )
    assert (typo.status_code, typo.json()["code"], typo.json()["where"]) == (
        400,
        "unknown_field",
        "chanse",
    )
    nobody = act(
        api(cast.inspecteur),
        stakes,
        {**on, "ref": "i", "holder": "1", "chance": "rouge", "amount": 500},
    )
    assert (nobody.status_code, nobody.json()["code"]) == (403, "role_required")
    act(tailleur, f"/api/v1/coups/{coup['id']}/close-betting")
    act(tailleur, f"/api/v1/coups/{coup['id']}/cards", {"code": "KS"})
    body = {**on, "ref": "late", "holder": "1", "chance": "noir", "amount": 500}
    late = croupier.post(stakes, body, format="json", HTTP_IDEMPOTENCY_KEY="late")
    retried = croupier.post(stakes, body, format="json", HTTP_IDEMPOTENCY_KEY="late")
    assert late.status_code == retried.status_code == 422
    assert late.json()["code"] == retried.json()["code"] == "late_stake"
    assert Anomaly.objects.filter(detector="late_stake").count() == 1
    for _ in range(5):
        act(tailleur, f"/api/v1/coups/{coup['id']}/cards", {"code": "KS"})
    foreign = act(tailleur, f"/api/v1/coups/{coup['id']}/cards", {"code": "KS"})
    assert (foreign.status_code, foreign.json()["code"]) == (422, "foreign_card")
    assert Anomaly.objects.filter(detector="foreign_card").count() == 1
    assert not Stake.objects.filter(ref__in=["big", "t", "i", "late"]).exists()


def test_a_paper_record_is_transcribed_by_the_batch_endpoint(api, cast, shift, sixain_in_play):
    body = {
        "shift": shift.pk,
        "stakes": [{"ref": "p1", "holder": "5", "chance": "noir", "amount": 1000}],
        "cards": ["KS", "7H", "9D", "2C", "5S", "TH", "QD", "AS", "4C", "3H", "9S"],
        "spoken": "rouge perd, couleur gagne",
    }
    response = act(api(cast.tailleur), "/api/v1/coups/batch", body)
    assert response.status_code == 201, response.json()
    assert response.json()["outcome"]["result"] == "noir"
    assert response.json()["settlements"][0]["outcome"] == "won"
    too_many = {**body, "cards": [*body["cards"], "2S"]}
    refused = act(api(cast.tailleur), "/api/v1/coups/batch", too_many)
    assert (refused.status_code, refused.json()["where"]) == (400, "cards[11]")
    assert CoupResult.objects.count() == 1
    assert Settlement.objects.count() == 1


def test_the_schema_is_complete_and_valid():
    done = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "spectacular",
            "--validate",
            "--fail-on-warn",
            "--file",
            "/dev/null",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


def test_regulators_list_coups_by_seance_table_and_result(api, cast, shift, sixain_in_play):
    body = {
        "shift": shift.pk,
        "cards": ["KS", "7H", "9D", "2C", "5S", "TH", "QD", "AS", "4C", "3H", "9S"],
    }
    act(api(cast.tailleur), "/api/v1/coups/batch", body)
    listing = api(cast.inspecteur).get(f"/api/v1/coups?shift={shift.pk}&result=noir")
    assert listing.status_code == 200
    assert [c["outcome"]["result"] for c in listing.json()["results"]] == ["noir"]
    none = api(cast.inspecteur).get("/api/v1/coups?result=rouge").json()
    assert (none["results"], none["next"]) == ([], None)
    bad = api(cast.inspecteur).get("/api/v1/coups?table=x")
    assert (bad.status_code, bad.json()["code"], bad.json()["where"]) == (400, "invalid", "table")
    assert api(cast.outsider).get("/api/v1/coups").status_code == 403


def test_a_foreign_card_in_a_paper_record_is_refused_and_its_evidence_kept(
    api, cast, shift, sixain_in_play
):
    body = {"shift": shift.pk, "cards": ["AS"] * 7, "stakes": []}
    refused = act(api(cast.tailleur), "/api/v1/coups/batch", body)
    assert (refused.status_code, refused.json()["code"]) == (422, "foreign_card"), refused.json()
    # The coup is not transcribed, but the refusal is evidence: kept, and recorded once.
    assert not Coup.objects.exists()
    anomaly = Anomaly.objects.get(detector="foreign_card")
    assert anomaly.evidence["card"] == "AS"
    assert sixain_in_play.events.filter(kind="foreign_card").count() == 1
