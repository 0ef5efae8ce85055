"""The demo's people are made through the services, and their logins work in a browser."""

from __future__ import annotations

import io
import json

from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from casino.people.management.commands.demo_seed import Command as DemoSeed
from casino.people.roles import Role
from casino.people.services import roles_of


def test_demo_people_log_in_with_their_password_and_totp(db, settings, tmp_path):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.VAR_DIR = tmp_path
    logins = DemoSeed()._staff()
    stored = json.loads((tmp_path / "demo-logins.json").read_text())
    assert stored == logins
    assert logins["croupier"]["totp_secret"] is None
    assert logins["directeur"]["totp_secret"]
    assert roles_of(User.objects.get(username="commissaire")) == {Role.COMMISSAIRE}
    assert roles_of(User.objects.get(username="admin")) == frozenset()
    assert DemoSeed()._staff() == logins  # run again: nothing new, the same logins

    out = io.StringIO()
    call_command("demo_totp", "directeur", stdout=out)
    client = Client()
    form = {"username": "directeur", "password": logins["directeur"]["password"]}
    response = client.post("/admin/login/", {**form, "otp_token": out.getvalue().strip()})
    assert response.status_code == 302
    assert client.get("/admin/").status_code == 200
