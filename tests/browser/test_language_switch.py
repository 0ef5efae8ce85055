"""The language switch in the header: a person reading a page in French asks for English and gets
the same page in English, then every page after it, until they switch back."""

from __future__ import annotations

import pytest

from casino.floor.models import Table
from tests.browser.conftest import screenshot
from tests.conftest import open_seance

pytestmark = pytest.mark.django_db(transaction=True)


def switch(page, language: str) -> None:
    """Choose a language in the header and send it, as a person does."""
    page.select_option("#language-choice", language)
    with page.expect_navigation():
        page.click("#language-switch button[type=submit]")


def test_a_chef_switches_a_pit_page_to_english_and_stays_on_it(pages, cast, table, settings):
    settings.CASINO_NAME = "Casino de la Plage-sur-Mer"
    shift = open_seance(cast, Table.objects.get(number=1))
    chef = pages(cast.chef, locale="fr-FR")
    seance = f"/admin/pit/seance/{shift.pk}/"
    chef.goto(seance)
    assert chef.get_attribute("html", "lang") == "fr"
    assert chef.inner_text("#staff h2") == "Personnel de service"
    assert chef.inner_text("#time-zone") == "Heures affichées : Europe/Paris"
    assert "Casino de la Plage-sur-Mer" in chef.title()
    screenshot(chef, "pit-seance-french")

    switch(chef, "en")
    assert chef.url.endswith(seance)  # the same page...
    assert chef.get_attribute("html", "lang") == "en"  # ...in English
    assert chef.inner_text("#staff h2") == "Staff on duty"
    assert chef.inner_text("#time-zone") == "Times shown: Europe/Paris"

    # The choice holds on the next pages, the admin's as the pit's.
    record = f"/admin/floor/shift/{shift.pk}/change/"
    chef.goto(record)
    assert chef.get_attribute("html", "lang") == "en"
    assert chef.inner_text("#content h1") == "View séance"
    screenshot(chef, "admin-seance-english")

    switch(chef, "fr")
    assert chef.url.endswith(record)
    assert chef.inner_text("#content h1") == "Affichage de séance"


def test_the_login_page_switches_too(browser, live_server):
    context = browser.new_context(base_url=live_server.url, locale="fr-FR")
    page = context.new_page()
    page.goto("/admin/login/?next=/admin/pit/")
    assert page.inner_text("label[for=id_otp_token]").startswith("Code TOTP")
    switch(page, "en")
    assert "/admin/login/?next=/admin/pit/" in page.url
    assert page.inner_text("label[for=id_otp_token]").startswith("TOTP code")
    context.close()
