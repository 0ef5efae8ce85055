"""Browser tests: Playwright driving Debian's Chromium (``apt-get install chromium``; Playwright's
own browser download cannot work on these machines) against the live server, as pit staff use
the admin. Without Chromium they skip, except in CI (``CASINO_REQUIRE_SERVICES=1``) where they
fail."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django_otp.plugins.otp_totp.models import TOTPDevice

from tests.actors import PASSWORD, otp_code
from tests.conftest import REQUIRE_SERVICES

# Playwright's synchronous API keeps an event loop running in the test's thread, which Django takes
# for async code and refuses the ORM in; nothing here is async (pytest-playwright's advice).
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = os.environ.get("CASINO_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
# Chromium as root, with no network beyond this machine: no sandbox, no background calls home.
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        message = f"Chromium is not installed at {CHROMIUM} (Debian: apt-get install chromium)"
        if REQUIRE_SERVICES:
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield chromium
        chromium.close()


@pytest.fixture
def pages(browser: Any, live_server: Any, settings: Any) -> Iterator[Any]:
    """``pages(user)``: a browser tab of its own (its own cookies) signed into the admin as
    ``user`` with the password and, when the person's roles require one, a fresh TOTP code."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    contexts = []

    def signed_in(user: Any, *, locale: str = "fr-FR") -> Any:
        context = browser.new_context(
            base_url=live_server.url,
            locale=locale,
            timezone_id="Europe/Paris",
            viewport={"width": 1400, "height": 1000},
        )
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(15_000)
        page.goto("/admin/login/")
        page.fill("input[name=username]", user.username)
        page.fill("input[name=password]", PASSWORD)
        if TOTPDevice.objects.filter(user=user, confirmed=True).exists():
            page.fill("input[name=otp_token]", otp_code(user))
        page.click("input[type=submit]")
        page.wait_for_url(lambda url: "/admin/login/" not in url)
        return page

    yield signed_in
    for context in contexts:
        context.close()


def screenshot(page: Any, name: str) -> Path:
    """A picture of the page: into docs/screenshots/ under ``make screenshots``
    (CASINO_RECORD_SCREENSHOTS=1), else beside the test's other temporary files, so that a test run
    leaves the repository as it found it."""
    folder = SCREENSHOTS if os.environ.get("CASINO_RECORD_SCREENSHOTS") == "1" else _scratch()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def _scratch() -> Path:
    return Path(os.environ.get("TMPDIR", "/tmp")) / "casino-screenshots"
