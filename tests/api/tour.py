"""A tour of the whole API as the house uses it: people log in, a séance is opened and played, a
pack passes through the card room, disputes are raised and ruled on, the police visit, the séance
closes and its report is signed, regulators read everything. Every operation of the schema is
called at least once with success; some are called as the faults a client makes.

Each exchange is kept (operation, request, response), so the tour serves two tests: every answer
must be one the published schema describes (tests/api/test_schema.py), and its first success per
operation is the schema's example (``docs/api-examples.json``, written by ``make api-examples``).
"""

from __future__ import annotations

import datetime as dt
import itertools
import random
from dataclasses import dataclass, field
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import resolve
from rest_framework.test import APIClient

from casino.floor.models import PostedReglement
from casino.games.cards import Composition, card
from casino.people.roles import Role
from casino.reports.models import Report
from casino.reports.services import report_render
from tests.actors import PASSWORD, Cast, hire, otp_code
from tests.floor.pharao_world import pack_order


@dataclass
class Exchange:
    method: str
    route: str  # the OpenAPI path: /api/v1/coups/{id}
    request: Any
    status: int
    response: Any
    content_type: str


def openapi_path(path: str) -> str:
    """``/api/v1/coups/12/settle`` as the schema names it: ``/api/v1/coups/{id}/settle``."""
    match = resolve(path.split("?")[0])
    route = "/" + match.route
    for name in match.kwargs:
        start = route.index(f":{name}>")
        route = (
            route[: route.rindex("<", 0, start)] + "{" + name + "}" + route[start + len(name) + 2 :]
        )
    return route


@dataclass
class Tour:
    cast: Cast
    exchanges: list[Exchange] = field(default_factory=list)
    keys: itertools.count = field(default_factory=itertools.count)
    clients: dict[int, APIClient] = field(default_factory=dict)

    def client(self, user: Any) -> APIClient:
        """A terminal logged in as ``user`` through ``POST /token`` (the TOTP code when the
        person's roles require one)."""
        if user.pk not in self.clients:
            body = {"username": user.username, "password": PASSWORD}
            if user.groups.filter(name__in=SECOND_FACTOR).exists():
                body["otp"] = otp_code(user)
            token = self.call(None, "POST", "/api/v1/token", body, expect=200)["token"]
            client = APIClient()
            client.credentials(HTTP_AUTHORIZATION=f"Token {token}", HTTP_ACCEPT_LANGUAGE="en")
            self.clients[user.pk] = client
        return self.clients[user.pk]

    def call(
        self,
        user: Any,
        method: str,
        path: str,
        body: Any = None,
        *,
        expect: int | None = None,
        multipart: bool = False,
    ) -> Any:
        client = self.client(user) if user is not None else APIClient()
        headers = {}
        if method == "POST" and not path.endswith(("/token", "/logout")):
            headers["HTTP_IDEMPOTENCY_KEY"] = f"tour-{next(self.keys)}"
        if method == "GET":
            response = client.get(path, **headers)
        elif multipart:
            response = client.post(path, body, format="multipart", **headers)
        else:
            response = client.post(path, body, format="json", **headers)
        content_type = response.get("Content-Type", "")
        answer = response.json() if content_type.startswith("application/json") else None
        shown = {k: f"<{v.name}>" for k, v in body.items()} if multipart else body
        self.exchanges.append(
            Exchange(method, openapi_path(path), shown, response.status_code, answer, content_type)
        )
        if expect is not None:
            assert response.status_code == expect, (method, path, body, answer)
        return answer

    def get(self, user: Any, path: str, expect: int = 200) -> Any:
        return self.call(user, "GET", path, expect=expect)

    def post(self, user: Any, path: str, body: Any = None, expect: int = 201) -> Any:
        return self.call(user, "POST", path, {} if body is None else body, expect=expect)


