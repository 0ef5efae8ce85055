"""The table page against the API: the same acts, at the same table, over HTTP against gunicorn,
coup after coup, one coup through the page (htmx's requests: the admin session, its CSRF token,
the panel re-rendered in the answer) and the next through the API (a token, an idempotency key,
the record in JSON), so both meet the same history. One terminal at a time: the figures are the
server's time per act plus a localhost round trip (no queueing behind other terminals)."""

from __future__ import annotations

import http.client
import json
import random
import secrets
import statistics
import time
import uuid
from collections import defaultdict
from typing import Any
from urllib.parse import urlencode

from tests.bench.harness import gunicorn, report

NUMBER = 401  # the bench's table
STAKES = 4  # a coup's stakes
TAILLES = 2  # the sixain played through twice (shuffled and cut again)
ACTS = ("open a coup", "place a stake", "close betting", "lay a card", "settle")


def _setup() -> dict[str, Any]:
    """The table in séance, its sixain in play, the tailleur's and the croupier's admin sessions
    and API tokens."""
    from django.test import Client

    from casino import clock
    from casino.floor.models import PostedReglement
    from casino.floor.services import reglement_load_presets
    from casino.people.roles import Role
    from casino.people.services import staff_create
    from casino.people.tokens import token_issue
    from tests.bench.harness import bench_house, table_in_play

    directeur, commissaire = bench_house("pit")
    reglement_load_presets(actor=commissaire, effective_from=clock.now().date())
    posted = PostedReglement.objects.get(name="trente-et-quarante-modern")

    def person(name: str, role: Role) -> Any:
        return staff_create(actor=directeur, username=f"pit-{name}", full_name=name, roles=[role])

    tailleur = person("tailleur", Role.TAILLEUR)
    croupier = person("croupier", Role.CROUPIER)
    chef = person("chef", Role.CHEF_DE_PARTIE)
    caissier = person("caissier", Role.CAISSIER)
    shift, pack = table_in_play(
        directeur=directeur,
        commissaire=commissaire,
        caissier=caissier,
        staff={"tailleur": tailleur, "croupier": croupier, "chef": chef},
        posted=posted,
        number=NUMBER,
        seal=f"PIT-{uuid.uuid4().hex[:8]}",
    )

    def session(user: Any) -> str:
        client = Client()
        client.force_login(user)  # the session a login makes (these roles need no TOTP)
        return str(client.cookies["sessionid"].value)

    return {
        "shift": shift.pk,
        "pack": pack.pk,
        "people": {"tailleur": tailleur, "croupier": croupier},
        "tokens": {
            "tailleur": token_issue(user=tailleur)[1],
            "croupier": token_issue(user=croupier)[1],
        },
        "sessions": {"tailleur": session(tailleur), "croupier": session(croupier)},
    }


