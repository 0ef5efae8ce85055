"""Fill a fresh database with the demo casino: one person per role, and a first background job.

Idempotent: run again, it creates nothing twice and prints the same logins (kept in var/, never
committed). Later issues add posted règlements, tables, packs and a simulated day of play here.
"""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from casino.outbox.models import OutboxMessage
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

DEMO_STAFF = [
    ("directeur", "Hélène Marchand", Role.DIRECTEUR, "DIR-1851"),
    ("comite", "Auguste Renard", Role.COMITE, "CD-0412"),
    ("chef", "Paul Weih", Role.CHEF_DE_PARTIE, "CP-0077"),
    ("tailleur", "Jean Bénazet", Role.TAILLEUR, "TA-0311"),
    ("croupier", "Louise Vidal", Role.CROUPIER, "CR-0528"),
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
    help = "Create the demo casino's staff (one per role) and print their logins."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--wait-for-worker",
            action="store_true",
            help="wait until the Celery worker has run the first job (make demo)",
        )

    def handle(self, *args: Any, wait_for_worker: bool = False, **options: Any) -> None:
        logins = self._staff()
        self._card_room()
        with transaction.atomic():
            message = enqueue("audit.chain_verify")
        self.stdout.write("\nDemo logins (admin and API), also in var/demo-logins.json:")
        for username, login in logins.items():
            second = (
                f"  TOTP: python manage.py demo_totp {username}" if login["totp_secret"] else ""
            )
            self.stdout.write(f"  {username:<12} {login['password']}{second}")
        if wait_for_worker:
            self._wait(message.pk)
            self._wait_for_reports()
        else:
            self.stdout.write(
                "signed séance reports: admin > Rapports signés (rendered by the worker)"
            )

    def _wait_for_reports(self, timeout: float = 300.0) -> None:
        """The closed séances' signed reports, rendered by the worker, verified here."""
        from casino.reports.models import Report
        from casino.reports.signing import verify_pdf

        deadline = time.monotonic() + timeout
        for report in Report.objects.select_related("outbox").order_by("id"):
            while report.rendered_at is None:
                if report.outbox is not None and report.outbox.last_error:
                    raise CommandError(f"{report} failed: {report.outbox.last_error}")
                if time.monotonic() > deadline:
                    raise CommandError(f"{report} was not rendered in {timeout} s")
                time.sleep(0.5)
                report = Report.objects.select_related("outbox").get(pk=report.pk)
            verdict = verify_pdf(report.pdf.read())
            report.pdf.close()
            self.stdout.write(
                f"{report}: {report.pdf.path} ({report.pages} pages), "
                f"signature {'valid' if verdict.ok else 'NOT VALID'}"
            )

    def _staff(self) -> dict[str, dict[str, str | None]]:
        """The demo people, made as a real house makes them: ``people_bootstrap`` gives the
        director, the commissioner and the inspector; the director opens the other accounts; each
        person then uses their setup code as on /account/setup/ (a password, and a TOTP device
        when a role requires one: its secret is kept in var/demo-logins.json for
        ``manage.py demo_totp``). The superuser ``admin`` gets his code from the maintenance
        command's service."""
        store = settings.VAR_DIR / "demo-logins.json"
        logins: dict[str, Any] = json.loads(store.read_text()) if store.exists() else {}
        with transaction.atomic():
            if not User.objects.filter(username="admin").exists():
                User.objects.create_superuser("admin", "", None)
                logins["admin"] = _set_up("admin", maintenance_setup_code(username="admin"))
            first = {person[2]: person for person in DEMO_STAFF}
            if not User.objects.filter(username=first[Role.DIRECTEUR][0]).exists():
                codes = people_bootstrap(
                    **{
                        role.value: (username, full_name, licence)
                        for username, full_name, role, licence in first.values()
                        if role in (Role.DIRECTEUR, Role.COMMISSAIRE, Role.INSPECTEUR)
                    }
                )
                for username, code in codes.items():
                    logins[username] = _set_up(username, code)
            directeur = User.objects.get(username=first[Role.DIRECTEUR][0])
            for username, full_name, role, licence in DEMO_STAFF:
                if User.objects.filter(username=username).exists():
                    continue
                user = staff_create(
                    actor=directeur,
                    username=username,
                    full_name=full_name,
                    roles=[role],
                    licence_number=licence,
                )
                code = staff_issue_setup_code(actor=directeur, user=user)
                logins[username] = _set_up(username, code)
        store.parent.mkdir(parents=True, exist_ok=True)
        store.write_text(json.dumps(logins, indent=2))
        store.chmod(0o600)
        # Logins of an older demo (a bare password) are shown as they are.
        return {
            name: entry if isinstance(entry, dict) else {"password": entry, "totp_secret": None}
            for name, entry in logins.items()
        }

    def _card_room(self) -> None:
        """The règlements posted, sealed packs in store with their seals verified by the
        commissioner (one read with a different number: the anomaly queue shows it), the register
        page of the day signed, and half an hour of play at two tables (``simulate``)."""
        from django.core.management import call_command

        from casino import clock
        from casino.floor.models import Table
        from casino.floor.services import reglement_load_presets
        from shoes import services as packs

        if Table.objects.exists():
            return
        names = ["directeur", "chef", "tailleur", "croupier", "caissier", "commissaire"]
        staff = {u.username: u for u in User.objects.filter(username__in=names)}
        with transaction.atomic():
            reglement_load_presets(actor=staff["commissaire"], effective_from=clock.now().date())
            received = [
                packs.pack_receive(
                    actor=staff["caissier"],
                    kind="sixain",
                    maker="Grimaud",
                    maker_pack_numbers=f"G-{n}01..{n}06",
                    seal_number=f"RF-2026-{n:04d}",
                    sealing_authority="Préfecture de police",
                    store_location="coffre A",
                )
                for n in (1, 2, 3)
            ]
            for pack, read in zip(
                received, ("RF-2026-0001", "RF-2026-0002", "RF-2026-0030"), strict=True
            ):
                packs.pack_store(actor=staff["caissier"], pack_id=pack.pk)
                packs.seal_verify(
                    actor=staff["commissaire"],
                    pack_id=pack.pk,
                    seal_number_read=read,
                    verdict="intact",
                )
        call_command("simulate", tables=2, hours=0.5, seed=1854, stdout=self.stdout)
        packs.register_visa(
            actor=staff["commissaire"],
            day=clock.now().date(),
            remarks="Registre vu, scellés contrôlés.",
        )
        self._disputes_and_police(staff)
        self.stdout.write(
            "demo card room: 2 séances played and closed; sealed packs in store, one seal read "
            "as RF-2026-0030 (an anomaly to review); a dispute under review; a police visit "
            "awaiting the director's follow-up"
        )

    def _disputes_and_police(self, staff: dict[str, User]) -> None:
        """A patron contests a lost stake (the chef de partie has it under review), and the
        commissioner's visit of the day waits for the director's follow-up."""
        from casino import clock
        from casino.disputes.services import dispute_raise, dispute_review
        from casino.floor.models import Settlement
        from casino.police.services import observation_record

        lost = Settlement.objects.filter(outcome="lost").select_related("stake").first()
        if lost is not None:
            dispute = dispute_raise(
                actor=staff["croupier"],
                subject="stake",
                subject_id=lost.stake_id,
                claim="the patron says the plaque was on the other colour",
                on_behalf_of=lost.stake.holder.name,
                statement="J'avais misé avant la première carte, sur l'autre couleur.",
            )
            dispute_review(actor=staff["chef"], dispute_id=dispute.pk, note="patron heard")
        observation_record(
            actor=staff["commissaire"],
            visited_at=clock.now(),
            checks="seals of the sixains in store; règlement posted at both tables",
            injunctions="post the règlement at the cage as well",
        )

    def _wait(self, message_id: int, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            message = OutboxMessage.objects.get(pk=message_id)
            if message.done_at is not None:
                from audit.models import ChainVerification

                last = ChainVerification.objects.order_by("-at").first()
                self.stdout.write(
                    f"worker ran the audit chain verification: "
                    f"{'intact' if last and last.ok else 'BROKEN'}, "
                    f"{last.events if last else 0} events"
                )
                return
            time.sleep(0.5)
        raise CommandError(f"the worker did not run outbox request {message_id} in {timeout} s")