SECOND_FACTOR = [
    r.value for r in (Role.DIRECTEUR, Role.COMITE, Role.COMMISSAIRE, Role.AUDITEUR, Role.INSPECTEUR)
]
FLOAT = {"10000": 40, "2500": 40, "500": 100}


def chips_for(total: int) -> dict[str, int]:
    """A count of ``total`` in chips of 100.00, 25.00 and 5.00 (and 1.00 for the rest)."""
    chips: dict[str, int] = {}
    for denomination in (10000, 2500, 500, 100):
        chips[str(denomination)], total = divmod(total, denomination)
    assert total == 0, "amounts on the floor are whole units"
    return {k: v for k, v in chips.items() if v}


def sixain_order(seed: int) -> list[str]:
    """A sixain as the shuffle and the cut left it (the tour's own pack)."""
    cards = [str(c) for c in Composition.packs(6).cards]
    random.Random(seed).shuffle(cards)
    return cards


def play(cast: Cast) -> Tour:
    tour = Tour(cast)
    c = cast
    croupier2 = hire(c.directeur, "croupier2", Role.CROUPIER)
    chef2 = hire(c.directeur, "chef2", Role.CHEF_DE_PARTIE)

    # People and their tokens.
    tour.get(c.croupier, "/api/v1/me")
    tour.get(c.croupier, "/api/v1/tokens")
    tour.get(c.directeur, "/api/v1/people?role=croupier")
    tour.get(c.directeur, f"/api/v1/people/{c.croupier.username}")

    # The règlement in force, a new version posted by the commissioner, a new table.
    reglements = tour.get(c.chef, "/api/v1/reglements?name=baden-1854")["results"]
    tour.get(c.chef, f"/api/v1/reglements/{reglements[0]['id']}")
    posted = tour.post(
        c.commissaire,
        "/api/v1/reglements",
        {
            "name": "cercle-1860",
            "spec": {"preset": "baden-1854", "overrides": {"burn": 1}},
            "effective_from": "2026-01-01",
        },
    )
    tour.post(
        c.directeur,
        "/api/v1/tables",
        {
            "number": 2,
            "game": "trente-et-quarante",
            "reglement": posted["id"],
            "min_stake": 500,
            "max_stake": 100_000,
        },
    )
    baden = PostedReglement.objects.get(name="baden-1854", version=1)
    tour.post(
        c.directeur,
        "/api/v1/tables/2/settings",
        {"reglement": baden.pk, "min_stake": 500, "max_stake": 200_000},
    )
    tour.get(c.croupier, "/api/v1/tables")

    # The carnet d'avances, and the séance opened on it.
    count = tour.post(
        c.croupier, "/api/v1/counts", {"table": 1, "moment": "opening", "chips": FLOAT}
    )
    tour.post(c.directeur, f"/api/v1/counts/{count['id']}/countersign")
    tour.get(c.croupier, f"/api/v1/counts/{count['id']}")
    tour.get(c.directeur, "/api/v1/counts?table=1&signed=true")
    shift = tour.post(
        c.chef,
        "/api/v1/shifts",
        {
            "table": 1,
            "count": count["id"],
            "tailleur": c.tailleur.username,
            "croupiers": [c.croupier.username],
        },
    )
    tour.get(c.croupier, "/api/v1/shifts?open=true")
    tour.get(c.croupier, f"/api/v1/shifts/{shift['id']}")
    duty = tour.post(
        c.chef,
        "/api/v1/duties",
        {"shift": shift["id"], "person": croupier2.username, "post": "croupier"},
    )
    tour.get(c.croupier, f"/api/v1/duties?shift={shift['id']}")
    tour.get(c.croupier, f"/api/v1/duties/{duty['id']}")
    tour.post(c.chef, f"/api/v1/duties/{duty['id']}/end", {"reason": "pause"})

    # The card room: a delivery received and stored, the seals verified, the register's visa.
    packs = []
    for n in range(2):
        packs.append(
            tour.post(
                c.caissier,
                "/api/v1/packs",
                {
                    "kind": "sixain",
                    "maker": "Grimaud",
                    "maker_pack_numbers": f"G-{n}",
                    "seal_number": f"RF-TOUR-{n}",
                    "sealing_authority": "Préfecture de police",
                    "store_location": "coffre A",
                },
            )
        )
    for pack in packs:
        tour.post(c.caissier, f"/api/v1/packs/{pack['id']}/store")
        tour.post(
            c.commissaire,
            f"/api/v1/packs/{pack['id']}/verification",
            {"seal_number_read": pack["seal_number"], "verdict": "intact"},
        )
    today = dt.date.today().isoformat()
    tour.post(c.commissaire, "/api/v1/register/visas", {"day": today, "remarks": "vu"})
    tour.get(c.caissier, "/api/v1/register/visas")
    tour.get(c.caissier, f"/api/v1/register/visas/{today}")
    tour.get(c.caissier, "/api/v1/packs?state=verified")

    # The pack opened at the table, shuffled, cut.
    pack = packs[0]
    tour.post(c.chef, f"/api/v1/packs/{pack['id']}/open", {"shift": shift["id"]})
    tour.post(c.croupier, f"/api/v1/packs/{pack['id']}/shuffles", {})
    tour.post(c.tailleur, f"/api/v1/packs/{pack['id']}/shuffles", {})
    tour.post(c.tailleur, f"/api/v1/packs/{pack['id']}/cut", {"cut_by": "M. Dupont"})
    cards = iter(sixain_order(seed=1854))

    # A fill and a credit, each signed by the other side.
    fill = tour.post(
        c.caissier, "/api/v1/transfers", {"shift": shift["id"], "kind": "fill", "amount": 500_000}
    )
    tour.post(c.chef, f"/api/v1/transfers/{fill['id']}/countersign", {})
    credit = tour.post(
        c.chef, "/api/v1/transfers", {"shift": shift["id"], "kind": "credit", "amount": 100_000}
    )
    tour.post(c.caissier, f"/api/v1/transfers/{credit['id']}/countersign", {"signed": True})
    tour.get(c.croupier, f"/api/v1/transfers?shift={shift['id']}")
    tour.get(c.croupier, f"/api/v1/transfers/{fill['id']}")

    # Coups, act by act.
    played = []
    for number in range(4):
        coup = tour.post(c.tailleur, "/api/v1/coups", {"shift": shift["id"]})
        stakes = [
            tour.post(
                c.croupier,
                "/api/v1/stakes",
                {
                    "coup": coup["id"],
                    "ref": f"{number}-{chance}",
                    "holder": str(seat),
                    "chance": chance,
                    "amount": 1000 * seat,
                },
            )
            for seat, chance in enumerate(("rouge", "noir", "couleur"), start=1)
        ]
        if number == 0:
            withdrawn = tour.post(c.croupier, f"/api/v1/stakes/{stakes[0]['id']}/withdraw")
            assert withdrawn["withdrawn"] is True
        tour.post(c.tailleur, f"/api/v1/coups/{coup['id']}/close-betting")
        while True:
            laid = tour.post(c.tailleur, f"/api/v1/coups/{coup['id']}/cards", {"code": next(cards)})
            if number == 1 and laid["row"] == "noir" and laid["row_total"] < 20:
                late = tour.call(
                    c.croupier,
                    "POST",
                    "/api/v1/stakes",
                    {
                        "coup": coup["id"],
                        "ref": "late",
                        "holder": "5",
                        "chance": "rouge",
                        "amount": 1000,
                    },
                    expect=422,
                )
                assert late["code"] == "late_stake"
            if laid["coup_complete"]:
                break
        played.append(tour.post(c.croupier, f"/api/v1/coups/{coup['id']}/settle", {}))
    tour.get(c.croupier, f"/api/v1/coups?shift={shift['id']}")
    tour.get(c.croupier, f"/api/v1/coups/{played[0]['id']}")
    tour.get(c.croupier, f"/api/v1/stakes?coup={played[0]['id']}")
    tour.get(c.croupier, f"/api/v1/stakes/{played[0]['stakes'][1]['id']}")
    tour.get(c.croupier, "/api/v1/tables/1")

    # A coup from a paper record, and a coup the chef de partie cancels.
    transcribed = _batch(tour, c, shift["id"], [next(cards) for _ in range(12)])
    assert transcribed["phase"] == "settled"
    cancelled = tour.post(c.tailleur, "/api/v1/coups", {"shift": shift["id"]})
    tour.post(c.chef, f"/api/v1/coups/{cancelled['id']}/cancel", {"reason": "carte tombée"})

    # The ledger.
    tour.get(c.croupier, "/api/v1/accounts?table=1")
    tour.get(c.croupier, "/api/v1/accounts/T1:bank")
    movements = tour.get(c.croupier, f"/api/v1/movements?coup={played[0]['id']}")["results"]
    tour.get(c.croupier, f"/api/v1/movements/{movements[0]['id']}")

    # Disputes: one decided by the engine's findings and approved beyond the threshold, one
    # refused, decided again and appealed, one withdrawn; evidence attached.
    first_coup, second_coup = played[0], played[1]
    stake = first_coup["stakes"][1]
    dispute = tour.post(
        c.croupier,
        "/api/v1/disputes",
        {
            "subject": "coup",
            "subject_id": first_coup["id"],
            "claim": "misplaced stake",
            "on_behalf_of": "M. Martin",
            "statement": "the chip was on the other side",
        },
    )
    tour.call(
        c.croupier,
        "POST",
        f"/api/v1/disputes/{dispute['id']}/evidence",
        {"file": SimpleUploadedFile("photo.png", b"\x89PNG\r\n\x1a\n" + b"0" * 64, "image/png")},
        expect=201,
        multipart=True,
    )
    tour.post(chef2, f"/api/v1/disputes/{dispute['id']}/review", {"note": "taken up"})
    opposite = {"rouge": "noir", "noir": "rouge", "couleur": "inverse", "inverse": "couleur"}
    layout, holder = "T1:layout", stake["holder"]
    tour.post(
        chef2,
        f"/api/v1/disputes/{dispute['id']}/decide",
        {
            "articles": ["1"],
            "reasoning": "the chip lay on the other chance",
            "findings": [{"stake": stake["id"], "chance": opposite[stake["chance"]]}],
            "corrections": [{"credit": "T1:bank", "debit": holder, "amount": 2000}],
            "override_reason": "the player's second stake too",
        },
    )
    tour.post(c.directeur, f"/api/v1/disputes/{dispute['id']}/approve", {"note": "seen"})

    second = tour.post(
        c.tailleur,
        "/api/v1/disputes",
        {"subject": "coup", "subject_id": second_coup["id"], "claim": "wrong total"},
    )
    tour.post(chef2, f"/api/v1/disputes/{second['id']}/review", {"note": "taken up"})
    tour.post(
        chef2,
        f"/api/v1/disputes/{second['id']}/decide",
        {
            "articles": ["1"],
            "reasoning": "a gesture",
            "findings": [],
            "corrections": [{"credit": "T1:bank", "debit": layout, "amount": 100}],
            "override_reason": "goodwill",
        },
    )
    tour.post(c.directeur, f"/api/v1/disputes/{second['id']}/refuse", {"note": "no ground"})
    tour.post(
        chef2,
        f"/api/v1/disputes/{second['id']}/decide",
        {"articles": ["1"], "reasoning": "the record is right", "findings": []},
    )
    tour.post(c.tailleur, f"/api/v1/disputes/{second['id']}/appeal", {"note": "I insist"})
    tour.post(
        c.commissaire,
        f"/api/v1/disputes/{second['id']}/decide",
        {"articles": ["1"], "reasoning": "the cards say so", "findings": []},
    )
    fill_movement = tour.get(c.caissier, f"/api/v1/movements?kind=fill&shift={shift['id']}")
    third = tour.post(
        croupier2,
        "/api/v1/disputes",
        {
            "subject": "movement",
            "subject_id": fill_movement["results"][0]["id"],
            "claim": "counted twice?",
        },
    )
    tour.post(croupier2, f"/api/v1/disputes/{third['id']}/withdraw", {"note": "recounted"})
    tour.get(c.croupier, "/api/v1/disputes?state=decided_by_commissioner")
    tour.get(c.chef, f"/api/v1/disputes/{dispute['id']}")

    # The police visit; the director's follow-up.
    observation = tour.post(
        c.commissaire,
        "/api/v1/police/observations",
        {
            "visited_at": dt.datetime.now(dt.UTC).isoformat(),
            "checks": "seals, register",
            "injunctions": "post the règlement by table 2",
            "table": 1,
        },
    )
    tour.get(c.inspecteur, "/api/v1/police/observations")
    tour.get(c.inspecteur, f"/api/v1/police/observations/{observation['id']}")
    tour.post(
        c.directeur,
        f"/api/v1/police/observations/{observation['id']}/follow-up",
        {"action": "posted the same day"},
    )

    # Anomalies (the late stake, the cancelled coup) reviewed by internal audit.
    anomalies = tour.get(c.auditeur, "/api/v1/anomalies?state=open")["results"]
    tour.get(c.auditeur, f"/api/v1/anomalies/{anomalies[0]['id']}")
    tour.post(
        c.auditeur,
        f"/api/v1/anomalies/{anomalies[0]['id']}/reviews",
        {"to_state": "acknowledged", "reason": "seen on the camera"},
    )

    # The cards pass; new cards are demanded; the pack is counted back and destroyed.
    tour.post(
        c.tailleur,
        f"/api/v1/packs/{pack['id']}/pass",
        {"undealt": list(cards), "method": "scanned"},
    )
    tour.post(
        c.chef,
        f"/api/v1/packs/{pack['id']}/replacement",
        {"demanded_by": "M. Martin", "side": "players"},
    )
    laid = tour.get(c.chef, f"/api/v1/packs/{pack['id']}")["cards"]
    out = _left_in(laid)
    tour.post(c.chef, f"/api/v1/packs/{pack['id']}/retire", {"counted": out})
    tour.post(c.commissaire, f"/api/v1/packs/{pack['id']}/destroy", {"remarks": "burned"})

    # The close: the closing count is what the rundown expects.
    expected = tour.get(c.chef, f"/api/v1/shifts/{shift['id']}")["rundown"]["expected"]
    closing = tour.post(
        c.croupier,
        "/api/v1/counts",
        {"table": 1, "moment": "closing", "chips": chips_for(expected)},
    )
    tour.post(c.comite, f"/api/v1/counts/{closing['id']}/countersign")
    closed = tour.post(c.chef, f"/api/v1/shifts/{shift['id']}/close", {"count": closing["id"]})
    assert closed["rundown"]["variance"] == 0

    # The séance's report, signed (here, rather than by the worker), then read as a regulator.
    report = Report.objects.filter(shift_id=shift["id"], kind=Report.Kind.SHIFT).get()
    report_render(version=report.version, shift=shift["id"])
    tour.get(c.inspecteur, f"/api/v1/reports?shift={shift['id']}")
    tour.get(c.inspecteur, f"/api/v1/reports/{report.pk}")
    tour.get(c.inspecteur, f"/api/v1/reports/{report.pk}/pdf")
    tour.get(c.inspecteur, f"/api/v1/reports/{report.pk}/export")

    # The audit chain.
    events = tour.get(c.inspecteur, "/api/v1/audit/events?page_size=5")
    tour.get(c.inspecteur, f"/api/v1/audit/events/{events['results'][0]['seq']}")
    tour.get(c.inspecteur, "/api/v1/audit/verify")

    _pharao(tour, c)
    _cercle(tour, c)

    tour.call(c.croupier, "POST", "/api/v1/logout", expect=204)
    return tour


