"""Reports in the admin: status, verification, download, export, regeneration, sign-off."""

from __future__ import annotations

import datetime as dt
import io
import zipfile
from pathlib import Path

from django.db import transaction
from django.test import Client
from django.utils import timezone

from casino.reports.models import RegisterSignOff, Report
from casino.reports.services import registers_due, report_render
from tests.actors import login_admin
from tests.reports.test_shift_report import closed_seance, rendered


def logged_in(user) -> Client:
    client = Client()
    login_admin(client, user)
    return client


def test_the_pit_and_the_regulator_find_download_and_regenerate_reports(cast, posted):
    report = rendered(closed_seance(hours=0.1))
    inspector = logged_in(cast.inspecteur)
    listing = inspector.get("/admin/reports/report/").content.decode()
    assert "signé" in listing
    page = inspector.get(f"/admin/reports/report/{report.pk}/change/").content.decode()
    assert "<strong>VALIDE</strong>" in page
    english = inspector.get(
        f"/admin/reports/report/{report.pk}/change/", HTTP_ACCEPT_LANGUAGE="en"
    ).content.decode()
    assert "<strong>VALID</strong>" in english
    pdf = inspector.get(f"/admin/reports/report/{report.pk}/pdf/")
    assert b"".join(pdf.streaming_content) == Path(report.pdf.path).read_bytes()
    export = inspector.get(f"/admin/reports/report/{report.pk}/export/")
    assert "report.pdf" in zipfile.ZipFile(io.BytesIO(export.content)).namelist()
    refused = inspector.post(f"/admin/reports/report/{report.pk}/regenerate/", {"reason": "x"})
    assert "il faut le rôle" in refused.content.decode()
    assert (
        logged_in(cast.croupier).get(f"/admin/reports/report/{report.pk}/pdf/").status_code == 403
    )

    done = logged_in(cast.chef).post(
        f"/admin/reports/report/{report.pk}/regenerate/", {"reason": "copie pour la préfecture"}
    )
    assert done.status_code == 302
    assert list(Report.objects.order_by("version").values_list("version", "reason")) == [
        (1, "séance fermée / shift closed"),
        (2, "copie pour la préfecture"),
    ]
    assert Report.objects.get(version=1).rendered_at is not None  # earlier versions stay


def test_the_director_signs_off_the_register_in_the_admin(cast, posted):
    closed_seance(hours=0.1)
    day = timezone.localdate()
    (register,) = registers_due(today=day + dt.timedelta(days=1))
    with transaction.atomic():
        report_render(version=1, day=day.isoformat())
    url = f"/admin/reports/report/{register.pk}/sign_off/"
    assert logged_in(cast.directeur).post(url, {"confirm": "on"}).status_code == 302
    refused = logged_in(cast.chef).post(url, {"confirm": "on"})
    assert "ne peut pas le certifier" in refused.content.decode()
    assert list(RegisterSignOff.objects.values_list("person__username", flat=True)) == ["directeur"]


def test_regulators_fetch_reports_over_the_api(api, cast, posted):
    report = rendered(closed_seance(hours=0.1))
    inspector = api(cast.inspecteur)
    listed = inspector.get(f"/api/v1/reports?shift={report.shift_id}").json()["results"]
    assert [(r["version"], r["status"], r["sha256"]) for r in listed] == [
        (1, "signed", report.sha256)
    ]
    pdf = inspector.get(f"/api/v1/reports/{report.pk}/pdf")
    assert b"".join(pdf.streaming_content) == Path(report.pdf.path).read_bytes()
    export = inspector.get(f"/api/v1/reports/{report.pk}/export")
    assert "audit/events.jsonl" in zipfile.ZipFile(io.BytesIO(export.content)).namelist()
    croupier = api(cast.croupier).get("/api/v1/reports")
    assert (croupier.status_code, croupier.json()["code"]) == (403, "role_required")
    missing = inspector.get("/api/v1/reports/999999/pdf")
    assert (missing.status_code, missing.json()["code"], missing.json()["where"]) == (
        404,
        "not_found",
        "id",
    )
