"""The regulator's export replays and verifies without our database; the daily register is
certified exact by the director and a second comité member."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from django.db import transaction
from django.utils import timezone

from casino.errors import RoleRequired, SegregationViolation
from casino.floor.models import Coup
from casino.reports.export import export_zip
from casino.reports.models import RegisterSignOff, Report
from casino.reports.services import register_sign_off, registers_due, report_render
from tests.reports.test_shift_report import closed_seance, pdf_text, rendered


def replay(document: dict) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "casino.games", "replay"],
        input=json.dumps(document),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def test_the_export_replays_every_coup_and_verifies_the_chain(cast, posted, tmp_path):
    shift = closed_seance(hours=1.2, seed=4)  # a whole sixain and the start of the next
    report = rendered(shift)
    archive = zipfile.ZipFile(io.BytesIO(export_zip(report)))
    names = set(archive.namelist())
    assert {"report.pdf", "coups.csv", "stakes.csv", "movements.csv", "audit/events.jsonl"} <= names
    assert archive.read("report.pdf") == Path(report.pdf.path).read_bytes()
    recorded = json.loads(archive.read("coups.json"))
    settlements = list(csv.DictReader(io.StringIO(archive.read("settlements.csv").decode())))
    packs = sorted(n for n in names if n.startswith("replay/"))
    assert len(packs) == 2
    compared = 0
    for name in packs:
        seal, taille = name.removeprefix("replay/").removesuffix(".json").rsplit("-", 1)
        coups = [c for c in recorded if (c["pack"], str(c["taille"])) == (seal, taille)]
        out = replay(json.loads(archive.read(name)))["coups"]
        # Every card of the sixain is in the talon: a séance that closed mid-taille has fewer
        # coups than the replay deals, and each of them must agree, its `last` flag included.
        assert len(out) >= len(coups)
        out = out[: len(coups)]
        for want, got in zip(coups, out, strict=True):
            assert (
                got["noir"]["cards"],
                got["noir"]["total"],
                got["rouge"]["cards"],
                got["rouge"]["total"],
                got["result"],
                got["couleur"] or "",
                got["void"],
                got["last"],
                got["announcement"]["result"],
            ) == (
                want["noir_cards"].split(),
                want["noir_total"],
                want["rouge_cards"].split(),
                want["rouge_total"],
                want["result"],
                want["couleur"],
                want["void"],
                want["last"],
                want["announcement"],
            )
            mine = sorted(
                (s["outcome"], int(s["paid"]), int(s["returned"]), int(s["to_bank"]))
                for s in settlements
                if int(s["coup"]) == want["id"]
            )
            theirs = sorted(
                (s["outcome"], s["paid"], s["returned"], s["to_bank"]) for s in got["settlements"]
            )
            assert theirs == mine
            compared += 1
    assert compared == Coup.objects.count()
    # The first sixain passed: the tailleur scanned its undealt cards, and its replay ends with
    # them; the second was still in play when the séance closed.
    talons = list(csv.DictReader(io.StringIO(archive.read("talons.csv").decode())))
    assert sorted(t["replay"] for t in talons) == packs
    [first] = [t for t in talons if t["undealt"] == "recorded"]
    [second] = [t for t in talons if t["undealt"] == "not_recorded"]
    assert second["recorded_cards"] == second["method"] == ""
    assert (first["method"], first["counted_by"], first["missing"], first["extra"]) == (
        "scanned",
        "tailleur",
        "",
        "",
    )
    cards = json.loads(archive.read(first["replay"]))["cards"]
    assert cards[int(first["dealt"]) :] == first["recorded_cards"].split()
    assert int(first["dealt"]) + int(first["undealt_in_replay"]) == len(cards) == 312

    folder = tmp_path / "export"
    archive.extractall(folder)
    checked = subprocess.run(
        [sys.executable, "verify_events.py", report.head_hash],
        cwd=folder / "audit",
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stderr
    assert "events verified" in checked.stdout
    tampered = (folder / "audit" / "events.jsonl").read_text().replace('"shift.closed"', '"x"')
    (folder / "audit" / "events.jsonl").write_text(tampered)
    again = subprocess.run(
        [sys.executable, "verify_events.py", report.head_hash],
        cwd=folder / "audit",
        text=True,
        capture_output=True,
    )
    assert again.returncode == 1


def test_the_daily_register_is_certified_exact_by_two_people(cast, posted):
    closed_seance(hours=0.1)
    day = timezone.localdate()
    assert registers_due(today=day) == []  # the day is not over yet
    (first,) = registers_due(today=day + dt.timedelta(days=1))
    assert registers_due(today=day + dt.timedelta(days=1)) == []  # asked once
    with transaction.atomic():
        report_render(version=1, day=day.isoformat())

    for who, error in (
        (cast.croupier, SegregationViolation),  # records play: may not certify it
        (cast.auditeur, RoleRequired),
        (cast.inspecteur, RoleRequired),
    ):
        with pytest.raises(error):
            register_sign_off(actor=who, day=day)
    register_sign_off(actor=cast.directeur, day=day)
    with pytest.raises(SegregationViolation):
        register_sign_off(actor=cast.directeur, day=day)  # a second signature is another person
    assert Report.objects.filter(day=day).count() == 1
    register_sign_off(actor=cast.comite, day=day)
    signed = Report.objects.get(day=day, version=2)
    assert "certifié exact" in signed.reason
    with transaction.atomic():
        signed = report_render(version=2, day=day.isoformat())
    text = pdf_text(signed)
    assert "directeur: directeur, le / on" in text
    assert "membre du comité: comite, le / on" in text
    assert "certifié exact" in text
    assert RegisterSignOff.objects.filter(day=day).count() == 2
    assert first.version == 1