def _pharao(tour: Tour, c: Cast) -> None:
    """A séance at a Pharao table: a single pack through its custody, a taille opened with its
    bottom card shown, stakes on ranks, a paroli, a raise, a reduction and a withdrawal each
    approved by the chef de partie, a collect after a win; a false paroli refused."""
    baden = PostedReglement.objects.get(name="baden-1854", version=1)
    tour.post(
        c.directeur,
        "/api/v1/tables",
        {
            "number": 3,
            "game": "pharao",
            "reglement": baden.pk,
            "min_stake": 100,
            "max_stake": 50_000,
        },
    )
    count = tour.post(
        c.croupier, "/api/v1/counts", {"table": 3, "moment": "opening", "chips": FLOAT}
    )
    tour.post(c.directeur, f"/api/v1/counts/{count['id']}/countersign")
    shift = tour.post(
        c.chef,
        "/api/v1/shifts",
        {
            "table": 3,
            "count": count["id"],
            "tailleur": c.tailleur.username,
            "croupiers": [c.croupier.username],
        },
    )
    pack = _single_pack(tour, c, shift["id"], "RF-TOUR-PH")
    tour.post(c.croupier, f"/api/v1/packs/{pack['id']}/shuffles", {})
    tour.post(c.tailleur, f"/api/v1/packs/{pack['id']}/shuffles", {})
    tour.post(c.tailleur, f"/api/v1/packs/{pack['id']}/cut", {"cut_by": "M. Dupont"})

    taille = tour.post(
        c.tailleur, "/api/v1/pharao/tailles", {"shift": shift["id"], "bottom_card": "KS"}
    )
    path = f"/api/v1/pharao/tailles/{taille['id']}"
    a, b, w = (
        tour.post(
            c.croupier,
            "/api/v1/pharao/stakes",
            {"taille": taille["id"], "ref": ref, "holder": seat, "rank": rank, "amount": amount},
        )
        for ref, seat, rank, amount in (
            ("a", "1", "7", 1000),
            ("b", "2", "5", 500),
            ("w", "3", "9", 800),
        )
    )
    tour.post(c.tailleur, f"{path}/cards", {"code": "3C", "side": "bank"})
    tour.post(c.tailleur, f"{path}/cards", {"code": "7H", "side": "players"})  # a wins
    stakes = "/api/v1/pharao/stakes"
    false = tour.call(
        c.croupier, "POST", f"{stakes}/{b['id']}/mark", {"move": "paroli"}, expect=422
    )
    assert false["code"] == "false_paroli"
    tour.post(c.croupier, f"{stakes}/{a['id']}/mark", {"move": "paroli"})
    tour.post(c.croupier, f"{stakes}/{b['id']}/raise", {"amount": 200})
    reduction = tour.post(
        c.chef, "/api/v1/pharao/approvals", {"stake": b["id"], "act": "reduce", "amount": 100}
    )
    tour.post(c.croupier, f"{stakes}/{b['id']}/reduce", {"amount": 100})
    tour.post(c.chef, "/api/v1/pharao/approvals", {"stake": w["id"], "act": "withdraw"})
    tour.post(c.croupier, f"{stakes}/{w['id']}/withdraw")
    tour.post(c.tailleur, f"{path}/cards", {"code": "2D"})
    tour.post(c.tailleur, f"{path}/cards", {"code": "7C"})  # the paroli wins
    tour.post(c.croupier, f"{stakes}/{a['id']}/collect")
    tour.get(c.croupier, f"/api/v1/pharao/tailles?shift={shift['id']}")
    tour.get(c.croupier, path)
    tour.get(c.croupier, f"{stakes}?taille={taille['id']}")
    tour.get(c.croupier, f"{stakes}/{a['id']}")
    tour.get(c.chef, f"/api/v1/pharao/approvals?taille={taille['id']}")
    tour.get(c.chef, f"/api/v1/pharao/approvals/{reduction['id']}")

    # The rest of the taille: its 26th draw returns what stands; then the séance closes.
    for code in pack_order(["3C", "7H", "2D", "7C"], "KS")[4:]:
        laid = tour.post(c.tailleur, f"{path}/cards", {"code": code})
    assert laid["end"] is not None
    expected = tour.get(c.chef, f"/api/v1/shifts/{shift['id']}")["rundown"]["expected"]
    closing = tour.post(
        c.croupier,
        "/api/v1/counts",
        {"table": 3, "moment": "closing", "chips": chips_for(expected)},
    )
    tour.post(c.comite, f"/api/v1/counts/{closing['id']}/countersign")
    closed = tour.post(c.chef, f"/api/v1/shifts/{shift['id']}/close", {"count": closing["id"]})
    assert closed["rundown"]["variance"] == 0


