"""``verify_report`` says VALID only for a report the house recorded: a validly signed PDF that is
no recorded report (signed with the house's key outside the render) exits 1."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from reportlab.pdfgen import canvas

from casino.reports.signing import sign_pdf, verify_pdf


def a_signed_pdf() -> bytes:
    buffer = io.BytesIO()
    page = canvas.Canvas(buffer)
    page.drawString(72, 720, "Rapport de séance (forgé) / shift report (forged)")
    page.save()
    signed, _signer = sign_pdf(
        buffer.getvalue(), box=(72, 72, 300, 140), page=0, reason="not from the render"
    )
    return signed


def test_a_validly_signed_pdf_that_is_no_recorded_report_is_not_valid(db, tmp_path):
    data = a_signed_pdf()
    assert verify_pdf(data).ok  # the signature itself holds
    path = tmp_path / "forged.pdf"
    path.write_bytes(data)
    out = io.StringIO()
    with pytest.raises(SystemExit) as exit_:
        call_command("verify_report", str(path), stdout=out)
    assert exit_.value.code == 1
    said = out.getvalue()
    assert "not a recorded report" in said
    assert said.rstrip().endswith("NOT VALID")


def test_a_missing_file_is_named(db, tmp_path):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match=r"absent\.pdf"):
        call_command("verify_report", str(tmp_path / "absent.pdf"))
