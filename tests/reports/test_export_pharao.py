"""The regulator's export holds each Pharao taille's replay document, the one the floor rebuilds
the taille from, and ``python -m casino.games replay`` gives back its recorded draws and
settlements (issue 13, item 6)."""

from __future__ import annotations

import csv
import io
import json
import zipfile

import pytest

from casino.floor.play.pharao.models import PharaoDraw, PharaoSettlement, PharaoStakeAct
from casino.floor.play.pharao.selectors import taille_document
from casino.floor.services import rundown, shift_close
from casino.reports.export import export_zip
from tests.api.test_pharao_api import ACTS, _act_line, _draw_line, _line, expected_end
from tests.api.tour import chips_for
from tests.conftest import open_seance, signed_count
from tests.floor.pharao_world import pharao_table, play_a_taille
from tests.reports.test_export_and_register import replay
from tests.reports.test_shift_report import rendered

pytestmark = pytest.mark.django_db


def test_the_exports_pharao_tailles_replay_to_the_recorded_settlements(cast, posted):
    seance = open_seance(cast, pharao_table(cast))
    taille = play_a_taille(cast, seance)
    closing = signed_count(cast, seance.table, "closing", chips_for(rundown(seance).expected))
    shift_close(actor=cast.chef, shift=seance, count_id=closing.pk)
    archive = zipfile.ZipFile(io.BytesIO(export_zip(rendered(seance))))

    files = [n for n in archive.namelist() if n.startswith("replay/")]
    assert files == [f"replay/{taille.pack.seal_number}-{taille.pack_taille}.json"]
    document = json.loads(archive.read(files[0]))
    assert document == taille_document(taille)
    replayed = replay(document)  # the command, in a process of its own
    assert replayed["refused"] == []
    assert len(replayed["draws"]) == 26

    compared = 0
    for draw in replayed["draws"]:
        found = PharaoDraw.objects.get(taille=taille, number=draw["number"])
        assert (found.bank_card, found.players_card, found.plie) == (
            draw["bank"],
            draw["players"],
            draw["plie"],
        )
        lines = [
            _act_line(s, draw["number"]) if s["outcome"] in ACTS else _draw_line(found, s)
            for s in draw["settlements"]
        ]
        assert lines == draw["settlements"]
        compared += len(lines)
    ends = PharaoSettlement.objects.filter(taille=taille, draw__isnull=True).order_by("stake_id")
    assert [_line(s) for s in ends] == expected_end(replayed)
    # Every settlement recorded, and every act that settled money, was compared.
    recorded = (
        PharaoSettlement.objects.filter(taille=taille, draw__isnull=False).count()
        + PharaoStakeAct.objects.filter(
            stake__taille=taille, act__in=["reduce", "withdraw"]
        ).count()
    )
    assert compared == recorded > 0
    assert any(s["outcome"] == "plie" for d in replayed["draws"] for s in d["settlements"])


def test_the_export_holds_the_pharao_records_the_replay_documents_name(cast, posted):
    seance = open_seance(cast, pharao_table(cast))
    taille = play_a_taille(cast, seance)
    closing = signed_count(cast, seance.table, "closing", chips_for(rundown(seance).expected))
    shift_close(actor=cast.chef, shift=seance, count_id=closing.pk)
    archive = zipfile.ZipFile(io.BytesIO(export_zip(rendered(seance))))

    def rows(name: str) -> list[dict[str, str]]:
        return list(csv.DictReader(io.StringIO(archive.read(f"{name}.csv").decode())))

    (document,) = (
        json.loads(archive.read(n)) for n in archive.namelist() if n.startswith("replay/")
    )
    stakes = {row["id"]: row for row in rows("pharao_stakes")}
    assert sorted(stakes) == sorted(s["id"] for s in document["stakes"])
    assert {stakes[s["id"]]["ref"] for s in document["stakes"]} == {"a", "b", "p", "w"}
    assert [(t["id"], t["bottom_card"], t["phase"]) for t in rows("pharao_tailles")] == [
        (str(taille.pk), "KS", "ended")
    ]
    draws = rows("pharao_draws")
    assert len(draws) == 26
    assert [d["plie"] for d in draws].count("True") == 1
    assert len(rows("pharao_acts")) == len(document["actions"]) == 3
    approvals = rows("pharao_approvals")
    assert [(a["act"], a["stake_placed_by"], a["approved_by"]) for a in approvals] == [
        ("reduce", "croupier", "chef"),
        ("withdraw", "croupier", "chef"),
        ("withdraw", "croupier", "chef"),
    ]
    settled = rows("pharao_settlements")
    assert len(settled) == PharaoSettlement.objects.filter(taille=taille).count()
    # From the files alone, every unit put on the layout left it: kept by the bank or returned.
    acts = rows("pharao_acts")
    put_on = sum(int(s["amount"]) for s in stakes.values()) + sum(int(a["put"]) for a in acts)
    taken_off = sum(int(s["to_bank"]) + int(s["returned"]) for s in settled)
    taken_off += sum(int(a["returned"]) for a in acts)
    assert put_on == taken_off == 2800 + 1000  # the stakes, and the winnings the paroli let ride