def _cercle(tour: Tour, c: Cast) -> None:
    """A séance at a cercle table (Alliance): opened without a tailleur on the empty fee box,
    four patrons bought in at the cage and seated, a deal recorded act by act (a call out of turn
    refused on the way), a deal from its paper sheet, a player leaving and cashed out, the séance
    closed on the fee box's count."""
    from tests.floor.alliance_world import sheet, simulated

    cercle = tour.post(
        c.commissaire,
        "/api/v1/reglements",
        {
            "name": "cercle-baden",
            "spec": {"preset": "baden-1854", "overrides": {"cercle_fee": 50}},
            "effective_from": "2026-01-01",
        },
    )
    tour.post(
        c.directeur,
        "/api/v1/tables",
        {
            "number": 4,
            "game": "alliance",
            "reglement": cercle["id"],
            "min_stake": 100,  # the mark
            "max_stake": 100,
        },
    )
    count = tour.post(
        c.croupier, "/api/v1/counts", {"table": 4, "moment": "opening", "chips": {"100": 0}}
    )
    tour.post(c.directeur, f"/api/v1/counts/{count['id']}/countersign")
    shift = tour.post(
        c.chef,
        "/api/v1/shifts",
        {"table": 4, "count": count["id"], "croupiers": [c.croupier.username]},
    )
    seats = []
    for seat, name in enumerate(("ana", "ben", "carl", "dora"), start=1):
        tour.post(
            c.caissier,
            "/api/v1/cage/buy-ins",
            {"patron": name, "amount": 50_000, "name": name.title()},
        )
        seats.append(
            tour.post(
                c.croupier,
                "/api/v1/alliance/seats",
                {"shift": shift["id"], "seat": seat, "patron": f"patron:{name}"},
            )
        )
    tour.get(c.croupier, f"/api/v1/alliance/seats?shift={shift['id']}&seated=true")
    tour.get(c.croupier, f"/api/v1/alliance/seats/{seats[0]['id']}")
    _single_pack(tour, c, shift["id"], "RF-TOUR-AL")

    # A deal act by act: the dealer shuffles, his left cuts; the cards, the calls, the contract,
    # each card by the player whose turn it is.
    doc = sheet(simulated(7))
    players = doc["players"]
    deal = tour.post(
        c.croupier,
        "/api/v1/alliance/deals",
        {"shift": shift["id"], "dealer": players[-1], "cut_by": players[-2]},
    )
    path = f"/api/v1/alliance/deals/{deal['id']}"
    state = tour.post(c.croupier, f"{path}/cards", {"cards": doc["cards"]})
    tour.get(c.croupier, "/api/v1/tables/4")
    late = tour.call(
        c.croupier,
        "POST",
        f"{path}/calls",
        {"player": players[1], "call": "solo"},
        expect=422,
    )
    assert late["code"] == "out_of_turn"
    for word in doc["auction"]:
        state = tour.post(
            c.croupier, f"{path}/calls", {"player": state["next_caller"], "call": word}
        )
    state = tour.post(c.chef, f"{path}/contract", {"contract": doc["contract"]})
    for trick in doc["tricks"]:
        for code in trick:
            state = tour.post(
                c.croupier, f"{path}/plays", {"player": state["next_player"], "code": code}
            )
    assert state["settlement"] is not None
    tour.get(c.croupier, f"/api/v1/alliance/deals?shift={shift['id']}&phase=over")
    tour.get(c.croupier, path)
    tour.get(c.chef, f"/api/v1/movements?deal={deal['id']}")

    # A deal from its paper sheet; then a player leaves and is paid out at the cage.
    tour.post(
        c.croupier,
        "/api/v1/alliance/deal-sheets",
        {"shift": shift["id"], "sheet": sheet(simulated(4))},
    )
    tour.post(c.croupier, f"/api/v1/alliance/seats/{seats[0]['id']}/leave", {"reason": "fin"})
    tour.post(c.caissier, "/api/v1/cage/cash-outs", {"patron": "patron:ana"})

    # The close: the fee box holds the fees of two deals of four players.
    expected = tour.get(c.chef, f"/api/v1/shifts/{shift['id']}")["rundown"]["expected"]
    assert expected == 2 * 4 * 50
    closing = tour.post(
        c.croupier,
        "/api/v1/counts",
        {"table": 4, "moment": "closing", "chips": chips_for(expected)},
    )
    tour.post(c.comite, f"/api/v1/counts/{closing['id']}/countersign")
    closed = tour.post(c.chef, f"/api/v1/shifts/{shift['id']}/close", {"count": closing["id"]})
    assert closed["rundown"]["variance"] == 0
    # The close unseated the others: they are paid out, in part or in whole.
    tour.post(c.caissier, "/api/v1/cage/cash-outs", {"patron": "ben", "amount": 1000})


