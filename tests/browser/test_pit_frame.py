"""The pit's pages live inside the admin: behind its login and second factor, in its frame."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_croupier_signs_in_and_reaches_the_pit(pages, cast):
    page = pages(cast.croupier)
    page.goto("/admin/pit/")
    assert page.locator("#content h1").inner_text() == "Ce qui vous attend"
    # htmx is served from the project, nothing from outside.
    scripts = page.eval_on_selector_all("script[src]", "els => els.map(e => e.src)")
    assert any(s.endswith("/static/pit/htmx.min.js") for s in scripts)
    assert all(s.startswith(page.url.split("/admin/")[0]) for s in scripts)
    assert page.evaluate("typeof htmx") == "object"


def test_the_pit_is_behind_the_login(browser, live_server):
    context = browser.new_context(base_url=live_server.url)
    page = context.new_page()
    page.goto("/admin/pit/")
    assert "/admin/login/" in page.url
    context.close()
