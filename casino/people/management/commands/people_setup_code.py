"""A setup code for a superuser (maintenance, on the server): with it he chooses a password and
enrols the second factor the admin asks of him. People with roles get theirs from their managers."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from casino.errors import DomainError
from casino.people.services import maintenance_setup_code


class Command(BaseCommand):
    help = "Issue a one-time setup code for a superuser (no role) and print it."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("username")

    def handle(self, *args: Any, username: str, **options: Any) -> None:
        try:
            code = maintenance_setup_code(username=username)
        except DomainError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(f"{username}: {code} (once, at /account/setup/)")
