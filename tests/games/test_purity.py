"""The engines are pure: importing them loads neither Django nor Celery (STYLE.md 1)."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT

PROBE = """
import sys
import casino.games.cards, casino.games.reglement, casino.games.trente_et_quarante
import casino.games.odds, casino.games.replay, casino.games.simulator, casino.games.__main__
import casino.games.pharao, casino.games.pharao_replay, casino.games.pharao_odds
import casino.games.alliance, casino.games.alliance_replay, casino.games.alliance_collusion
import casino.games.hold_law, casino.games.sixain_law
leaked = sorted(m for m in sys.modules if m.split(".")[0] in {"django", "celery", "rest_framework",
                                                              "psycopg", "redis"})
print(",".join(leaked))
"""


def test_the_engines_import_without_django():
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin"},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""
