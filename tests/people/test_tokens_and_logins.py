"""API tokens, the second factor and throttled logins, as the attacks they stop."""

from __future__ import annotations

import datetime as dt
import time

from django.contrib.auth.models import User
from django.test import Client
from django_otp.plugins.otp_totp.models import TOTPDevice
from rest_framework.test import APIClient

from audit.models import AuditEvent
from casino import clock
from casino.clock import ManualClock
from casino.people import services
from casino.people.models import ApiToken, LoginAttempt
from tests.actors import PASSWORD, login_admin, otp_code


def token_for(username: str, password: str = PASSWORD, otp: str = "") -> tuple[int, dict]:
    response = APIClient().post(
        "/api/v1/token", {"username": username, "password": password, "otp": otp}, format="json"
    )
    return response.status_code, response.json()


def with_token(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


# --- tokens -----------------------------------------------------------------------------------


def test_a_token_is_given_once_and_stored_only_as_its_hash(cast):
    status, body = token_for("tailleur")
    assert status == 200
    token = ApiToken.objects.get(user=cast.tailleur)
    assert body["token"] not in (token.key_hash, token.prefix)
    assert token.prefix == body["token"][:8]
    me = with_token(body["token"]).get("/api/v1/me").json()
    assert (me["username"], me["roles"], me["active"]) == ("tailleur", ["tailleur"], True)
    assert AuditEvent.objects.filter(action="token.issued", actor_id=cast.tailleur.pk).exists()


def test_the_roles_that_need_a_second_factor_give_it_for_a_token(cast):
    status, body = token_for("directeur")
    assert (status, body["code"]) == (401, "invalid_credentials")
    status, body = token_for("directeur", otp="000000")
    assert (status, body["code"]) == (401, "invalid_credentials")
    assert not ApiToken.objects.filter(user=cast.directeur).exists()
    time.sleep(1.1)  # the device itself waits 1 s after a wrong code (2 s, 4 s... after more)
    status, body = token_for("directeur", otp=otp_code(cast.directeur))
    assert status == 200


def test_tokens_expire_after_a_shift(cast, api, monkeypatch, settings):
    client = api(cast.tailleur)
    assert client.get("/api/v1/me").status_code == 200
    later = clock.now() + dt.timedelta(hours=settings.API_TOKEN_HOURS, seconds=1)
    monkeypatch.setattr(clock, "now", lambda: later)
    response = client.get("/api/v1/me")
    assert response.status_code == 401
    assert response.json()["code"] == "token_expired"
    assert set(response.json()) == {"code", "message", "where"}


def test_a_token_dies_at_logout(cast, api):
    client = api(cast.tailleur)
    assert client.post("/api/v1/logout").status_code == 204
    response = client.get("/api/v1/me")
    assert (response.status_code, response.json()["code"]) == (401, "token_revoked")
    assert ApiToken.objects.get(user=cast.tailleur).revoked_reason == "logout"
    assert AuditEvent.objects.filter(action="token.revoked", actor_id=cast.tailleur.pk).exists()


def test_a_token_dies_at_a_change_of_password(cast, api):
    client = api(cast.chef)
    services.account_password_change(
        user=cast.chef, old_password=PASSWORD, new_password="chef-new-phrase"
    )
    response = client.get("/api/v1/me")
    assert (response.status_code, response.json()["code"]) == (401, "token_revoked")


def test_a_token_dies_with_any_password_change_even_around_the_services(cast, api):
    client = api(cast.chef)
    user = User.objects.get(pk=cast.chef.pk)
    user.set_password("changed-by-hand-on-the-server")
    user.save()
    assert ApiToken.objects.get(user=user).revoked_at is None  # nothing revoked it...
    assert client.get("/api/v1/me").status_code == 401  # ...yet it no longer opens anything


def test_a_token_dies_at_deactivation(cast, api):
    client = api(cast.croupier)
    services.staff_deactivate(actor=cast.directeur, user=cast.croupier, reason="left the house")
    response = client.get("/api/v1/me")
    assert (response.status_code, response.json()["code"]) == (401, "token_revoked")
    assert ApiToken.objects.get(user=cast.croupier).revoked_reason == "deactivated"


def test_unknown_and_missing_tokens_are_refused(cast):
    response = with_token("0" * 40).get("/api/v1/me")
    assert (response.status_code, response.json()["code"]) == (401, "token_invalid")
    response = APIClient().get("/api/v1/me")
    assert (response.status_code, response.json()["code"]) == (401, "not_authenticated")


def test_one_lists_only_ones_own_tokens(cast, api):
    api(cast.tailleur)
    api(cast.chef)
    page = api(cast.directeur).get("/api/v1/tokens").json()
    assert page["next"] is None
    mine = page["results"]
    own = ApiToken.objects.get(user=cast.directeur)
    assert [t["prefix"] for t in mine] == [own.prefix]
    assert "key" not in mine[0]
    assert "token" not in mine[0]
    assert "key_hash" not in mine[0]
    root_sees = api(cast.root).get("/api/v1/tokens").json()["results"]
    assert [t["prefix"] for t in root_sees] == [ApiToken.objects.get(user=cast.root).prefix]


# --- throttling -------------------------------------------------------------------------------


def test_the_token_endpoint_locks_a_username_after_repeated_failures(cast, settings):
    settings.LOGIN_FAILURE_LIMIT = 3
    assert token_for("tailleur", "wrong")[0] == 401
    assert token_for("tailleur")[0] == 200  # a success clears the count
    for _ in range(3):
        assert token_for("tailleur", "wrong")[0] == 401
    tokens = ApiToken.objects.count()
    status, body = token_for("tailleur")  # the right password, too late
    assert (status, body["code"]) == (429, "too_many_attempts")
    assert set(body) == {"code", "message", "where"}
    assert ApiToken.objects.count() == tokens
    assert token_for("croupier")[0] == 200  # another username is not locked


def test_the_lock_lifts_after_the_lockout(cast, settings, monkeypatch):
    settings.LOGIN_FAILURE_LIMIT = 2
    for _ in range(2):
        token_for("tailleur", "wrong")
    assert token_for("tailleur")[0] == 429
    later = clock.wall() + dt.timedelta(minutes=settings.LOGIN_LOCKOUT_MINUTES, seconds=1)
    monkeypatch.setattr(clock, "wall", lambda: later)
    assert token_for("tailleur")[0] == 200


def test_a_simulations_clock_neither_hides_attempts_nor_lifts_the_lock(cast, settings):
    settings.LOGIN_FAILURE_LIMIT = 2
    with ManualClock(clock.wall() - dt.timedelta(days=1)):
        for _ in range(2):
            token_for("tailleur", "wrong")
    assert token_for("tailleur")[0] == 429  # stamped by the machine's time, they count now
    with ManualClock(clock.wall() + dt.timedelta(hours=1)):
        assert token_for("tailleur")[0] == 429


def test_the_admin_login_is_throttled_too(cast, settings):
    settings.LOGIN_FAILURE_LIMIT = 3
    client = Client()
    for _ in range(3):
        page = client.post("/admin/login/", {"username": "chef", "password": "wrong"})
        assert page.status_code == 200
    page = client.post("/admin/login/", {"username": "chef", "password": PASSWORD})
    assert page.status_code == 200
    assert "trop de connexions manquées".encode() in page.content
    assert "_auth_user_id" not in client.session
    assert LoginAttempt.objects.filter(username="chef", ok=False, where="admin").count() == 3


def test_an_admin_success_clears_the_count(cast, settings):
    settings.LOGIN_FAILURE_LIMIT = 2
    client = Client()
    client.post("/admin/login/", {"username": "chef", "password": "wrong"})
    login_admin(client, cast.chef)
    client.logout()
    client.post("/admin/login/", {"username": "chef", "password": "wrong"})
    login_admin(client, cast.chef)  # one failure since the success: not locked


# --- the admin's second factor ----------------------------------------------------------------


def test_the_admin_refuses_a_director_without_his_totp_code(cast):
    client = Client()
    for code in ("", "000000"):
        page = client.post(
            "/admin/login/", {"username": "directeur", "password": PASSWORD, "otp_token": code}
        )
        assert page.status_code == 200
        assert b"le code TOTP est faux" in page.content
        assert "_auth_user_id" not in client.session
    # A session opened without the code (as a bare password login would) does not open the admin.
    bare = Client()
    bare.force_login(cast.directeur)
    assert bare.get("/admin/").status_code == 302
    time.sleep(1.1)  # the device itself waits 1 s after a wrong code
    login_admin(client, cast.directeur)
    assert client.get("/admin/").status_code == 200


def test_a_director_without_a_device_is_told_to_use_his_setup_code(cast):
    TOTPDevice.objects.filter(user=cast.directeur).delete()
    client = Client()
    page = client.post("/admin/login/", {"username": "directeur", "password": PASSWORD})
    assert "/account/setup/" in page.content.decode()  # said in the refusal, in French
    english = client.post(
        "/admin/login/",
        {"username": "directeur", "password": PASSWORD},
        HTTP_ACCEPT_LANGUAGE="en",
    )
    assert "setup code" in english.content.decode()
    assert "_auth_user_id" not in client.session


def test_floor_staff_enter_with_a_password(cast):
    assert not TOTPDevice.objects.filter(user=cast.chef).exists()
    client = login_admin(Client(), cast.chef)
    assert client.get("/admin/").status_code == 200


def test_a_used_totp_code_is_not_accepted_twice(cast):
    code = otp_code(cast.auditeur)
    form = {"username": "auditeur", "password": PASSWORD, "otp_token": code}
    assert Client().post("/admin/login/", form).status_code == 302
    replay = Client()
    assert replay.post("/admin/login/", form).status_code == 200
    assert "_auth_user_id" not in replay.session
