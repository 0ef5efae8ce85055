"""A table terminal, as the fault suite drives one: every act over HTTP with its Idempotency-Key,
sent again under the same key while the answer is "unavailable" (503) or no answer at all (a
connection refused or cut), until it gets one. Every answer is kept, with its time, so that the
tests can say what the system answered during a fault and how soon it came back."""

from __future__ import annotations

import http.client
import json
import random
import socket
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from casino.games.simulator import shuffled

RETRY_PAUSE = 0.25  # the terminal's own pace; it never waits longer than Retry-After


@dataclass
class Answer:
    method: str
    path: str
    key: str | None
    sent: float  # time.monotonic() when sent
    seconds: float
    status: int  # 0: no answer (refused, cut, timed out)
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    error: str = ""

    @property
    def unavailable(self) -> bool:
        return self.status in (0, 503)


class Refused(AssertionError):
    """The system refused an act the terminal expected it to accept."""


class Terminal:
    def __init__(self, port: int, tokens: dict[str, str]) -> None:
        self.port = port
        self.tokens = tokens
        self.answers: list[Answer] = []
        self.lock = threading.Lock()

    def send(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None = None,
        *,
        who: str | None = None,
        key: str | None = None,
        timeout: float = 10,
        headers: dict[str, str] | None = None,
    ) -> Answer:
        """One request, one answer (or none)."""
        headers = {"Content-Type": "application/json", **(headers or {})}
        if who is not None:
            headers["Authorization"] = f"Token {self.tokens[who]}"
        if key is not None:
            headers["Idempotency-Key"] = key
        payload = json.dumps(body) if body is not None else None
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        sent = time.monotonic()
        try:
            connection.request(method, path, payload, headers)
            response = connection.getresponse()
            raw = response.read()
            answer = Answer(
                method,
                path,
                key,
                sent,
                time.monotonic() - sent,
                response.status,
                {k.lower(): v for k, v in response.getheaders()},
            )
            try:
                answer.body = json.loads(raw) if raw else None
            except ValueError:
                answer.body = raw.decode(errors="replace")
        except (OSError, http.client.HTTPException) as exc:
            answer = Answer(method, path, key, sent, time.monotonic() - sent, 0, error=repr(exc))
        finally:
            connection.close()
        with self.lock:
            self.answers.append(answer)
        return answer

    def act(
        self, who: str, path: str, body: dict[str, Any] | None = None, *, patience: float = 90
    ) -> Any:
        """POST an act under a new key, sent again under that key until answered; the body of
        the answer (2xx), or ``Refused``."""
        key = str(uuid.uuid4())
        deadline = time.monotonic() + patience
        while True:
            answer = self.send("POST", f"/api/v1/{path}", body or {}, who=who, key=key)
            if not answer.unavailable:
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"{path}: no answer in {patience} s (last: {answer})")
            retry_after = float(answer.headers.get("retry-after", RETRY_PAUSE))
            time.sleep(min(retry_after, RETRY_PAUSE))
        if answer.status >= 300:
            raise Refused(f"POST {path} {body}: {answer.status} {answer.body}")
        return answer.body

    def get(self, who: str, path: str, *, patience: float = 90) -> Any:
        deadline = time.monotonic() + patience
        while True:
            answer = self.send("GET", f"/api/v1/{path}", who=who)
            if not answer.unavailable or time.monotonic() > deadline:
                break
            time.sleep(RETRY_PAUSE)
        if answer.status != 200:
            raise Refused(f"GET {path}: {answer.status} {answer.body}")
        return answer.body


class PlayTable:
    """One play table of the seed: a terminal opens a séance there, plays coups, closes it, and
    remembers what the system acknowledged, to be compared with what the database holds."""

    def __init__(self, terminal: Terminal, spec: dict[str, Any], *, seed: int) -> None:
        self.terminal = terminal
        self.spec = spec
        self.table: int = spec["table"]
        self.chef, self.tailleur, self.croupier = spec["chef"], spec["tailleur"], spec["croupier"]
        self.talon = [str(card) for card in shuffled(random.Random(seed))]
        self.shift: int | None = None
        self.coups: list[int] = []
        self.stakes: list[tuple[int, str]] = []  # (coup, ref) acknowledged
        self.cards = 0  # laid, acknowledged
        self.last = False

    def count(self, moment: str, chips: dict[str, int]) -> int:
        count = self.terminal.act(
            self.croupier, "counts", {"table": self.table, "moment": moment, "chips": chips}
        )
        self.terminal.act("directeur", f"counts/{count['id']}/countersign")
        return int(count["id"])

    def open(self) -> None:
        count = self.count("opening", {"10000": 50})
        shift = self.terminal.act(
            self.chef,
            "shifts",
            {
                "table": self.table,
                "count": count,
                "tailleur": self.tailleur,
                "croupiers": [self.croupier],
            },
        )
        self.shift = int(shift["id"])
        pack = self.spec["pack"]
        self.terminal.act(self.chef, f"packs/{pack}/open", {"shift": self.shift})
        self.terminal.act(self.croupier, f"packs/{pack}/shuffles")
        self.terminal.act(self.tailleur, f"packs/{pack}/shuffles")
        self.terminal.act(self.tailleur, f"packs/{pack}/cut", {"cut_by": "M. Dupont"})

    def coup(self, stakes: int = 3) -> None:
        coup = int(self.terminal.act(self.tailleur, "coups", {"shift": self.shift})["id"])
        self.coups.append(coup)
        for i in range(stakes):
            ref = f"s{i}"
            self.terminal.act(
                self.croupier,
                "stakes",
                {
                    "coup": coup,
                    "ref": ref,
                    "holder": str(i % 9 + 1),
                    "chance": ("rouge", "noir", "couleur", "inverse")[i % 4],
                    "amount": 1000 + 100 * i,
                },
            )
            self.stakes.append((coup, ref))
        self.terminal.act(self.tailleur, f"coups/{coup}/close-betting")
        complete = False
        while not complete:
            laid = self.terminal.act(
                self.tailleur, f"coups/{coup}/cards", {"code": self.talon.pop(0)}
            )
            self.cards += 1
            complete = bool(laid["coup_complete"])
        settled = self.terminal.act(self.croupier, f"coups/{coup}/settle")
        self.last = bool(settled["outcome"]["last"])

    def close(self) -> dict[str, Any]:
        """The closing count is what the rundown expects (no variance), then the close."""
        shift = self.terminal.get(self.chef, f"shifts/{self.shift}")
        count = self.count("closing", {"1": int(shift["rundown"]["expected"])})
        closed = self.terminal.act(self.chef, f"shifts/{self.shift}/close", {"count": count})
        return dict(closed)


def disconnecting_post(
    port: int, path: str, body: dict[str, Any], *, token: str, key: str, cut: str
) -> None:
    """Send a POST and hang up: ``cut="after"`` once the whole request is sent, without reading
    the answer; ``cut="during"`` halfway through the body (the server never gets a request)."""
    payload = json.dumps(body).encode()
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Authorization: Token {token}\r\nIdempotency-Key: {key}\r\n"
        f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
        if cut == "after":
            connection.sendall(head + payload)
        else:
            connection.sendall(head + payload[: len(payload) // 2])
        # Closing with unread data would make the kernel answer with a reset; either way the
        # client is gone before the server answers.