def _single_pack(tour: Tour, c: Cast, shift: int, seal: str) -> Any:
    """A single pack received and stored by the cage, its seal verified by the commissioner,
    opened at the séance by the chef de partie."""
    pack = tour.post(
        c.caissier,
        "/api/v1/packs",
        {
            "kind": "single",
            "maker": "Grimaud",
            "maker_pack_numbers": f"G-{seal}",
            "seal_number": seal,
            "sealing_authority": "Préfecture de police",
            "store_location": "coffre A",
        },
    )
    tour.post(c.caissier, f"/api/v1/packs/{pack['id']}/store")
    tour.post(
        c.commissaire,
        f"/api/v1/packs/{pack['id']}/verification",
        {"seal_number_read": seal, "verdict": "intact"},
    )
    tour.post(c.chef, f"/api/v1/packs/{pack['id']}/open", {"shift": shift})
    return pack


def _batch(tour: Tour, c: Cast, shift: int, cards: list[str]) -> Any:
    """A whole coup transcribed from the paper sheet: only the cards the coup takes."""
    from casino.games.trente_et_quarante import CoupDeal

    deal = CoupDeal()
    used = []
    for code in cards:
        used.append(code)
        if deal.lay(card(code)).coup_complete:
            break
    return tour.post(
        c.tailleur,
        "/api/v1/coups/batch",
        {
            "shift": shift,
            "cards": used,
            "spoken": "",
            "stakes": [{"ref": "paper-1", "holder": "7", "chance": "noir", "amount": 2500}],
        },
    )


def _left_in(laid: list[dict[str, Any]]) -> dict[str, int]:
    """What the chef de partie counts back: the sixain less the cards of its last taille."""
    last = max((c["taille"] for c in laid), default=1)
    out = [card(c["card"]) for c in laid if c["taille"] == last]
    left = Composition.packs(6).remaining(out)
    return {str(k): v for k, v in left.items() if v}
