"""A table terminal written from the published schema alone (``/api/schema/``): it plays a whole
séance of Trente-et-Quarante over the API, as the pit does it, with the Python standard library.

    python examples/terminal.py --url http://127.0.0.1:8000 --logins var/demo-logins.json

``--logins`` is a JSON file ``{"username": {"password": …, "totp_secret": base32 | null}}`` (the
demo writes one for its people). Each person acts in their own session: the cashier receives the
sealed pack, the commissioner verifies its seal, the croupier counts the float and the director
countersigns it, the chef de partie opens the séance and the pack, the croupier and the tailleur
shuffle, the tailleur has it cut and deals, the croupier places the stakes and settles; a dispute
is raised and ruled; the séance closes on a closing count equal to the rundown.

The terminal's own shoe is a shuffled sixain (``--seed``): it lays the cards in that order, as a
card-reading shoe would report them. Every write carries an ``Idempotency-Key``; a refusal is
``{code, message, where}`` and stops the run with that message.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import json
import random
import struct
import sys
import time
import urllib.error
import urllib.request
import uuid
from typing import Any

RANKS = "A23456789TJQK"
SUITS = "SHDC"
CHANCES = ("rouge", "noir", "couleur", "inverse")


class Refused(Exception):
    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(
            f"{status} {body.get('code')}: {body.get('message')} ({body.get('where')})"
        )
        self.status = status
        self.body = body


def totp(secret: str, at: float | None = None) -> str:
    """RFC 6238: the 6-digit code of a base32 secret, 30-second steps, HMAC-SHA1."""
    key = base64.b32decode(secret + "=" * (-len(secret) % 8))
    step = int((time.time() if at is None else at) // 30)
    digest = hmac.new(key, struct.pack(">Q", step), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    number = struct.unpack(">I", digest[offset : offset + 4])[0] & 0x7FFFFFFF
    return f"{number % 1_000_000:06d}"


class Session:
    """One person's token, and every request made with it."""

    def __init__(self, url: str, username: str, token: str) -> None:
        self.url, self.username, self.token = url.rstrip("/"), username, token

    def get(self, path: str) -> Any:
        return request(self.url, "GET", path, token=self.token)

    def post(self, path: str, body: dict[str, Any] | None = None) -> Any:
        # One key per act: a retry after a lost answer gets the first answer, never a second act.
        key = str(uuid.uuid4())
        for attempt in range(3):
            try:
                return request(self.url, "POST", path, body or {}, token=self.token, key=key)
            except OSError:  # the connection dropped: the same key, again
                if attempt == 2:
                    raise
                time.sleep(1)
        raise AssertionError("unreachable")


