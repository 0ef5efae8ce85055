"""Render + sign time and peak memory of a séance's report for 100, 1,000 and 10,000 coups.

The séances are filled with copies of one coup played through the services (the report's cost
depends on the rows, not on how they were written); each render runs in a fresh process, as on a
worker, so that its peak RSS is the render's own."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.bench.harness import report

SIZES = (100, 1_000, 10_000)

RENDER = """
import json, resource, sys, time
import django
django.setup()
from django.db import transaction
from casino.reports.services import report_render
started = time.perf_counter()
with transaction.atomic():
    done = report_render(version=1, shift=int(sys.argv[1]))
print(json.dumps({"seconds": time.perf_counter() - started, "pages": done.pages,
                  "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def _seance(staff: dict[str, Any], number: int, coups: int) -> int:
    """A closed séance of ``coups`` coups: one played, the rest copied by bulk INSERT."""
    from django.db import transaction

    from casino.floor.models import Coup
    from casino.floor.services import rundown
    from casino.simulation.seance import chips_for
    from tests.bench import bench_floor
    from tests.bench.harness import close_seance

    shift = bench_floor.open_table(staff, number)
    bench_floor._play_coup(staff, shift, 0)
    copier = bench_floor.CoupCopier(Coup.objects.get(shift=shift))
    with transaction.atomic():
        for n in range(1, coups):
            copier.copy(n + 1)
    close_seance(
        chef=staff[f"chef{number}"],
        croupier=staff[f"croupier{number}"],
        directeur=staff["directeur"],
        shift=shift,
        chips=chips_for(rundown(shift).expected),
    )
    return shift.pk


def _render(shift_id: int, env: dict[str, str]) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", RENDER, str(shift_id)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def run() -> None:
    from django.db import connections

    from casino.reports.signing import init_signing
    from tests.bench import bench_floor

    staff, _ = bench_floor._setup(tables=0, prefix="reports")
    keys = init_signing(Path(tempfile.mkdtemp(prefix="bench-keys-")), organisation="bench")
    shifts = {size: _seance(staff, 500 + i, size) for i, size in enumerate(SIZES)}
    connections.close_all()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "casino.settings",
        "MEDIA_ROOT": tempfile.mkdtemp(prefix="bench-media-"),
        "REPORT_SIGNING_PKCS12": str(keys["pkcs12"]),
        "REPORT_SIGNING_PASSPHRASE_FILE": str(keys["passphrase"]),
        "REPORT_TRUST_ROOTS": str(keys["ca"]),
        "DATABASE_URL": os.environ["DATABASE_URL"],
    }
    measured = {size: _render(shift_id, env) for size, shift_id in shifts.items()}
    rows = [
        (
            f"{size:,} coups ({m['pages']:.0f} pages)",
            f"{m['seconds']:.2f} s, peak RSS {m['rss_mib']:.0f} MiB",
        )
        for size, m in measured.items()
    ]
    small, middle, large = (measured[size] for size in SIZES)
    exponent = math.log(large["seconds"] / small["seconds"]) / math.log(SIZES[-1] / SIZES[0])
    # What grows with the séance, less what every render pays once (imports, the exact odds of a
    # sixain, the signature): the smallest séance's time stands for the fixed part.
    growing = (large["seconds"] - small["seconds"], middle["seconds"] - small["seconds"])
    grows = (
        f"{math.log(growing[0] / growing[1]) / math.log((SIZES[2] - SIZES[0]) / (SIZES[1] - SIZES[0])):.2f}"
        if min(growing) > 0
        else "n/a (the fixed cost hides it at these sizes)"
    )
    per_thousand = (large["seconds"] - middle["seconds"]) / ((SIZES[2] - SIZES[1]) / 1000)
    rows += [
        ("growth exponent of time, log-log", f"{exponent:.2f} (fixed cost included)"),
        ("growth exponent of the part that grows", f"{grows} (1 = linear)"),
        ("each further 1,000 coups", f"{per_thousand:.2f} s"),
        (
            "memory growth, 1,000 to 10,000 coups",
            f"{(large['rss_mib'] - middle['rss_mib']) / 9:.1f} MiB per 1,000 coups",
        ),
    ]
    report("Signed séance reports: render + sign in a fresh worker-like process", rows)
