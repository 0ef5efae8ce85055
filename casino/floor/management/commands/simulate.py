"""Play realistic séances through the same services as the table terminals.

``python manage.py simulate --tables 2 --hours 1 --seed 7``: for each table, sealed sixains are
received, their seals verified by the commissioner, opened, shuffled and cut; coups are dealt from
a seeded shuffle with random stakes (refaits, prisoners and insurance come as the cards fall); at
"les cartes passent" the tailleur scans the undealt cards, the chef de partie counts the sixain
back and a new one is opened. A coup takes about a minute at a real table. Each
séance closes with its closing count certified (so it balances: a variance is for real rooms).
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError

from casino import clock
from casino.floor import coups
from casino.floor.models import Account, PostedReglement, Shift, Table
from casino.floor.services import (
    balance,
    count_countersign,
    count_record,
    reglement_load_presets,
    rundown,
    shift_close,
    shift_open,
    table_account,
    table_create,
    transfer_countersign,
    transfer_record,
)
from casino.games.simulator import cut, random_stakes, shuffled
from shoes import services as packs

COUPS_PER_HOUR = 60
FLOAT = {"10000": 40, "2500": 40, "500": 100}
FLOAT_TOTAL = sum(int(value) * number for value, number in FLOAT.items())
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
            played += self._play(staff, shift, rng, int(hours * COUPS_PER_HOUR), stakes)
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

    def _new_pack(self, staff: dict[str, User], shift: Shift, rng: random.Random) -> list[str]:
        seal = f"SIM-{shift.table.number}-{rng.randrange(10**9):09d}"
        pack = packs.pack_receive(
            actor=staff["caissier"],
            kind="sixain",
            maker="Grimaud",
            maker_pack_numbers="simulated",
            seal_number=seal,
            sealing_authority="Préfecture de police",
            store_location="coffre S",
        )
        packs.pack_store(actor=staff["caissier"], pack_id=pack.pk)
        packs.seal_verify(
            actor=staff["commissaire"], pack_id=pack.pk, seal_number_read=seal, verdict="intact"
        )
        packs.pack_open(actor=staff["chef"], pack_id=pack.pk, shift_id=shift.pk)
        packs.pack_shuffle(actor=staff["croupier"], pack_id=pack.pk)
        packs.pack_shuffle(actor=staff["tailleur"], pack_id=pack.pk)
        packs.pack_cut(actor=staff["tailleur"], pack_id=pack.pk, cut_by="galerie (simulation)")
        cards = shuffled(rng)
        return [str(c) for c in cut(cards, rng.randint(1, len(cards) - 1))]

    def _play(
        self, staff: dict[str, User], shift: Shift, rng: random.Random, count: int, per_coup: int
    ) -> int:
        rules = shift.rules()
        talon: list[str] = []
        bank = table_account(shift.table, Account.Kind.BANK)
        for n in range(count):
            if not talon:
                talon = self._new_pack(staff, shift, rng)
            if balance(bank) < FLOAT_TOTAL // 2:  # the chef de partie asks the cage for chips
                fill = transfer_record(
                    actor=staff["caissier"], shift_id=shift.pk, kind="fill", amount=FLOAT_TOTAL
                )
                transfer_countersign(actor=staff["chef"], transfer_id=fill.pk)
            coup = coups.coup_open(actor=staff["tailleur"], shift_id=shift.pk)
            for s in random_stakes(rng, n, rng.randint(0, per_coup), rules, prefix="p"):
                on_refait = (
                    s.on_refait
                    if isinstance(s.on_refait, str) or s.on_refait is None
                    else f"move:{s.on_refait[1].value}"
                )
                coups.stake_place(
                    actor=staff["croupier"],
                    coup_id=coup.pk,
                    ref=s.id,
                    holder=str(rng.randint(1, 9)),
                    chance=s.chance.value,
                    amount=s.amount,
                    insured=s.insured,
                    on_refait=on_refait,
                )
            coups.coup_close_betting(actor=staff["tailleur"], coup_id=coup.pk)
            laid = None
            while talon and (laid is None or not laid.coup_complete):
                laid = coups.coup_lay_card(
                    actor=staff["tailleur"], coup_id=coup.pk, code=talon.pop(0)
                )
            result = coups.coup_settle(
                actor=staff["croupier"],
                coup_id=coup.pk,
                spoken="" if rng.random() > 0.02 else "rouge gagne",
            )
            if result.last:
                # Les cartes passent: the tailleur scans the undealt cards in the order they lie,
                # then the sixain is counted back and retired; a new sealed one will be opened
                # for the next coup.
                packs.cards_pass(
                    actor=staff["tailleur"], pack_id=coup.pack_id, undealt=talon, method="scanned"
                )
                packs.pack_retire(
                    actor=staff["chef"], pack_id=coup.pack_id, counted=dict(Counter(talon))
                )
                talon = []
        return count