def request(
    url: str, method: str, path: str, body: Any = None, *, token: str = "", key: str = ""
) -> Any:
    headers = {"Accept": "application/json", "Accept-Language": "en"}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    if token:
        headers["Authorization"] = f"Token {token}"
    if key:
        headers["Idempotency-Key"] = key
    call = urllib.request.Request(f"{url}/api/v1{path}", data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(call, timeout=30) as answer:
            raw = answer.read()
            return json.loads(raw) if raw else None
    except urllib.error.HTTPError as error:
        refusal = json.loads(error.read() or b"{}")
        raise Refused(error.code, refusal) from None


def login(url: str, username: str, login: dict[str, Any]) -> Session:
    """``POST /token``: the password, and the TOTP code when the person's roles require one. A
    code is accepted once: if this step's was spent, wait for the next one."""
    for _ in range(3):
        body = {"username": username, "password": login["password"]}
        if login.get("totp_secret"):
            body["otp"] = totp(login["totp_secret"])
        try:
            issued = request(url, "POST", "/token", body)
            return Session(url, username, issued["token"])
        except Refused as refused:
            if refused.body.get("where") != "otp":
                raise
            time.sleep(30 - time.time() % 30 + 0.5)
    raise SystemExit(f"{username}: no TOTP code accepted")


def chips_for(total: int) -> dict[str, int]:
    """The float in chips of 100.00, 25.00, 5.00 and 1.00 (minor units)."""
    chips = {}
    for denomination in (10000, 2500, 500, 100):
        chips[str(denomination)], total = divmod(total, denomination)
    return {k: v for k, v in chips.items() if v}


def pages(session: Session, path: str) -> list[Any]:
    """Every item of a collection, page after page (``next`` is the following page's link)."""
    items, link = [], path
    while link:
        page = session.get(link)
        items += page["results"]
        link = page["next"].split("/api/v1", 1)[1] if page["next"] else None
    return items


def play(
    url: str,
    logins: dict[str, dict[str, Any]],
    *,
    coups: int,
    seed: int,
    table: int | None = None,
    crew: str = "",
) -> dict[str, Any]:
    """Play a séance; return what happened (the séance, its coups, the dispute, the rundown).
    ``crew``: the suffix of the table staff's logins (``2``: chef2, tailleur2, croupier2)."""
    rng = random.Random(seed)
    names = {
        job: job + crew if job in ("chef", "tailleur", "croupier") else job
        for job in ("caissier", "commissaire", "croupier", "directeur", "chef", "tailleur")
    }
    who = {job: login(url, name, logins[name]) for job, name in names.items()}
    cashier, commissioner, croupier = who["caissier"], who["commissaire"], who["croupier"]
    director, chef, tailleur = who["directeur"], who["chef"], who["tailleur"]

    # A table with no séance open.
    if table is None:
        free = [
            t
            for t in pages(chef, "/tables?game=trente-et-quarante")
            if chef.get(f"/tables/{t['number']}")["seance"] is None
        ]
        if not free:
            raise SystemExit("no free Trente-et-Quarante table")
        table = free[0]["number"]
    state = chef.get(f"/tables/{table}")
    rules = chef.get(f"/reglements/{state['reglement']}")["parameters"]

    # The float, counted and countersigned; the séance opened with its staff on duty.
    float_total = 1_000_000
    count = croupier.post(
        "/counts", {"table": table, "moment": "opening", "chips": chips_for(float_total)}
    )
    director.post(f"/counts/{count['id']}/countersign")
    seance = chef.post(
        "/shifts",
        {
            "table": table,
            "count": count["id"],
            "tailleur": tailleur.username,
            "croupiers": [croupier.username],
        },
    )
    print(f"séance {seance['id']} open at table {table}")

    # A sealed sixain from the cage, its seal verified by the commissioner, opened, shuffled, cut.
    seal = f"EX-{uuid.uuid4().hex[:8].upper()}"
    pack = cashier.post(
        "/packs",
        {
            "kind": "sixain",
            "maker": "Grimaud",
            "maker_pack_numbers": "G-1..6",
            "seal_number": seal,
            "sealing_authority": "Préfecture de police",
            "store_location": "coffre A",
        },
    )
    cashier.post(f"/packs/{pack['id']}/store")
    commissioner.post(
        f"/packs/{pack['id']}/verification", {"seal_number_read": seal, "verdict": "intact"}
    )
    chef.post(f"/packs/{pack['id']}/open", {"shift": seance["id"]})
    croupier.post(f"/packs/{pack['id']}/shuffles", {})
    tailleur.post(f"/packs/{pack['id']}/shuffles", {})
    shoe = [rank + suit for rank in RANKS for suit in SUITS for _ in range(6)]
    rng.shuffle(shoe)
    burn = [shoe.pop(0) for _ in range(rules.get("burn", 0))]
    tailleur.post(f"/packs/{pack['id']}/cut", {"cut_by": "M. Dupont", "burn": burn})

    # The coups.
    played = []
    low, high = state["min_stake"], min(state["max_stake"], 50 * state["min_stake"])
    for _ in range(coups):
        coup = tailleur.post("/coups", {"shift": seance["id"]})
        for seat in range(1, rng.randint(1, 5) + 1):
            croupier.post(
                "/stakes",
                {
                    "coup": coup["id"],
                    "ref": f"seat-{seat}",
                    "holder": str(seat),
                    "chance": rng.choice(CHANCES),
                    "amount": rng.randrange(low, high + 1, low),
                },
            )
        tailleur.post(f"/coups/{coup['id']}/close-betting")
        while not tailleur.post(f"/coups/{coup['id']}/cards", {"code": shoe.pop(0)})[
            "coup_complete"
        ]:
            pass
        settled = croupier.post(f"/coups/{coup['id']}/settle", {})
        outcome = settled["outcome"]
        print(
            f"coup {settled['number']}: noir {outcome['noir']['total']}, rouge "
            f"{outcome['rouge']['total']}: {outcome['announcement']['result']}"
        )
        played.append(settled)
        if outcome["last"]:
            break

    # A patron contests the first coup; the chef de partie rules by the engine's recomputation.
    dispute = croupier.post(
        "/disputes",
        {
            "subject": "coup",
            "subject_id": played[0]["id"],
            "claim": "my stake was on noir",
            "on_behalf_of": "M. Martin",
        },
    )
    chef.post(f"/disputes/{dispute['id']}/review", {"note": "taken up"})
    article = chef.get(f"/reglements/{state['reglement']}")["articles"][0]["number"]
    ruled = chef.post(
        f"/disputes/{dispute['id']}/decide",
        {"articles": [article], "reasoning": "the record stands", "findings": []},
    )

    # The close, on a count of what the rundown expects.
    expected = chef.get(f"/shifts/{seance['id']}")["rundown"]["expected"]
    closing = croupier.post(
        "/counts", {"table": table, "moment": "closing", "chips": chips_for(expected)}
    )
    director.post(f"/counts/{closing['id']}/countersign")
    closed = chef.post(f"/shifts/{seance['id']}/close", {"count": closing["id"]})
    print(f"séance {seance['id']} closed: {closed['rundown']}")
    return {"seance": closed, "coups": played, "dispute": ruled, "pack": pack["id"]}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--logins", default="var/demo-logins.json")
    parser.add_argument("--table", type=int)
    parser.add_argument("--coups", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1854)
    parser.add_argument(
        "--crew", default="", help="suffix of the table staff's logins: 2 for chef2, tailleur2…"
    )
    args = parser.parse_args(argv)
    with open(args.logins) as file:
        logins = json.load(file)
    try:
        play(args.url, logins, coups=args.coups, seed=args.seed, table=args.table, crew=args.crew)
    except Refused as refused:
        print(f"refused: {refused}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
