"""A bad configuration stops the process at start, naming the variable to fix."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

START = "import django; django.setup(); print('started')"


def start(**env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "DJANGO_SETTINGS_MODULE": "casino.settings", **env}
    return subprocess.run(
        [sys.executable, "-c", START],
        env=full,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("variable", "value", "says"),
    [
        ("DATABASE_URL", "postgresql://casino@db.example:port/casino", "DATABASE_URL"),
        ("DATABASE_URL", "mysql://casino@localhost/casino", "is not a PostgreSQL URL"),
        ("DATABASE_URL", "postgresql://casino@localhost:5432", "names no database"),
        (
            "REDIS_URL",
            "http://localhost:6379",
            "REDIS_URL='http://localhost:6379' is not a Redis URL",
        ),
        ("REDIS_URL", "redis://localhost:notaport/0", "REDIS_URL"),
        ("DEBUG", "maybe", "DEBUG='maybe' is not a boolean"),
        ("SECRET_KEY", "short", "SECRET_KEY must be at least 32 characters"),
        (
            "SECRET_KEY_FILE",
            "/nonexistent/secret",
            "SECRET_KEY_FILE='/nonexistent/secret' cannot be read",
        ),
        ("OUTBOX_POLL_SECONDS", "soon", "OUTBOX_POLL_SECONDS='soon' is not an integer"),
    ],
)
def test_a_bad_value_fails_at_start_naming_the_variable(variable, value, says):
    result = start(**{variable: value})
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert says in result.stderr.strip().splitlines()[-1]


def test_a_password_in_a_bad_url_is_not_printed():
    result = start(DATABASE_URL="mysql://casino:hunter2@localhost/casino")
    assert result.returncode != 0
    assert "hunter2" not in result.stderr


def test_a_good_configuration_starts():
    result = start()
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "started"
