"""Which demo login does which job, and what to try first: printed by ``make run`` and
``make demo`` from the logins ``demo_seed`` kept in var/demo-logins.json.

No Django here: ``casino.runtime`` prints it, and it decides the settings Django will read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple


class Job(NamedTuple):
    job: str
    login: str
    path: str  # where to go first, under the web address
    first: str  # what to try there


JOBS = (
    Job("tailleur", "tailleur", "/admin/pit/table/1/", "table 1 is open, the cards cut: a coup"),
    Job("croupier", "croupier", "/admin/pit/table/1/", "the stakes and the settlement"),
    Job("chef de partie", "chef", "/admin/pit/", "his séance at table 1: a fill, the close"),
    Job(
        "croupier (cercle)",
        "croupier3",
        "/admin/pit/table/5/",
        "the cercle: four players seated, a sealed pack open: the first deal",
    ),
    Job("caissier", "caissier", "/admin/pit/cage/", "receive a delivery, sign fills"),
    Job("commissaire", "commissaire", "/admin/pit/cards/", "the sixains, the register page"),
    Job("directeur", "directeur", "/admin/reports/report/", "yesterday's register: sign off"),
    Job("comité", "comite", "/admin/reports/report/", "the register's second signature"),
    Job(
        "audit interne",
        "auditeur",
        "/admin/audit/anomaly/",
        "the queue: a lucky seat, a slugged sixain, a croupier named",
    ),
    Job("inspecteur", "inspecteur", "/admin/reports/report/", "the signed reports, the export"),
    Job("maintenance", "admin", "/admin/", "superuser: no role, no floor act"),
)


def render(logins: dict[str, dict[str, str | None]], web: str) -> str:
    """The table, one job a line; a login the demo has not made is left out."""
    rows = [("job", "login", "password", "TOTP", "try first")]
    for job in JOBS:
        login = logins.get(job.login)
        if not isinstance(login, dict):
            continue
        rows.append(
            (
                job.job,
                job.login,
                str(login.get("password") or ""),
                "yes" if login.get("totp_secret") else "",
                f"http://{web}{job.path}  {job.first}",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row[:4], widths, strict=True))
        + "  "
        + row[4]
        for row in rows
    ]
    others = sorted(set(logins) - {job.login for job in JOBS})
    if others:
        lines.append(
            f"also: {', '.join(others)} (the second crew: table 2 yesterday, then Pharao at "
            "table 4; chef3: the cercle's chef de partie, table 5)"
        )
    lines.append(
        "TOTP yes: the code is `python manage.py demo_totp LOGIN` (or the secret in "
        "var/demo-logins.json, in an authenticator app)"
    )
    return "\n".join(lines)


def read(store: Path) -> dict[str, dict[str, str | None]]:
    """The demo's logins, or none when the demo was not seeded."""
    try:
        logins = json.loads(store.read_text())
    except (OSError, ValueError):
        return {}
    return logins if isinstance(logins, dict) else {}
