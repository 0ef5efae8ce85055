"""Unavailable is not an error: with the database unreachable the API answers 503 with
``Retry-After`` in its usual JSON shape, the admin a plain page, the health endpoints say which
part is down. In process here, against a real address where no database listens; the fault suite
(tests/reliability) stops a real PostgreSQL under gunicorn."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from django.db import OperationalError, connection
from django.test import Client

from casino.runtime import free_port
from casino.unavailable import server_error, unavailable_part


@pytest.fixture
def database_down(django_db_blocker) -> Iterator[None]:  # type: ignore[no-untyped-def]
    """The application's connection pointed at a port where nothing listens (refused at once,
    as by a stopped server), for the test; then back."""
    saved = dict(connection.settings_dict)
    with django_db_blocker.unblock():
        connection.close()
        connection.settings_dict.update(HOST="127.0.0.1", PORT=str(free_port()))
        try:
            yield
        finally:
            connection.close()
            connection.settings_dict.clear()
            connection.settings_dict.update(saved)


def timed(fn):  # type: ignore[no-untyped-def]
    started = time.monotonic()
    response = fn()
    return response, time.monotonic() - started


@pytest.mark.usefixtures("database_down")
def test_the_api_answers_503_with_retry_after_when_the_database_is_down():
    client = Client()
    for method, path, body in (
        ("get", "/api/v1/me", None),
        ("post", "/api/v1/token", {"username": "tailleur", "password": "x"}),
        ("post", "/api/v1/coups", {"shift": 1}),
        ("get", "/api/v1/shifts/1", None),
    ):
        token = {} if path.endswith("token") else {"HTTP_AUTHORIZATION": "Token 0123456789abcdef"}
        response, seconds = timed(
            lambda method=method, path=path, body=body, token=token: getattr(client, method)(
                path, body, HTTP_IDEMPOTENCY_KEY="k", content_type="application/json", **token
            )
        )
        assert response.status_code == 503, (path, response.content)
        assert response["Retry-After"] == "2"
        assert response["Content-Type"] == "application/json"
        body = response.json()
        assert set(body) == {"code", "message", "where"}
        assert (body["code"], body["where"]) == ("unavailable", None)
        assert body["message"].startswith("la base de données ne répond pas")
        assert seconds < 1, (path, seconds)


@pytest.mark.usefixtures("database_down")
def test_the_admin_shows_a_plain_temporarily_unavailable_page():
    client = Client()
    client.cookies["sessionid"] = "a-signed-in-person"  # the session is read from the database
    response = client.get("/admin/")
    assert response.status_code == 503
    assert response["Retry-After"] == "2"
    page = response.content.decode()
    assert "momentanément indisponible" in page  # French unless the person asks for English
    assert "Traceback" not in page
    assert "OperationalError" not in page
    english = client.get("/admin/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "temporarily unavailable" in english.lower()
    assert "momentanément" not in english


@pytest.mark.usefixtures("database_down")
def test_health_live_answers_and_ready_names_the_database():
    client = Client()
    assert client.get("/health/live").json() == {"status": "live"}
    ready, seconds = timed(lambda: client.get("/health/ready"))
    assert ready.status_code == 503
    assert ready.json()["where"] == "database"
    assert ready["Retry-After"] == "2"
    assert seconds < 1


def test_health_ready_names_the_broker_when_it_is_down(db, settings):
    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"
    ready = Client().get("/health/ready")
    assert ready.status_code == 503
    assert ready.json()["where"] == "broker"
    assert ready.json()["message"].startswith("le courtier de tâches injoignable")


def test_health_ready_when_everything_answers(db):
    from django.conf import settings

    from tests.conftest import REQUIRE_SERVICES, redis_available

    if not redis_available(settings.REDIS_URL):
        if REQUIRE_SERVICES:
            pytest.fail(f"Redis is not reachable at {settings.REDIS_URL}")
        pytest.skip("no Redis")
    assert Client().get("/health/ready").json() == {
        "status": "ready",
        "database": "ok",
        "broker": "ok",
    }


def test_an_unreachable_database_outside_a_view_is_a_503_too(database_down, rf):
    """``handler500`` is called while Django handles an exception raised outside any view (a
    middleware saving the session, say)."""
    request = rf.get("/admin/")
    try:
        connection.ensure_connection()
    except OperationalError:
        response = server_error(request)
    assert response.status_code == 503
    assert response["Retry-After"] == "2"


def test_only_unavailability_is_unavailable():
    assert unavailable_part(ValueError("a bug")) is None
    wrapped = RuntimeError("while saving")
    wrapped.__cause__ = OperationalError("connection refused")
    assert unavailable_part(wrapped) == "database"
    import redis

    assert unavailable_part(redis.exceptions.ConnectionError("refused")) == "broker"


def test_the_health_command_names_what_does_not_answer(db, settings):
    from django.core.management import CommandError, call_command

    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"
    with pytest.raises(CommandError, match=r"^broker unavailable \(ConnectionError"):
        call_command("health")
