"""The table terminals' API under load, over real HTTP against gunicorn, two ways:

- **open loop**: 100 tables each sending its acts when the house's pace says a terminal sends
  them (``casino/simulation/pace.py``, the pace the demo's day is recorded at), whatever the
  server's answers do, then the same tables at five times that pace; each request's latency is
  counted from the moment it was due, so a server that falls behind is charged for the wait it
  causes (no coordinated omission);
- **closed loop**: 20 terminals playing coup after coup as fast as the server answers: the
  saturation rate of the machine.

Every answer carries the server's own CPU for it (``Server-Timing``, casino/api/timing.py, on for
this server only): the CPU each act costs, whatever else the shared machine is doing.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import math
import os
import random
import statistics
import threading
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, NamedTuple

from tests.bench.harness import gunicorn, report

WORKERS = 4  # gunicorn sync workers on this 2-core machine

# Closed loop: as fast as the server answers.
TERMINALS = 20
STAKES = 10
DEADLINE_SECONDS = 60

# Open loop: the room's cadence. A table plays a coup about every two minutes, thirty an hour
# (casino/simulation/pace.py, "a coup takes about two minutes"; day.py, "about thirty an hour"):
# the tailleur opens it, the croupier records 0 to 5 stakes (the simulator's séance,
# casino/simulation/seance.py, stakes_per_coup=5 drawn as randint(0, 5)), the tailleur closes the
# betting and lays the cards one by one (some ten and a half a coup, as the engine deals a
# sixain), the croupier settles; each act after the pause pace.py gives it, drawn in its range as
# the simulator draws it. ``cadence()`` works the requests per second out of these figures.
TABLES = 100
STAKES_A_COUP = 5
FASTER = 5  # the second rate: every pause a fifth as long, 500 tables' worth of requests
# The tables sit down one by one over a coup's time at the room's pace, unmeasured, so that when
# the measure begins they are spread over their coups as a room at work is (sat down at once,
# they would all open, stake and settle together for coups on end).
ONE_X_SECONDS = 180.0  # measured at the room's pace (some 150 coups, 2,400 requests)
FASTER_SECONDS = 60.0  # measured at five times it (some 250 coups, 4,000 requests)
# A server that cannot keep up builds a backlog at each table; what is still unsent this long
# after the last act was due is given up, counted, and its wait so far taken as its latency
# (a lower bound), so that the bench ends.
DRAIN_SECONDS = 30.0

ACTS = ("open a coup", "place a stake", "close betting", "lay a card", "settle", "pass the cards")


def _setup(numbers: range, stakes_seed: int) -> list[dict[str, Any]]:
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

    from django.contrib.auth.models import User

    caissier = User.objects.filter(username="api-caissier").first() or person(
        "caissier", Role.CAISSIER
    )
    if not PostedReglement.objects.filter(name="trente-et-quarante-modern").exists():
        reglement_load_presets(actor=commissaire, effective_from=clock.now().date())
    posted = PostedReglement.objects.get(name="trente-et-quarante-modern")
    rng = random.Random(stakes_seed)
    terminals = []
    for number in numbers:
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


class Answer(NamedTuple):
    status: int
    body: dict[str, Any]
    cpu_ms: float | None  # the server's CPU for the request (Server-Timing), when it said
    app_ms: float | None  # the server's wall time for it, from its middleware to its answer
    db_ms: float | None  # of which waiting for its SQL statements
    queries: int | None  # how many statements


def _server_timing(header: str) -> tuple[float | None, float | None, float | None, int | None]:
    """CPU, wall and database milliseconds, and statements, from casino/api/timing.py's header
    (``cpu;dur=4.21, db;dur=3.10;desc="12 queries", app;dur=9.87``); None when not there."""
    metrics: dict[str, dict[str, str]] = {}
    for metric in filter(None, (part.strip() for part in header.split(","))):
        name, *params = metric.split(";")
        metrics[name] = dict(p.split("=", 1) for p in params)
    dur = {name: float(m["dur"]) for name, m in metrics.items() if "dur" in m}
    desc = metrics.get("db", {}).get("desc", "").strip('"').split()
    return dur.get("cpu"), dur.get("app"), dur.get("db"), int(desc[0]) if desc else None


def _post(port: int, token: str, path: str, body: dict[str, Any]) -> Answer:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        headers = {
            "Authorization": f"Token {token}",
            "Idempotency-Key": str(uuid.uuid4()),
            "Content-Type": "application/json",
        }
        connection.request("POST", f"/api/v1/{path}", json.dumps(body), headers)
        response = connection.getresponse()
        payload = response.read()
        timing = _server_timing(response.getheader("Server-Timing", ""))
        try:
            parsed = dict(json.loads(payload))
        except ValueError:
            parsed = {"unparsed": payload[:200].decode(errors="replace")}
        return Answer(response.status, parsed, *timing)
    finally:
        connection.close()


def _stake(i: int) -> dict[str, Any]:
    return {
        "ref": f"s{i}",
        "holder": str(i % 9 + 1),
        "chance": ("rouge", "noir", "couleur", "inverse")[i % 4],
        "amount": 1000 + i,
    }


# --- Closed loop -------------------------------------------------------------------------------


class Terminal(threading.Thread):
    """One table's terminal: plays coups until its taille ends, each request as soon as the last
    is answered, timing each by act."""

    def __init__(
        self,
        port: int,
        spec: dict[str, Any],
        timings: dict[str, list[float]],
        server: dict[str, list[Answer]],
    ) -> None:
        super().__init__(daemon=True)
        self.port, self.spec, self.timings, self.server = port, spec, timings, server
        self.errors: list[str] = []
        self.coups = 0

    def post(self, act: str, token: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
        started = time.perf_counter()
        answer = _post(self.port, token, path, body)
        self.timings[act].append(time.perf_counter() - started)
        self.server[act].append(answer)
        if answer.status >= 300:
            raise RuntimeError(f"{act}: HTTP {answer.status} {answer.body}")
        return answer.body

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
                self.post("place a stake", croupier, "stakes", {"coup": coup["id"], **_stake(i)})
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


# --- Open loop ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cadence:
    """The room's pace worked out from pace.py's ranges (their middles), the stakes a coup and
    the cards a coup the engine deals."""

    seconds_a_coup: float
    requests_a_coup: float

    def per_second(self, tables: int) -> float:
        return tables * self.requests_a_coup / self.seconds_a_coup


def cadence() -> Cadence:
    from casino.games.reglement import Reglement
    from casino.games.simulator import simulate_taille
    from casino.simulation import pace

    def middle(takes: pace.Takes) -> float:
        return (takes.least + takes.most) / 2

    tailles = [simulate_taille(seed=seed, reglement=Reglement()).taille for seed in range(40)]
    coups = [c for taille in tailles for c in taille.coups]
    cards = statistics.mean(len(c.cards) for c in coups)
    stakes = STAKES_A_COUP / 2  # randint(0, 5)
    seconds = (
        middle(pace.BETWEEN_COUPS)
        + middle(pace.FAITES_VOS_JEUX)
        + stakes * middle(pace.STAKE)
        + middle(pace.LE_JEU_EST_FAIT)
        + cards * middle(pace.CARD)
        + middle(pace.SETTLEMENT)
    )
    # open, the stakes, close the betting, the cards, settle (and the cards passed once a taille)
    return Cadence(seconds, 1 + stakes + 1 + cards + 1 + len(tailles) / len(coups))


class Schedule:
    """When the acts are due: the house's pace, sped up by a factor that changes at given times
    (seconds from the start). A pause that spans a change is spent at each pace in turn, so the
    room is at its new rate at once."""

    def __init__(self, phases: list[tuple[float, float, float]]) -> None:
        self.phases = phases  # (from, until, speed), back to back; nothing is due after the last

    @property
    def end(self) -> float:
        return self.phases[-1][1]

    def after(self, moment: float, seconds: float) -> float:
        """The moment a pause of ``seconds`` (at the house's pace) begun at ``moment`` ends."""
        for start, until, speed in self.phases:
            if moment >= until:
                continue
            moment = max(moment, start)
            room = (until - moment) * speed
            if seconds <= room:
                return moment + seconds / speed
            seconds -= room
            moment = until
        return math.inf


class Sample(NamedTuple):
    act: str
    due: float  # seconds from the start
    latency: float  # from due to answered (to given up, if unsent)
    lag: float  # the client's own delay: from when it could send (due, and the last answered) to sent
    answered: float
    server: Answer | None  # what the server said of it (None: unsent or no answer)
    error: str | None
    sent: bool = True


class Closed(Exception):
    """The table stops: its next act would be due after the run, it is still unsent long after
    the run (DRAIN_SECONDS), or the server did not do the last (its coup cannot go on)."""


class Table(threading.Thread):
    """One table's terminal in the open loop: each act is due at its time on the schedule,
    whatever the server did with the last. A table's acts keep their order (a stake cannot go
    before its coup is open, and it needs the coup's id from that answer): an act due while the
    last is still unanswered goes as soon as the answer comes, its latency still counted from
    when it was due, since that wait is the server's doing. The schedule itself never waits for
    the server: the pauses run from when the last act was due, not from when it was answered."""

    def __init__(
        self,
        port: int,
        spec: dict[str, Any],
        schedule: Schedule,
        *,
        start: float,
        warm: float,
        seed: int,
    ) -> None:
        super().__init__(daemon=True)
        self.port, self.spec, self.schedule, self.start_at = port, spec, schedule, start
        self.warm = warm
        self.rng = random.Random(seed)
        self.samples: list[Sample] = []
        self.due = 0.0
        self.answered = 0.0

    def pause(self, takes: Any) -> None:
        self.due = self.schedule.after(self.due, self.rng.uniform(*takes))

    def send(self, act: str, token: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
        if self.due >= self.schedule.end:
            raise Closed
        now = time.perf_counter() - self.start_at
        if now < self.due:
            time.sleep(self.due - now)
        elif now > self.schedule.end + DRAIN_SECONDS:
            self.samples.append(Sample(act, self.due, now - self.due, 0.0, now, None, None, False))
            raise Closed
        sent = time.perf_counter() - self.start_at
        lag = sent - max(self.due, self.answered)
        error: str | None = None
        try:
            answer = _post(self.port, token, path, body)
            if answer.status >= 300:
                error = f"HTTP {answer.status} {answer.body}"
        except OSError as exc:
            answer, error = Answer(0, {}, None, None, None, None), repr(exc)
        self.answered = time.perf_counter() - self.start_at
        self.samples.append(
            Sample(
                act,
                self.due,
                self.answered - self.due,
                lag,
                self.answered,
                answer,
                error,
            )
        )
        if error:
            raise Closed  # the table's coup cannot go on; the error is counted
        return answer.body

    def run(self) -> None:
        with contextlib.suppress(Closed):
            self.play()

    def play(self) -> None:
        from casino.simulation import pace

        tailleur, croupier = self.spec["tailleur"], self.spec["croupier"]
        talon = list(self.spec["talon"])
        self.due = self.rng.uniform(0, self.warm)  # the table sits down during the warm-up
        while True:
            coup = self.send("open a coup", tailleur, "coups", {"shift": self.spec["shift"]})
            self.pause(pace.FAITES_VOS_JEUX)
            for i in range(self.rng.randint(0, STAKES_A_COUP)):
                self.send("place a stake", croupier, "stakes", {"coup": coup["id"], **_stake(i)})
                self.pause(pace.STAKE)
            self.pause(pace.LE_JEU_EST_FAIT)
            self.send("close betting", tailleur, f"coups/{coup['id']}/close-betting", {})
            complete = False
            while talon and not complete:
                self.pause(pace.CARD)
                path = f"coups/{coup['id']}/cards"
                laid = self.send("lay a card", tailleur, path, {"code": talon.pop(0)})
                complete = laid["coup_complete"]
            self.pause(pace.SETTLEMENT)
            settled = self.send("settle", croupier, f"coups/{coup['id']}/settle", {})
            if settled["outcome"]["last"]:
                self.pause(pace.TALON_COUNT)
                body = {"undealt": talon, "method": "scanned"}
                self.send("pass the cards", tailleur, f"packs/{self.spec['pack']}/pass", body)
                return  # no new sixain in this bench: the table stops
            self.pause(pace.BETWEEN_COUPS)


def open_loop(
    port: int, terminals: list[dict[str, Any]], *, warm: float, one_x: float, faster: float
) -> list[Sample]:
    """The tables play at the house's pace, sitting down over the first ``warm`` seconds, for
    ``one_x`` seconds more, then ``faster`` seconds at FASTER times that pace. Every request's
    sample, by the moment it was due."""
    schedule = Schedule([(0.0, warm + one_x, 1), (warm + one_x, warm + one_x + faster, FASTER)])
    start = time.perf_counter() + 0.5  # the threads started before the first act is due
    tables = [
        Table(port, spec, schedule, start=start, warm=warm, seed=n)
        for n, spec in enumerate(terminals)
    ]
    for table in tables:
        table.start()
    for table in tables:
        table.join()
    return [s for t in tables for s in t.samples]


# --- Figures ---------------------------------------------------------------------------------------


def _percentile(values: list[float], q: int) -> float:
    if len(values) < 2:
        return values[0] if values else math.nan
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def _ms(values: list[float], scale: float = 1000) -> str:
    return f"p50 {statistics.median(values) * scale:.1f} ms, p99 {_percentile(values, 99) * scale:.1f} ms"


def _act_row(
    act: str, latencies: list[float], server: list[Any], *, at_least: bool = False
) -> tuple[str, str]:
    """An act's line: its latency as the terminal saw it, then what the server said of the
    answers ``server`` (its own wall time, of which waiting for SQL and how many statements,
    and its CPU: medians, and the CPU's 99th percentile)."""

    def median(field: str) -> float:
        values = [getattr(a, field) for a in server if getattr(a, field) is not None]
        return statistics.median(values) if values else math.nan

    cpu = [a.cpu_ms for a in server if a.cpu_ms is not None]
    return (
        f"  {act} ({len(latencies)})",
        ("at least " if at_least else "")
        + f"{_ms(latencies)}; in the server {median('app_ms'):.1f} ms"
        + f" (SQL {median('db_ms'):.1f} ms, {median('queries'):.0f} statements),"
        + f" CPU {_ms(cpu, 1)}",
    )


def _phase_rows(
    samples: list[Sample], since: float, until: float, offered: float
) -> list[tuple[str, str]]:
    """The figures of the requests due in [since, until)."""
    due = [s for s in samples if since <= s.due < until]
    sent = [s for s in due if s.sent]
    rows = []
    for act in ACTS:
        of_act = [s for s in due if s.act == act and s.error is None]
        if not of_act:
            continue
        unsent = sum(1 for s in of_act if not s.sent)
        rows.append(
            _act_row(
                act,
                [s.latency for s in of_act],
                [s.server for s in of_act if s.server],
                at_least=unsent > 0,
            )
        )
    seconds = until - since
    answered = sum(1 for s in samples if s.sent and since <= s.answered < until)
    errors = [s for s in sent if s.error]
    lags = [s.lag for s in sent]
    busy = sum(s.server.cpu_ms or 0 for s in sent if s.server) / 1000 / seconds
    return [
        *rows,
        (
            "  requests/s: due, answered",
            f"{len(due) / seconds:.1f}, {answered / seconds:.1f} (the cadence: {offered:.1f})",
        ),
        ("  web workers' CPU (Server-Timing)", f"{busy:.2f} cores of {os.cpu_count()}"),
        (
            # A table stops at its first act given up, so its later ones are not counted above.
            "  errors; given up unsent (the table stops)",
            f"{len(errors)}; {len(due) - len(sent)}"
            + (f" ({errors[0].act}: {errors[0].error})" if errors else ""),
        ),
        (
            "  client's own lag before sending",
            f"{_ms(lags)}, max {max(lags) * 1000:.1f} ms" if lags else "-",
        ),
    ]


def run() -> None:
    from django.db import connections

    pace = cadence()
    started = time.perf_counter()
    # Numbered clear of the other benches' tables (Pharao 101-104, cercle 201, broker 301-, pit 401,
    # reports 500-, restart 701-720).
    closed = _setup(range(1101, 1101 + TERMINALS), stakes_seed=2026)
    tables = _setup(range(1201, 1201 + TABLES), stakes_seed=2027)
    setup_seconds = time.perf_counter() - started
    connections.close_all()
    load = [os.getloadavg()[0]]
    warm = pace.seconds_a_coup
    with gunicorn(workers=WORKERS, CASINO_SERVER_TIMING="1") as port:
        samples = open_loop(port, tables, warm=warm, one_x=ONE_X_SECONDS, faster=FASTER_SECONDS)
        load.append(os.getloadavg()[0])

        timings: dict[str, list[float]] = defaultdict(list)
        server: dict[str, list[Answer]] = defaultdict(list)
        threads = [Terminal(port, spec, timings, server) for spec in closed]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - started
        load.append(os.getloadavg()[0])
    errors = [e for t in threads for e in t.errors]
    if errors:
        raise RuntimeError(f"{len(errors)} terminal(s) failed: {errors[:3]}")

    rows = [
        (
            "the room's cadence (pace.py)",
            f"a coup every {pace.seconds_a_coup:.0f} s ({3600 / pace.seconds_a_coup:.0f} an hour), "
            f"{pace.requests_a_coup:.1f} requests a coup: {pace.per_second(1):.3f} requests/s a table",
        ),
        (
            f"{TABLES} tables' cadence, for {ONE_X_SECONDS:.0f} s",
            "latency from when each act was due",
        ),
        *_phase_rows(samples, warm, warm + ONE_X_SECONDS, pace.per_second(TABLES)),
        (f"{FASTER}× that, for {FASTER_SECONDS:.0f} s", ""),
        *_phase_rows(
            samples,
            warm + ONE_X_SECONDS,
            warm + ONE_X_SECONDS + FASTER_SECONDS,
            pace.per_second(TABLES) * FASTER,
        ),
        (f"closed loop, {TERMINALS} terminals, {STAKES} stakes a coup", "as fast as answered"),
    ]
    requests = sum(len(v) for v in timings.values())
    for act in ACTS:
        if timings[act]:
            rows.append(_act_row(act, timings[act], server[act]))
    rows += [
        ("  requests/s (saturation)", f"{requests / elapsed:,.1f}"),
        (
            "  web workers' CPU (Server-Timing)",
            f"{sum(a.cpu_ms or 0 for v in server.values() for a in v) / 1000 / elapsed:.2f} cores"
            f" of {os.cpu_count()}",
        ),
        ("  coups settled", f"{sum(t.coups for t in threads)} in {elapsed:.1f} s"),
        ("setup (tables in play)", f"{setup_seconds:.0f} s"),
        (
            "machine load (1-min average, 2 cores)",
            " → ".join(f"{x:.1f}" for x in load) + " (start, after open loop, after closed)",
        ),
    ]
    report(
        f"API over HTTP, gunicorn {WORKERS} sync workers: open loop at the room's cadence, closed loop",
        rows,
    )
