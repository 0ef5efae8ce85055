"""A closed séance's signed report: what it says, that pyHanko finds it intact and signed by the
configured certificate, that one flipped byte is caught, that it renders to images."""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
from pathlib import Path

import pypdf
import pytest
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction

from audit.models import AuditEvent
from casino.floor.models import Coup, Shift
from casino.reports.models import Report
from casino.reports.services import report_render
from casino.reports.signing import verify_pdf
from tests.conftest import REQUIRE_SERVICES


def closed_seance(hours: float = 0.5, seed: int = 3) -> Shift:
    """A séance played by the simulator through the services and closed with its count."""
    call_command("simulate", tables=1, hours=hours, seed=seed, stdout=io.StringIO())
    return Shift.objects.get()


def rendered(shift: Shift, version: int = 1) -> Report:
    with transaction.atomic():
        return report_render(version=version, shift=shift.pk)


def pdf_text(report: Report) -> str:
    return "\n".join(page.extract_text() for page in pypdf.PdfReader(report.pdf.path).pages)


def verify(path) -> int:
    with pytest.raises(SystemExit) as exit_:
        call_command("verify_report", str(path), stdout=io.StringIO())
    return int(exit_.value.code)


def test_closing_a_seance_asks_for_its_report_in_the_same_transaction(cast, posted):
    shift = closed_seance(hours=0.1)
    report = Report.objects.get()
    assert (report.kind, report.shift, report.version, report.status) == (
        "shift",
        shift,
        1,
        "pending",
    )
    closed = AuditEvent.objects.get(action="shift.closed")
    assert (report.chain_to, report.head_hash) == (closed.seq, closed.hash)
    assert report.outbox.task == "reports.render"


def test_the_report_is_signed_intact_and_says_what_happened(cast, posted, tmp_path):
    shift = closed_seance()
    report = rendered(shift)
    data = Path(report.pdf.path).read_bytes()
    assert report.sha256 == hashlib.sha256(data).hexdigest()
    logged = AuditEvent.objects.get(action="report.rendered")
    assert report.sha256 in logged.payload
    verdict = verify_pdf(data)
    assert verdict.ok, verdict.findings
    assert "Casino des tests" in verdict.findings[0]  # the configured certificate
    assert verify(report.pdf.path) == 0

    text = pdf_text(report)
    for coup in Coup.objects.filter(shift=shift).select_related("outcome"):
        o = coup.outcome
        assert f"{o.noir_total}\n{o.announcement['noir']} / {o.announcement['rouge']}" in text
        assert f"{o.rouge_total}\n{o.announcement['result'] or o.result}" in text
    assert report.head_hash in text
    assert f"page {report.pages} sur / of" in text

    # One flipped byte anywhere in the signed content and the report no longer verifies.
    flipped = tmp_path / "flipped.pdf"
    damaged = bytearray(data)
    damaged[len(damaged) // 3] ^= 0x01
    flipped.write_bytes(bytes(damaged))
    assert verify(flipped) == 1


def test_a_version_is_rendered_once_and_then_never_changes(cast, posted):
    shift = closed_seance(hours=0.1)
    first = rendered(shift)
    again = rendered(shift)
    assert (again.rendered_at, again.sha256) == (first.rendered_at, first.sha256)
    assert AuditEvent.objects.filter(action="report.rendered").count() == 1
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE reports_report SET sha256 = 'x'")


def test_a_long_seance_paginates_and_nothing_is_cut_off(cast, posted):
    shift = closed_seance(hours=5, seed=11)  # 150 coups
    report = rendered(shift)
    assert report.pages >= 6
    text = pdf_text(report)
    for coup in Coup.objects.filter(shift=shift).select_related("outcome"):
        assert f"{coup.outcome.rouge_total}\n{coup.outcome.announcement['result']}" in text
    reader = pypdf.PdfReader(report.pdf.path)
    assert "Signature" in reader.pages[-1].extract_text()  # the signature block, on the last page


def test_the_pages_render_to_images(cast, posted, tmp_path):
    if shutil.which("pdftoppm") is None:
        message = "pdftoppm (poppler-utils) is not installed"
        if REQUIRE_SERVICES:
            pytest.fail(message)
        pytest.skip(message)
    report = rendered(closed_seance(hours=0.1))
    pages = tmp_path / "pages"
    pages.mkdir()
    subprocess.run(["pdftoppm", "-r", "40", "-png", report.pdf.path, str(pages / "p")], check=True)
    images = sorted(os.listdir(pages))
    assert len(images) == report.pages
    assert all((pages / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for name in images)


def test_the_coups_are_read_many_tables_at_a_time_and_laid_a_table_at_a_time(
    cast, posted, monkeypatch
):
    from django.test.utils import CaptureQueriesContext

    from casino.reports import shift_report

    shift = closed_seance()
    numbers = list(Coup.objects.filter(shift=shift).order_by("id").values_list("number", flat=True))
    assert len(numbers) > 6
    monkeypatch.setattr(shift_report, "COUPS_PER_TABLE", 3)
    monkeypatch.setattr(shift_report, "COUPS_PER_READ", 6)
    with CaptureQueriesContext(connection) as queries:
        tables = [[c.number for c, _, _ in table] for table in shift_report._coup_batches(shift)]
    assert tables == [numbers[i : i + 3] for i in range(0, len(numbers), 3)]
    reads = -(-len(numbers) // 6)
    assert len(queries) == 1 + 3 * reads  # the ids, then coups, stakes and money a read


def test_each_card_is_drawn_once_as_a_form_and_still_reads_as_text():
    from casino.reports.pdf import WIDTH, Cards, Document

    rows = [["KS", "TH", "2D"], ["KS", "AC"], ["TH"]]
    doc = Document("t", "t", "s", "n")
    doc.add(*(Cards(row, WIDTH) for row in rows))
    data, _ = doc.render()
    reader = pypdf.PdfReader(io.BytesIO(data))
    forms = [n for n in reader.pages[0]["/Resources"]["/XObject"] if "card" in n]
    assert len(forms) == len({code for row in rows for code in row})
    text = reader.pages[0].extract_text()
    for rank, suit in (("K", "♠"), ("10", "♥"), ("2", "♦"), ("A", "♣")):
        assert f"{rank}\n{suit}" in text
