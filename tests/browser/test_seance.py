"""The séance in a browser, each person in their own tab (their own session): the float counted
by the croupier and countersigned by the director, the séance opened by the chef de partie, a
fill requested by the table and signed by the cage, the closing count whose variance shows
before the chef closes."""

from __future__ import annotations

import re

import pytest

from audit.models import Anomaly
from casino.floor.models import CashTransfer, FloatCount, Movement, Shift
from tests.browser.conftest import screenshot

pytestmark = pytest.mark.django_db(transaction=True)


def done(page, words: str) -> None:
    """Wait for the page the act answered with, saying it was done (the admin's message)."""
    page.locator(".messagelist .success", has_text=words).first.wait_for()


def digits(text: str) -> str:
    """An amount as shown, its separators (spaces, narrow spaces, commas) left out."""
    return re.sub(r"\D", "", text)


def count_chips(page, chips: dict[str, int]) -> None:
    for value, number in chips.items():
        page.fill(f"#count-form input[name=chips_{value}]", str(number))


def test_a_chef_opens_a_seance_on_a_count_the_croupier_made_and_the_director_countersigned(
    pages, cast, table
):
    croupier = pages(cast.croupier)
    croupier.goto("/admin/pit/seance/open/?table=1")
    count_chips(croupier, {"10000": 40, "2500": 40, "500": 100})
    # The total is computed as the croupier types: 4 000 + 1 000 + 500 = 5 500,00.
    assert digits(croupier.inner_text("#count-total")) == "550000"
    croupier.click("#count-form button[type=submit]")
    done(croupier, "attend sa contresignature")
    count = FloatCount.objects.get()
    assert count.total == 550_000
    assert count.counted_by == cast.croupier

    director = pages(cast.directeur)
    director.goto("/admin/pit/seance/open/?table=1")
    director.click(f"#count-{count.pk} button:has-text('Contresigner')")
    director.wait_for_selector(f"#count-{count.pk} >> text=contresigné par")
    assert count.countersignature.by == cast.directeur  # type: ignore[union-attr]

    chef = pages(cast.chef)
    chef.goto("/admin/pit/seance/open/?table=1")
    chef.select_option("select[name=count]", str(count.pk))
    chef.select_option("select[name=tailleur]", str(cast.tailleur.pk))
    chef.check(f"input[name=croupiers][value='{cast.croupier.pk}']")
    chef.click("#open button[type=submit]")
    chef.wait_for_url(re.compile(r"/admin/pit/seance/\d+/$"))
    shift = Shift.objects.get()
    assert shift.opening_count == count
    assert shift.opened_by == cast.chef
    staff = chef.inner_text("#staff")
    for person in ("chef", "tailleur", "croupier"):
        assert person in staff


def test_a_fill_is_requested_by_the_table_and_signed_by_the_cage(pages, cast, shift):
    chef = pages(cast.chef)
    chef.goto(f"/admin/pit/seance/{shift.pk}/")
    chef.select_option("#transfer-form select[name=kind]", "fill")
    chef.fill("#transfer-form input[name=amount]", "1000")
    chef.click("#transfer-form button[type=submit]")
    done(chef, "il attend la seconde signature")
    transfer = CashTransfer.objects.get()
    assert transfer.amount == 100_000
    assert transfer.recorded_by == cast.chef
    # The chef sees no button to sign his own fill: the other side signs.
    assert chef.locator(f"#transfer-{transfer.pk} button").count() == 0

    cashier = pages(cast.caissier)
    cashier.goto("/admin/pit/cage/")
    row = cashier.locator(f"#for-cage #transfer-{transfer.pk}")
    assert "1" in row.inner_text()
    row.locator("button[value=sign]").click()
    done(cashier, "signé : la table le reçoit")
    assert transfer.countersignature.by == cast.caissier  # type: ignore[union-attr]
    assert Movement.objects.filter(kind="fill", amount=100_000).count() == 1

    chef.reload()
    assert "signé par" in chef.inner_text(f"#transfer-{transfer.pk}")


def test_the_seance_closes_with_its_variance_shown_before_the_close(pages, cast, shift):
    croupier = pages(cast.croupier)
    croupier.goto(f"/admin/pit/seance/{shift.pk}/")
    # Five chips of 5,00 short of the float: 5 475,00 counted where 5 500,00 is expected.
    count_chips(croupier, {"10000": 40, "2500": 40, "500": 95})
    croupier.click("#count-form button[type=submit]")
    done(croupier, "attend sa contresignature")
    count = FloatCount.objects.get(moment="closing")

    director = pages(cast.directeur)
    director.goto(f"/admin/pit/seance/{shift.pk}/")
    director.click(f"#count-{count.pk} button:has-text('Contresigner')")
    director.wait_for_selector(f"#count-{count.pk} >> text=contresigné par")

    chef = pages(cast.chef)
    chef.goto(f"/admin/pit/seance/{shift.pk}/")
    # Before the close: the rundown, the count and the variance, in the page.
    assert digits(chef.inner_text("#rundown-expected")) == "550000"
    assert digits(chef.inner_text("#rundown-closing")) == "547500"
    variance = chef.inner_text("#rundown-variance")
    assert variance.startswith("−")
    assert digits(variance) == "2500"
    assert not Anomaly.objects.filter(detector="cash_variance").exists()
    screenshot(chef, "seance")
    chef.click("#close-form button[type=submit]")
    done(chef, "écart de caisse")
    shift.refresh_from_db()
    assert shift.closed_at is not None
    anomaly = Anomaly.objects.get(detector="cash_variance")
    assert anomaly.evidence["variance"] == -2500
    assert "cash_variance" in chef.inner_text("#anomalies")
    assert "certifié" in chef.inner_text("#closing")
