"""Each role's home in a browser, each person in their own signed-in tab: what waits for them is
there and its link opens the page where the act is done; the director and a comité member
certify a daily register from the director's home; the regulator downloads a signed report and
an export from the admin, the report verifies, the export opens; a croupier who opens the
commissioner's pages is refused and nothing is recorded."""

from __future__ import annotations

import datetime as dt
import io
import json
import re
import zipfile
from pathlib import Path

import pytest
from django.db import transaction
from django.utils import timezone

from audit.models import Anomaly, AnomalyReview, AuditEvent, Severity
from audit.services import anomaly_raise, anomaly_review, chain_verify_and_record
from casino.disputes.services import dispute_raise
from casino.floor.services import transfer_record
from casino.police.services import observation_record
from casino.reports.models import RegisterSignOff, Report
from casino.reports.services import registers_due, report_render
from casino.reports.signing import verify_pdf
from shoes.models import Pack, PackEvent, PackState, SealVerification
from tests.apart import apart
from tests.browser.conftest import screenshot
from tests.disputes.test_disputes import played_coup
from tests.reports.test_shift_report import closed_seance, rendered

pytestmark = pytest.mark.django_db(transaction=True)


def home(pages, user, role: str):
    """The person signed in: the admin opens on their home."""
    page = pages(user)
    page.goto("/admin/")
    assert page.locator("#content h1").inner_text() == "Ce qui vous attend"
    screenshot(page, f"home-{role}")
    return page


def follow(page, group: str, words: str, landing: str) -> None:
    """Click the item of ``group`` that says ``words``; it opens the page ``landing`` (a regex of
    its path), and that page answers 200."""
    item = page.locator(f"#{group} li", has_text=words).first
    with page.expect_response(re.compile(landing)) as answered:
        item.locator("a").first.click()
    assert answered.value.status == 200, answered.value.url
    page.wait_for_url(re.compile(landing))


def test_the_floor_s_homes_show_what_waits_and_lead_to_where_it_is_done(
    pages, cast, shift, sixain_in_play, receive
):
    fill = transfer_record(actor=cast.caissier, shift_id=shift.pk, kind="fill", amount=100_000)
    credit = transfer_record(actor=cast.chef, shift_id=shift.pk, kind="credit", amount=20_000)
    received = receive(store=False)
    _coup, stake = played_coup(cast, shift)
    dispute = dispute_raise(
        actor=cast.croupier, subject="stake", subject_id=stake.pk, claim="la mise était sur noir"
    )

    for person, role in ((cast.tailleur, "tailleur"), (cast.croupier, "croupier")):
        page = home(pages, person, role)
        assert page.locator("#table li").count() == 1
        follow(page, "duty", f"comme {role}", r"/admin/pit/table/1/$")
        assert page.locator("#content h1").inner_text().startswith("Table 1")

    chef = home(pages, cast.chef, "chef_de_partie")
    assert chef.locator("#disputes li", has_text="la mise était sur noir").count() == 1
    follow(chef, "table-signatures", "Apport de 1", rf"/admin/pit/seance/{shift.pk}/")
    assert chef.locator(f"#transfer-{fill.pk} button", has_text="Signer").count() == 1
    chef.goto("/admin/")
    follow(chef, "disputes", "la mise était sur noir", rf"/disputes/dispute/{dispute.pk}/review/")
    chef.goto("/admin/")
    follow(chef, "seances", "Table 1", rf"/admin/pit/seance/{shift.pk}/$")
    assert chef.locator("#staff").count() == 1

    cashier = home(pages, cast.caissier, "caissier")
    assert cashier.locator("#table, #chef_de_partie, #commissaire").count() == 0
    follow(cashier, "cage-signatures", "Retour de 200", r"/admin/pit/cage/")
    assert cashier.locator(f"#transfer-{credit.pk} button", has_text="Signer").count() == 1
    cashier.goto("/admin/")
    follow(cashier, "to-store", received.seal_number, rf"/admin/pit/cards/{received.pk}/$")
    assert cashier.locator("#store-form").count() == 1


