"""The current TOTP code of a demo person, from the secret ``demo_seed`` kept in
var/demo-logins.json (demo people only: a real person's secret is on their phone, not here)."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django_otp.oath import totp


class Command(BaseCommand):
    help = "Print the current TOTP code of a demo login (see var/demo-logins.json)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("username")

    def handle(self, *args: Any, username: str, **options: Any) -> None:
        import base64

        store = settings.VAR_DIR / "demo-logins.json"
        logins = json.loads(store.read_text()) if store.exists() else {}
        secret = (
            (logins.get(username) or {}).get("totp_secret")
            if isinstance(logins.get(username), dict)
            else None
        )
        if not secret:
            raise CommandError(f"{username} has no demo TOTP secret in {store}")
        code = totp(base64.b32decode(secret))
        self.stdout.write(f"{code:06d}")
