"""Create or update the application's database role and its grants (run as the owner, after migrate).

    python manage.py migrate --database owner
    python manage.py db_roles            # the role of DATABASE_URL, its password from that URL

Idempotent: every run revokes what the role holds and grants exactly what it may do, then checks
the result and exits 1 naming anything the application could still use to edit history.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connections, transaction

from audit.database_role import grant, violations


class Command(BaseCommand):
    help = "Create or update the application's database role and its grants (as the owner)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--database", default="owner", help="the owner's connection (default: owner)"
        )
        parser.add_argument(
            "--app-role", help="the application's role (default: the user of DATABASE_URL)"
        )
        parser.add_argument(
            "--app-password-file",
            type=Path,
            help="its password (default: the password of DATABASE_URL, if any)",
        )
        parser.add_argument(
            "--check", action="store_true", help="only check the role; exit 1 on any violation"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        owner = connections[options["database"]]
        app = connections["default"].settings_dict
        role = options["app_role"] or app.get("USER") or ""
        if not role or (not options["app_role"] and role == owner.settings_dict.get("USER")):
            raise CommandError(
                f"DATABASE_URL connects as the owner's role {role!r}: give the application a role "
                "of its own in DATABASE_URL (and the owner's URL in DATABASE_OWNER_URL), "
                "or name it with --app-role"
            )
        if not options["check"]:
            password = None if options["app_role"] else (app.get("PASSWORD") or None)
            if options["app_password_file"]:
                try:
                    password = options["app_password_file"].read_text().strip()
                except OSError as exc:
                    raise CommandError(f"--app-password-file: {exc}") from None
            try:
                with transaction.atomic(using=owner.alias):
                    grant(owner, role=role, password=password)
            except ValueError as exc:
                raise CommandError(str(exc)) from None
        found = violations(owner, role=role)
        if found:
            self.stderr.write("\n".join(found))
            raise SystemExit(1)
        self.stdout.write(f"database role {role} holds only the application's grants")