@pytest.fixture
def closed_day(cast, posted):
    """A séance played and closed today, its report signed; the day's register signed by the
    house (the day is over: the beat asked for it)."""
    shift = closed_seance(hours=0.05)
    report = apart(rendered, shift)
    day = timezone.localdate()
    (register,) = registers_due(today=day + dt.timedelta(days=1))
    return report, apart(render_register, register)


def render_register(register: Report) -> Report:
    with transaction.atomic():
        return report_render(version=register.version, day=str(register.day))


def test_the_oversight_s_homes_show_what_waits_and_lead_to_where_it_is_done(
    pages, cast, closed_day, receive
):
    report, register = closed_day
    in_store = receive()
    opened = anomaly_raise(
        detector="count_variance",
        severity=Severity.CRITICAL,
        summary="la caisse de la table 1 est courte de 25,00",
        evidence={},
    )
    escalated = anomaly_raise(
        detector="foreign_card",
        severity=Severity.WARNING,
        summary="une carte étrangère",
        evidence={},
    )
    for step in ("acknowledged", "escalated"):
        anomaly_review(actor=cast.auditeur2, anomaly_id=escalated.pk, to_state=step, reason="vu")
    late = observation_record(
        actor=cast.commissaire,
        visited_at=timezone.now() - dt.timedelta(days=10),
        checks="le magasin des jeux",
        injunctions="changer la serrure du magasin",
    )
    chain_verify_and_record()

    commissioner = home(pages, cast.commissaire, "commissaire")
    assert commissioner.locator("#register li").count() == 1  # today's page, not yet visaed
    follow(commissioner, "escalated", "carte étrangère", rf"/anomaly/{escalated.pk}/review/")
    commissioner.goto("/admin/")
    follow(commissioner, "seals", in_store.seal_number, rf"/admin/pit/cards/{in_store.pk}/$")
    assert commissioner.locator("#verify-form").count() == 1

    auditor = home(pages, cast.auditeur, "auditeur")
    first = auditor.locator("#anomalies-open li").first
    assert "courte de 25,00" in first.inner_text()
    assert "urgent" in (first.get_attribute("class") or "")
    follow(auditor, "anomalies-open", "courte de 25,00", rf"/anomaly/{opened.pk}/review/")

    director = home(pages, cast.directeur, "directeur")
    assert director.locator("#follow-ups li.urgent", has_text="changer la serrure").count() == 1
    follow(director, "follow-ups", "changer la serrure", rf"/observation/{late.pk}/follow-up/")
    director.goto("/admin/")
    follow(director, "registers", "Registre de contrôle", rf"/report/{register.pk}/sign_off/")

    comite = home(pages, cast.comite, "comite")
    assert comite.locator("#follow-ups").count() == 0
    follow(comite, "registers", "Registre de contrôle", rf"/report/{register.pk}/sign_off/")

    regulator = home(pages, cast.inspecteur, "inspecteur")
    assert regulator.locator("#chain li", has_text="Intacte").count() == 1
    follow(regulator, "reports", f"séance n° {report.shift_id}", rf"/report/{report.pk}/change/")
    verification = regulator.inner_text("#content")
    assert "VALIDE" in verification
    assert "NON VALIDE" not in verification


def certify(page) -> None:
    """On the home: the register's item, then the act's page, its box ticked and sent."""
    page.goto("/admin/")
    page.locator("#registers li a").first.click()
    page.wait_for_url(re.compile(r"/sign_off/$"))
    page.check("input[name=confirm]")
    page.click("#content input[type=submit]")
    page.locator(".messagelist .success").first.wait_for()


