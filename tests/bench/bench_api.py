"""The table terminals' API under load: 20 terminals, one per table, each playing its sixain coup
after coup over real HTTP against gunicorn, timing every request."""

from __future__ import annotations

import http.client
import json
import random
import statistics
import threading
import time
import uuid
from collections import defaultdict
from typing import Any

from tests.bench.harness import gunicorn, report

TERMINALS = 20
WORKERS = 4  # gunicorn sync workers on this 2-core machine
STAKES = 10
DEADLINE_SECONDS = 60


def _setup() -> list[dict[str, Any]]:
    """Per table: its staff on duty with API tokens, and a sixain in play whose order the
    terminal knows (as the tailleur does once the cards are dealt)."""

    from casino import clock
    from casino.floor.models import PostedReglement
    from casino.floor.services import reglement_load_presets
    from casino.games.simulator import cut, shuffled
    from casino.people.roles import Role
    from casino.people.services import staff_create
    from casino.people.tokens import token_issue
    from shoes import services as packs
    from tests.bench.harness import bench_house, table_in_play

    directeur, commissaire = bench_house("api")

    def person(name: str, role: Role) -> Any:
        return staff_create(actor=directeur, username=f"api-{name}", full_name=name, roles=[role])

    caissier = person("caissier", Role.CAISSIER)
    reglement_load_presets(actor=commissaire, effective_from=clock.now().date())
    posted = PostedReglement.objects.get(name="trente-et-quarante-modern")
    rng = random.Random(2026)
    terminals = []
    for number in range(101, 101 + TERMINALS):
        tailleur = person(f"tailleur{number}", Role.TAILLEUR)
        croupier = person(f"croupier{number}", Role.CROUPIER)
        chef = person(f"chef{number}", Role.CHEF_DE_PARTIE)  # one table each
        shift, pack = table_in_play(
            directeur=directeur,
            commissaire=commissaire,
            caissier=caissier,
            staff={"tailleur": tailleur, "croupier": croupier, "chef": chef},
            posted=posted,
            number=number,
            seal=f"API-{number}",
        )
        packs.pack_shuffle(actor=croupier, pack_id=pack.pk)
        packs.pack_shuffle(actor=tailleur, pack_id=pack.pk)
        packs.pack_cut(actor=tailleur, pack_id=pack.pk, cut_by="bench")
        cards = shuffled(rng)
        terminals.append(
            {
                "shift": shift.pk,
                "pack": pack.pk,
                "tailleur": token_issue(user=tailleur)[1],
                "croupier": token_issue(user=croupier)[1],
                "talon": [str(c) for c in cut(cards, rng.randint(1, len(cards) - 1))],
            }
        )
    return terminals


class Terminal(threading.Thread):
    """One table's terminal: plays coups until its taille ends, timing each request by act."""

    def __init__(self, port: int, spec: dict[str, Any], timings: dict[str, list[float]]) -> None:
        super().__init__(daemon=True)
        self.port, self.spec, self.timings = port, spec, timings
        self.errors: list[str] = []
        self.coups = 0

    def post(self, act: str, token: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        headers = {
            "Authorization": f"Token {token}",
            "Idempotency-Key": str(uuid.uuid4()),
            "Content-Type": "application/json",
        }
        started = time.perf_counter()
        connection.request("POST", f"/api/v1/{path}", json.dumps(body), headers)
        response = connection.getresponse()
        payload = response.read()
        self.timings[act].append(time.perf_counter() - started)
        connection.close()
        if response.status >= 300:
            raise RuntimeError(f"{act}: HTTP {response.status} {payload[:200]!r}")
        return dict(json.loads(payload))

    def run(self) -> None:
        try:
            self.play()
        except Exception as exc:  # reported by the bench, not swallowed
            self.errors.append(repr(exc))

    def play(self) -> None:
        tailleur, croupier = self.spec["tailleur"], self.spec["croupier"]
        talon = list(self.spec["talon"])
        deadline = time.monotonic() + DEADLINE_SECONDS
        while talon and time.monotonic() < deadline:
            coup = self.post("open a coup", tailleur, "coups", {"shift": self.spec["shift"]})
            for i in range(STAKES):
                self.post(
                    "place a stake",
                    croupier,
                    "stakes",
                    {
                        "coup": coup["id"],
                        "ref": f"s{i}",
                        "holder": str(i % 9 + 1),
                        "chance": ("rouge", "noir", "couleur", "inverse")[i % 4],
                        "amount": 1000 + i,
                    },
                )
            self.post("close betting", tailleur, f"coups/{coup['id']}/close-betting", {})
            complete = False
            while talon and not complete:
                laid = self.post(
                    "lay a card", tailleur, f"coups/{coup['id']}/cards", {"code": talon.pop(0)}
                )
                complete = laid["coup_complete"]
            settled = self.post("settle", croupier, f"coups/{coup['id']}/settle", {})
            self.coups += 1
            if settled["outcome"]["last"]:
                # Les cartes passent: the tailleur scans the undealt cards of the talon.
                body = {"undealt": talon, "method": "scanned"}
                self.post("pass the cards", tailleur, f"packs/{self.spec['pack']}/pass", body)
                return


def _percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def run() -> None:
    from django.db import connections

    terminals = _setup()
    connections.close_all()
    with gunicorn(workers=WORKERS) as port:
        timings: dict[str, list[float]] = defaultdict(list)
        threads = [Terminal(port, spec, timings) for spec in terminals]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - started
    errors = [e for t in threads for e in t.errors]
    if errors:
        raise RuntimeError(f"{len(errors)} terminal(s) failed: {errors[:3]}")
    requests = sum(len(v) for v in timings.values())
    rows = []
    for act in ("lay a card", "settle", "place a stake", "open a coup"):
        values = timings[act]
        rows.append(
            (
                f"{act} ({len(values)} requests)",
                f"p50 {statistics.median(values) * 1000:.1f} ms, "
                f"p99 {_percentile(values, 99) * 1000:.1f} ms",
            )
        )
    rows.append(("requests/s (all acts)", f"{requests / elapsed:,.1f}"))
    rows.append(("coups settled", f"{sum(t.coups for t in threads)} in {elapsed:.1f} s"))
    report(
        f"API: {TERMINALS} concurrent terminals over HTTP, gunicorn {WORKERS} sync workers, "
        f"{STAKES} stakes a coup",
        rows,
    )
