"""The first people of an empty house (maintenance, on the server): a director, a commissioner and
an inspector, each with a one-time setup code printed here and handed to them. Refused once anyone
holds one of those roles; after that the director and the two bodies manage people."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from casino.errors import DomainError
from casino.people.services import people_bootstrap


class Command(BaseCommand):
    help = "Create the first directeur, commissaire and inspecteur and print their setup codes."

    def add_arguments(self, parser: Any) -> None:
        for role in ("directeur", "commissaire", "inspecteur"):
            parser.add_argument(f"--{role}", required=True, metavar="USERNAME")
            parser.add_argument(f"--{role}-name", default="", metavar="FULL_NAME")

    def handle(self, *args: Any, **options: Any) -> None:
        people = {
            role: (options[role], options[f"{role}_name"] or options[role])
            for role in ("directeur", "commissaire", "inspecteur")
        }
        try:
            codes = people_bootstrap(**people)
        except DomainError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write("Setup codes (shown once; each person uses theirs at /account/setup/):")
        for username, code in codes.items():
            self.stdout.write(f"  {username:<16} {code}")