class Terminal:
    """Requests as the page (htmx) and as the API send them, each timed."""

    def __init__(self, port: int, spec: dict[str, Any]) -> None:
        self.port, self.spec = port, spec
        self.csrf = secrets.token_hex(16)  # Django accepts its 32-character secret as the token
        self.timings: dict[tuple[str, str], list[float]] = defaultdict(list)

    def _send(
        self, method: str, path: str, body: str, headers: dict[str, str]
    ) -> tuple[int, bytes, float]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        started = time.perf_counter()
        connection.request(method, path, body or None, headers)
        response = connection.getresponse()
        payload = response.read()
        elapsed = time.perf_counter() - started
        connection.close()
        return response.status, payload, elapsed

    def page(self, act: str, who: str, path: str, data: dict[str, Any] | None = None) -> str:
        headers = {
            "Cookie": f"sessionid={self.spec['sessions'][who]}; csrftoken={self.csrf}",
            "HX-Request": "true",
        }
        method, body = "GET", ""
        if data is not None:
            method, body = "POST", urlencode(data)
            headers["X-CSRFToken"] = self.csrf
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        status, payload, elapsed = self._send(
            method, f"/admin/pit/table/{NUMBER}/{path}", body, headers
        )
        if status >= 300 and not (status == 204 and act == "poll, nothing new"):
            raise RuntimeError(f"page {act}: HTTP {status} {payload[-300:]!r}")
        self.timings[("page", act)].append(elapsed)
        return payload.decode()

    def api(self, act: str, who: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
        headers = {
            "Authorization": f"Token {self.spec['tokens'][who]}",
            "Idempotency-Key": str(uuid.uuid4()),
            "Content-Type": "application/json",
        }
        status, payload, elapsed = self._send("POST", f"/api/v1/{path}", json.dumps(body), headers)
        if status >= 300:
            raise RuntimeError(f"API {act}: HTTP {status} {payload[:300]!r}")
        self.timings[("api", act)].append(elapsed)
        return dict(json.loads(payload))


def _open_coup() -> int:
    """The coup in progress at this bench's table (other benches leave theirs unfinished)."""
    from casino.floor.models import Coup

    in_progress = Coup.objects.filter(shift__table__number=NUMBER).exclude(
        phase__in=["settled", "cancelled"]
    )
    return int(in_progress.values_list("pk", flat=True).get())


def _coup_by_page(terminal: Terminal, talon: list[str], rng: random.Random) -> bool:
    """One coup through the page; True when its settlement ended the taille."""
    terminal.page("open a coup", "tailleur", "coup/", {})
    coup = _open_coup()
    for i in range(STAKES):
        terminal.page(
            "place a stake",
            "croupier",
            "stakes/",
            {
                "coup": coup,
                "ref": f"p{i}",
                "holder_kind": "seat",
                "holder": str(rng.randint(1, 9)),
                "chance": ("rouge", "noir", "couleur", "inverse")[i % 4],
                "amount": f"{rng.randint(5, 500)},00",
            },
        )
    terminal.page("close betting", "tailleur", "close-betting/", {"coup": coup})
    panel = ""
    while talon and "settle-confirm" not in panel:
        panel = terminal.page(
            "lay a card", "tailleur", "cards/", {"coup": coup, "code": talon.pop(0)}
        )
    digest = panel.split('data-digest="')[1].split('"')[0]
    terminal.page("poll, nothing new", "croupier", f"panel/?seen={digest}")
    terminal.page("settle", "croupier", "settle/", {"coup": coup, "spoken": ""})
    from casino.floor.models import CoupResult

    return bool(CoupResult.objects.get(coup_id=coup).last)


def _coup_by_api(terminal: Terminal, talon: list[str], rng: random.Random) -> bool:
    coup = terminal.api("open a coup", "tailleur", "coups", {"shift": terminal.spec["shift"]})
    for i in range(STAKES):
        terminal.api(
            "place a stake",
            "croupier",
            "stakes",
            {
                "coup": coup["id"],
                "ref": f"a{i}",
                "holder": str(rng.randint(1, 9)),
                "chance": ("rouge", "noir", "couleur", "inverse")[i % 4],
                "amount": rng.randint(5, 500) * 100,
            },
        )
    terminal.api("close betting", "tailleur", f"coups/{coup['id']}/close-betting", {})
    complete = False
    while talon and not complete:
        laid = terminal.api(
            "lay a card", "tailleur", f"coups/{coup['id']}/cards", {"code": talon.pop(0)}
        )
        complete = laid["coup_complete"]
    settled = terminal.api("settle", "croupier", f"coups/{coup['id']}/settle", {})
    return bool(settled["outcome"]["last"])


def _new_taille(spec: dict[str, Any], rng: random.Random) -> list[str]:
    """Shuffled and cut (the services, untimed); the order the tailleur will meet."""
    from casino.games.simulator import cut, shuffled
    from shoes import services as packs

    croupier, tailleur = spec["people"]["croupier"], spec["people"]["tailleur"]
    packs.pack_shuffle(actor=croupier, pack_id=spec["pack"])
    packs.pack_shuffle(actor=tailleur, pack_id=spec["pack"])
    packs.pack_cut(actor=tailleur, pack_id=spec["pack"], cut_by="bench")
    cards = shuffled(rng)
    return [str(c) for c in cut(cards, rng.randint(1, len(cards) - 1))]


def _pass_cards(spec: dict[str, Any], talon: list[str]) -> None:
    from shoes.services import cards_pass

    cards_pass(
        actor=spec["people"]["tailleur"], pack_id=spec["pack"], undealt=talon, method="scanned"
    )


def _percentile(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def run() -> None:
    from django.db import connections

    spec = _setup()
    rng = random.Random(1854)
    coups = 0
    with gunicorn(workers=1) as port:
        terminal = Terminal(port, spec)
        # The worker's first requests load templates and code: not what an act costs.
        for _ in range(3):
            terminal.page("warm-up", "tailleur", "")
            terminal._send(
                "GET",
                f"/api/v1/tables/{NUMBER}",
                "",
                {"Authorization": f"Token {spec['tokens']['tailleur']}"},
            )
        for _taille in range(TAILLES):
            talon = _new_taille(spec, rng)
            connections.close_all()
            by_page = True
            while True:
                play = _coup_by_page if by_page else _coup_by_api
                coups += 1
                if play(terminal, talon, rng):
                    break
                by_page = not by_page
            _pass_cards(spec, talon)
    rows = []
    for act in ACTS:
        page, api = terminal.timings[("page", act)], terminal.timings[("api", act)]
        rows.append(
            (
                f"{act} ({len(page)} + {len(api)})",
                f"page p50 {statistics.median(page) * 1000:.1f} ms, p99 "
                f"{_percentile(page, 99) * 1000:.1f} ms | API p50 "
                f"{statistics.median(api) * 1000:.1f} ms, p99 {_percentile(api, 99) * 1000:.1f} ms",
            )
        )
    polls = terminal.timings[("page", "poll, nothing new")]
    rows.append(
        (
            f"poll of the panel, nothing new ({len(polls)})",
            f"p50 {statistics.median(polls) * 1000:.1f} ms, p99 {_percentile(polls, 99) * 1000:.1f} ms",
        )
    )
    report(
        f"The table page beside the API: {coups} coups at one table, alternately through each, "
        f"over HTTP against gunicorn (1 sync worker), one request at a time",
        rows,
    )