def test_the_director_and_a_comite_member_certify_a_register_from_the_director_s_home(
    pages, cast, closed_day
):
    _report, register = closed_day
    director = pages(cast.directeur)
    certify(director)
    assert list(RegisterSignOff.objects.values_list("person__username", "capacity")) == [
        ("directeur", "directeur")
    ]
    director.goto("/admin/")
    assert director.locator("#registers li").count() == 0  # done, for him

    comite = pages(cast.comite)  # another person, in another session
    certify(comite)
    assert sorted(RegisterSignOff.objects.values_list("capacity", flat=True)) == [
        "comite",
        "directeur",
    ]
    assert all(s.report_id == register.pk for s in RegisterSignOff.objects.all())
    # Both signed: a new version carrying their sign-offs is asked for.
    assert Report.objects.filter(day=register.day, version=register.version + 1).exists()
    comite.goto("/admin/")
    assert comite.locator("#registers li").count() == 0


def test_the_regulator_downloads_a_signed_report_and_its_export_from_his_home(
    pages, cast, closed_day, tmp_path
):
    report, _register = closed_day
    regulator = pages(cast.inspecteur)
    regulator.goto("/admin/")
    follow(regulator, "reports", f"séance n° {report.shift_id}", rf"/report/{report.pk}/change/")

    with regulator.expect_download() as pdf:
        regulator.locator("a.button", has_text="PDF").click()
    signed = Path(pdf.value.path()).read_bytes()
    assert signed == Path(report.pdf.path).read_bytes()
    verdict = apart(verify_pdf, signed)
    assert verdict.ok, verdict.findings

    with regulator.expect_download() as export:
        regulator.locator("a.button", has_text="export").click()
    archive = zipfile.ZipFile(io.BytesIO(Path(export.value.path()).read_bytes()))
    assert archive.testzip() is None
    assert {"report.pdf", "coups.csv", "audit/events.jsonl"} <= set(archive.namelist())
    assert archive.read("report.pdf") == signed
    # No transaction around the server's request: its events were read ahead, on a connection
    # of their own, every one of the report's range.
    events = [json.loads(line) for line in archive.read("audit/events.jsonl").splitlines()]
    assert [e["seq"] for e in events] == list(range(report.chain_from, report.chain_to + 1))


def test_a_croupier_who_opens_the_commissioner_s_pages_is_refused_and_nothing_is_recorded(
    pages, cast, shift, receive
):
    pack = receive()  # in store: its seal waits for the commissioner
    anomaly = anomaly_raise(
        detector="foreign_card", severity=Severity.WARNING, summary="une carte", evidence={}
    )
    for step in ("acknowledged", "escalated"):
        anomaly_review(actor=cast.auditeur, anomaly_id=anomaly.pk, to_state=step, reason="vu")

    def recorded() -> tuple[object, ...]:
        return (
            SealVerification.objects.count(),
            PackEvent.objects.count(),
            Pack.objects.get(pk=pack.pk).state,
            AnomalyReview.objects.count(),
            Anomaly.objects.get(pk=anomaly.pk).state,
            AuditEvent.objects.count(),
        )

    croupier = pages(cast.croupier)
    before = recorded()
    assert before[2] == PackState.IN_STORE
    seal_page = croupier.goto(f"/admin/pit/cards/{pack.pk}/")
    assert seal_page is not None
    assert seal_page.status == 403
    assert "vos rôles ne donnent pas accès à cette page" in croupier.inner_text("#content")
    assert croupier.locator("#verify-form").count() == 0
    # The admin's review page answers a bare 403 (the browser shows its own error page for it).
    assert croupier.request.get(f"/admin/audit/anomaly/{anomaly.pk}/review/").status == 403

    # The forms sent all the same, with the croupier's session and its CSRF token.
    token = next(c["value"] for c in croupier.context.cookies() if c["name"] == "csrftoken")
    headers = {"X-CSRFToken": token, "Referer": croupier.url}
    verify = croupier.request.post(
        f"/admin/pit/cards/{pack.pk}/verify/",
        form={"seal_number_read": pack.seal_number, "verdict": "intact"},
        headers=headers,
    )
    assert verify.status == 403
    review = croupier.request.post(
        f"/admin/audit/anomaly/{anomaly.pk}/review/",
        form={"to_state": "confirmed", "reason": "moi"},
        headers=headers,
    )
    assert review.status == 403
    assert recorded() == before
