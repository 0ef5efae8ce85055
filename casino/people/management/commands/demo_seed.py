"""Fill a fresh database with the demo casino: its people, and a day of the house.

On a fresh database everything is recorded on a simulated clock, yesterday from 09:00 (the
accounts opened) through the day's play (``casino/simulation/day.py``) to this morning's séance
left open, so every act bears a plausible time and all of them lie before now; then, on the real
clock, the day's register is asked for and the worker's first job (a chain verification).
Idempotent: run again, it records nothing twice and keeps the same logins (var/demo-logins.json,
never committed). ``demo_check`` waits for the worker's results; ``casino.demo_guide`` says which
login does which job.
"""

from __future__ import annotations

import contextlib
import json
import random
import secrets
import time
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from casino import clock
from casino.clock import ClockError
from casino.floor.models import Table
from casino.outbox.outbox import enqueue
from casino.people.roles import Role
from casino.people.services import (
    account_setup,
    maintenance_setup_code,
    needs_second_factor,
    new_totp_key,
    people_bootstrap,
    staff_create,
    staff_issue_setup_code,
    totp_secret_base32,
)
from casino.simulation import pace

SEED = 1854  # the same day every time
DEMO_STAFF = [
    ("directeur", "Hélène Marchand", Role.DIRECTEUR, "DIR-1851"),
    ("comite", "Auguste Renard", Role.COMITE, "CD-0412"),
    ("chef", "Paul Weih", Role.CHEF_DE_PARTIE, "CP-0077"),
    ("tailleur", "Jean Bénazet", Role.TAILLEUR, "TA-0311"),
    ("croupier", "Louise Vidal", Role.CROUPIER, "CR-0528"),
    # The second crew, at table 2 while the first plays table 1.
    ("chef2", "Émile Garnier", Role.CHEF_DE_PARTIE, "CP-0081"),
    ("tailleur2", "Rose Castel", Role.TAILLEUR, "TA-0325"),
    ("croupier2", "Henri Delmas", Role.CROUPIER, "CR-0533"),
    # The cercle's chef de partie and croupier, at table 5 (the players deal: no tailleur).
    ("chef3", "Victor Lambert", Role.CHEF_DE_PARTIE, "CP-0093"),
    ("croupier3", "Jeanne Roussel", Role.CROUPIER, "CR-0547"),
    ("caissier", "Marc Dufour", Role.CAISSIER, "CA-0190"),
    ("commissaire", "Commissaire Lefèvre", Role.COMMISSAIRE, "Commission n° 54-112"),
    ("inspecteur", "Inspectrice Morel", Role.INSPECTEUR, "SCCJ-2207"),
    ("auditeur", "Claire Fontaine", Role.AUDITEUR, "AI-0031"),
]


def _set_up(username: str, code: str) -> dict[str, str | None]:
    """What the person does with their code on /account/setup/: a password, and a TOTP device
    confirmed by its current code when a role requires one."""
    from django_otp.oath import TOTP

    user = User.objects.get(username=username)
    password = secrets.token_urlsafe(9)
    key = new_totp_key() if needs_second_factor(user) else None
    first_code = None
    if key:
        # The previous step's code (still accepted), so the current one opens the admin at once.
        if time.time() % 30 > 29:
            time.sleep(1.1)
        device = TOTP(bytes.fromhex(key))
        device.time = time.time() - 30
        first_code = f"{device.token():06d}"
    account_setup(
        username=username, code=code, password=password, totp_key=key, otp_token=first_code
    )
    return {"password": password, "totp_secret": totp_secret_base32(key) if key else None}


