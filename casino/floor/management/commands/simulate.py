"""Play realistic séances through the same services as the table terminals.

``python manage.py simulate --tables 2 --hours 1 --seed 7``: each table's séance is opened with its
float counted and countersigned, its game's simulator plays it (Trente-et-Quarante's:
``casino/floor/play/trente_et_quarante/simulator.py``), a round taking about a minute at a real
table, and it closes with its closing count certified (so it balances: a variance is for real
rooms).
"""

from __future__ import annotations

import random
from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError

from casino import clock
from casino.floor.models import PostedReglement, Shift, Table
from casino.floor.registry import game_module
from casino.floor.services import (
    count_countersign,
    count_record,
    reglement_load_presets,
    rundown,
    shift_close,
    shift_open,
    table_create,
)

COUPS_PER_HOUR = 60
FLOAT = {"10000": 40, "2500": 40, "500": 100}
DENOMINATIONS = (10000, 2500, 500, 100, 50, 10, 5, 1)


def chips_for(total: int) -> dict[str, int]:
    """The chips a counting croupier finds for ``total``, largest denominations first."""
    if total < 0:
        raise CommandError(f"a table cannot hold {total}: the bank needed a fill")
    chips = {}
    for value in DENOMINATIONS:
        chips[str(value)], total = divmod(total, value)
    return {value: number for value, number in chips.items() if number}


class Command(BaseCommand):
    help = "Play simulated séances of Trente-et-Quarante through the services."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--tables", type=int, default=1)
        parser.add_argument("--hours", type=float, default=1.0)
        parser.add_argument("--seed", type=int, default=1854)
        parser.add_argument("--stakes", type=int, default=5, help="stakes per coup")

    def handle(
        self, *args: Any, tables: int, hours: float, seed: int, stakes: int, **options: Any
    ) -> None:
        staff = {
            u.username: u
            for u in User.objects.filter(
                username__in=[
                    "directeur",
                    "chef",
                    "tailleur",
                    "croupier",
                    "caissier",
                    "commissaire",
                ]
            )
        }
        missing = {"directeur", "chef", "tailleur", "croupier", "caissier", "commissaire"} - set(
            staff
        )
        if missing:
            raise CommandError(f"the demo staff is missing {sorted(missing)}: run demo_seed")
        rng = random.Random(seed)
        reglement_load_presets(actor=staff["commissaire"], effective_from=clock.now().date())
        played = 0
        for number in range(1, tables + 1):
            shift = self._shift(staff, number)
            game = game_module(shift.table.game)
            played += game.simulate(staff, shift, rng, int(hours * COUPS_PER_HOUR), stakes)
            closing = self._count(staff, shift.table, "closing", chips_for(rundown(shift).expected))
            shift_close(actor=staff["chef"], shift=shift, count_id=closing.pk)
        self.stdout.write(f"simulated {played} coups on {tables} table(s)")

    def _shift(self, staff: dict[str, User], number: int) -> Shift:
        table = Table.objects.filter(number=number).first()
        if table is None:
            posted = PostedReglement.objects.filter(name="trente-et-quarante-modern").first()
            assert posted is not None
            table = table_create(
                actor=staff["directeur"],
                number=number,
                game="trente-et-quarante",
                reglement_id=posted.pk,
                min_stake=500,
                max_stake=600_000,
            )
        open_shift = Shift.objects.filter(table=table, closed_at__isnull=True).first()
        return open_shift or shift_open(
            actor=staff["chef"],
            table=table,
            count_id=self._count(staff, table, "opening", FLOAT).pk,
            tailleur=staff["tailleur"],
            croupiers=[staff["croupier"]],
        )

    def _count(self, staff: dict[str, User], table: Table, moment: str, chips: Any) -> Any:
        """The croupier counts, the director countersigns: two acts of two people."""
        count = count_record(actor=staff["croupier"], table_id=table.pk, moment=moment, chips=chips)
        count_countersign(actor=staff["directeur"], count_id=count.pk)
        return count