class Command(BaseCommand):
    help = "Create the demo casino: its people and, on a fresh database, a day of play."

    def handle(self, *args: Any, **options: Any) -> None:
        from casino.reports.services import registers_due
        from casino.simulation.day import yesterday_at
        from casino.simulation.timeline import simulated_stretch

        fresh = not Table.objects.exists()
        rng = random.Random(SEED)
        try:
            with simulated_stretch(yesterday_at(9)) if fresh else contextlib.nullcontext():
                self._staff(rng if fresh else None)
                if fresh:
                    self._the_day(rng)
        except ClockError as error:
            raise CommandError(f"{error}; `make clean` gives a fresh demo") from error
        with transaction.atomic():
            if fresh:
                # The beat asks hourly for the register of each closed day: not an hour from now.
                registers_due()
            enqueue("audit.chain_verify")
        if fresh:
            self.stdout.write(
                "demo day recorded: yesterday's séances at tables 1, 2 and 3, Pharao at table 4 "
                "and the cercle at table 5, played and closed (their reports and the day's "
                "register are rendered by the worker); sealed packs in store, one seal read as "
                "RF-2026-0030 (an anomaly to review); disputes under review; a police visit "
                "awaiting the director's follow-up; this morning's séances open at table 1, the "
                "cards cut, and at the cercle, four players seated"
            )
        self.stdout.write(f"demo logins: {settings.VAR_DIR / 'demo-logins.json'}")

    def _staff(self, rng: random.Random | None = None) -> dict[str, dict[str, str | None]]:
        """The demo people, made as a real house makes them: ``people_bootstrap`` gives the
        director, the commissioner and the inspector; the director opens the other accounts; each
        person then uses their setup code as on /account/setup/ (a password, and a TOTP device
        when a role requires one: its secret is kept in var/demo-logins.json for
        ``manage.py demo_totp``). The superuser ``admin`` gets his code from the maintenance
        command's service. ``rng``: on a simulated clock, each act a few minutes after the
        last."""

        def later() -> None:
            if rng is not None:
                pace.let_pass(rng, pace.DESK)

        store = settings.VAR_DIR / "demo-logins.json"
        logins: dict[str, Any] = json.loads(store.read_text()) if store.exists() else {}
        with transaction.atomic():
            if not User.objects.filter(username="admin").exists():
                User.objects.create_superuser("admin", "", None, date_joined=clock.now())
                later()
                logins["admin"] = _set_up("admin", maintenance_setup_code(username="admin"))
            first = {person[2]: person for person in DEMO_STAFF}
            if not User.objects.filter(username=first[Role.DIRECTEUR][0]).exists():
                later()
                codes = people_bootstrap(
                    **{
                        role.value: (username, full_name, licence)
                        for username, full_name, role, licence in first.values()
                        if role in (Role.DIRECTEUR, Role.COMMISSAIRE, Role.INSPECTEUR)
                    }
                )
                for username, code in codes.items():
                    later()
                    logins[username] = _set_up(username, code)
            directeur = User.objects.get(username=first[Role.DIRECTEUR][0])
            for username, full_name, role, licence in DEMO_STAFF:
                if User.objects.filter(username=username).exists():
                    continue
                later()
                user = staff_create(
                    actor=directeur,
                    username=username,
                    full_name=full_name,
                    roles=[role],
                    licence_number=licence,
                )
                code = staff_issue_setup_code(actor=directeur, user=user)
                later()
                logins[username] = _set_up(username, code)
        store.parent.mkdir(parents=True, exist_ok=True)
        store.write_text(json.dumps(logins, indent=2))
        store.chmod(0o600)
        # Logins of an older demo (a bare password) are shown as they are.
        return {
            name: entry if isinstance(entry, dict) else {"password": entry, "totp_secret": None}
            for name, entry in logins.items()
        }

    def _the_day(self, rng: random.Random) -> None:
        """Yesterday's play and this morning's open séance (``casino/simulation/day.py``)."""
        from casino.simulation.day import record_the_day
        from casino.simulation.seance import Crew, House

        people = {u.username: u for u in User.objects.all()}
        record_the_day(
            house=House(people["directeur"], people["caissier"], people["commissaire"]),
            crews=(
                Crew(people["chef"], people["tailleur"], people["croupier"]),
                Crew(people["chef2"], people["tailleur2"], people["croupier2"]),
            ),
            cercle_crew=Crew(people["chef3"], None, people["croupier3"]),
            rng=rng,
        )
