"""The floor: coups recorded and settled through the services, against plain bulk INSERTs of the
same rows (the floor of the work), on PostgreSQL."""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterable
from typing import Any

from tests.bench.harness import act_floor, bench_people, bulk_written, report

NOIR = "2 3 4 5 7 K".split()  # 31
ROUGE = "A 2 4 6 9 K".split()  # 32: noir wins, 12 cards a coup
COUPS_PER_PACK = 12  # suits rotate, so each card of a sixain (6 copies) lasts 12 coups
TABLES = 8
STAKES = 10


def _setup(
    tables: int = TABLES, prefix: str = "bench", first: int = 1
) -> tuple[dict[str, Any], list[Any]]:
    from casino import clock
    from casino.floor.services import reglement_load_presets
    from casino.people.roles import Role

    staff = bench_people(
        prefix,
        chef=Role.CHEF_DE_PARTIE,
        tailleur=Role.TAILLEUR,
        croupier=Role.CROUPIER,
        caissier=Role.CAISSIER,
    )
    staff["prefix"] = prefix
    reglement_load_presets(actor=staff["commissaire"], effective_from=clock.now().date())
    return staff, [open_table(staff, number) for number in range(first, first + tables)]


def open_table(staff: dict[str, Any], number: int) -> Any:
    """Table ``number`` with its own tailleur and croupier on duty and a sixain in play."""
    from casino.floor.models import PostedReglement
    from casino.floor.services import table_create
    from casino.people.roles import Role
    from casino.people.services import staff_create
    from shoes import services as packs
    from tests.bench.harness import open_seance

    for name, role in (
        ("tailleur", Role.TAILLEUR),
        ("croupier", Role.CROUPIER),
        ("chef", Role.CHEF_DE_PARTIE),  # a chef de partie is on duty at one table at a time
    ):
        staff[f"{name}{number}"] = staff_create(
            actor=staff["directeur"],
            username=f"{staff['prefix']}-{name}{number}",
            full_name=name,
            roles=[role],
        )
    table = table_create(
        actor=staff["directeur"],
        number=number,
        game="trente-et-quarante",
        reglement_id=PostedReglement.objects.get(name="baden-1854").pk,
        min_stake=500,
        max_stake=600_000,
    )
    shift = open_seance(
        chef=staff[f"chef{number}"],
        croupier=staff[f"croupier{number}"],
        directeur=staff["directeur"],
        table=table,
        chips={"10000": 50},
        tailleur=staff[f"tailleur{number}"],
        croupiers=[staff[f"croupier{number}"]],
    )
    pack = packs.pack_receive(
        actor=staff["caissier"],
        kind="sixain",
        maker="bench",
        maker_pack_numbers="-",
        seal_number=f"{staff['prefix']}-{number}",
        sealing_authority="-",
        store_location="-",
    )
    packs.pack_store(actor=staff["caissier"], pack_id=pack.pk)
    packs.seal_verify(
        actor=staff["commissaire"],
        pack_id=pack.pk,
        seal_number_read=pack.seal_number,
        verdict="intact",
    )
    packs.pack_open(actor=staff[f"chef{number}"], pack_id=pack.pk, shift_id=shift.pk)
    packs.pack_shuffle(actor=staff[f"croupier{number}"], pack_id=pack.pk)
    packs.pack_shuffle(actor=staff[f"tailleur{number}"], pack_id=pack.pk)
    packs.pack_cut(actor=staff[f"tailleur{number}"], pack_id=pack.pk, cut_by="bench")
    return shift


def _play_coup(staff: dict[str, Any], shift: Any, n: int) -> None:
    from casino.floor import coups

    tailleur = staff[f"tailleur{shift.table.number}"]
    croupier = staff[f"croupier{shift.table.number}"]
    coup = coups.coup_open(actor=tailleur, shift_id=shift.pk)
    for i in range(STAKES):
        coups.stake_place(
            actor=croupier,
            coup_id=coup.pk,
            ref=f"s{n}-{i}",
            holder=str(i % 9 + 1),
            chance=("rouge", "noir", "couleur", "inverse")[i % 4],
            amount=1000 + i,
        )
    coups.coup_close_betting(actor=tailleur, coup_id=coup.pk)
    noir_suit, rouge_suit = "SHDC"[n % 4], "HDCS"[n % 4]
    for code in [r + noir_suit for r in NOIR] + [r + rouge_suit for r in ROUGE]:
        coups.coup_lay_card(actor=tailleur, coup_id=coup.pk, code=code)
    coups.coup_settle(actor=croupier, coup_id=coup.pk)


class CoupCopier:
    """Copies of one settled coup (its stakes, cards, result, settlements and movements), written
    by plain bulk INSERTs: the rows the services write, without the services."""

    def __init__(self, coup: Any) -> None:
        from casino.floor.models import CoupResult, Movement, Settlement, Stake
        from shoes.models import CardLaid

        self.coup = coup
        self.stakes = list(Stake.objects.filter(coup=coup))
        self.cards = list(CardLaid.objects.filter(coup=coup).order_by("seq"))
        self.result = CoupResult.objects.get(coup=coup)
        self.settlements = list(Settlement.objects.filter(coup=coup).select_related("stake"))
        self.movements = list(Movement.objects.filter(reference__startswith=f"coup:{coup.pk}:"))

    def copy(self, number: int, *, shift: Any = None) -> Any:
        return self.copies([number], shift=shift)[0]

    def copies(self, numbers: Iterable[int], *, shift: Any = None) -> list[Any]:
        """Copies numbered ``numbers``: one bulk INSERT per table for all of them."""
        from casino.floor.models import Coup, CoupResult, Movement, Settlement, Stake
        from shoes.models import CardLaid

        c, r = self.coup, self.result
        shift = shift or c.shift
        numbers = list(numbers)
        coups = Coup.objects.bulk_create(
            [
                Coup(
                    shift=shift,
                    pack=c.pack,
                    number=number,
                    reglement=c.reglement,
                    opened_at=c.opened_at,
                    opened_by=c.opened_by,
                    phase="settled",
                )
                for number in numbers
            ]
        )
        stakes = Stake.objects.bulk_create(
            [
                Stake(
                    coup=new,
                    ref=s.ref,
                    holder_id=s.holder_id,
                    chance=s.chance,
                    amount=s.amount,
                    placed_at=s.placed_at,
                    placed_by_id=s.placed_by_id,
                )
                for new in coups
                for s in self.stakes
            ]
        )
        CardLaid.objects.bulk_create(
            [
                CardLaid(
                    pack=card.pack,
                    seq=100_000 + number * 20 + i,
                    card=card.card,
                    at=card.at,
                    actor_id=card.actor_id,
                    shift=shift,
                    coup=new,
                )
                for new, number in zip(coups, numbers, strict=True)
                for i, card in enumerate(self.cards)
            ]
        )
        CoupResult.objects.bulk_create(
            [
                CoupResult(
                    coup=new,
                    noir_cards=r.noir_cards,
                    rouge_cards=r.rouge_cards,
                    noir_total=r.noir_total,
                    rouge_total=r.rouge_total,
                    result=r.result,
                    couleur=r.couleur,
                    void=False,
                    last=False,
                    announcement=r.announcement,
                    prison_after=[],
                    settled_at=r.settled_at,
                    settled_by_id=r.settled_by_id,
                )
                for new in coups
            ]
        )
        by_ref = {(s.coup_id, s.ref): s for s in stakes}
        Settlement.objects.bulk_create(
            [
                Settlement(
                    coup=new,
                    stake=by_ref[new.pk, s.stake.ref],
                    outcome=s.outcome,
                    paid=s.paid,
                    returned=s.returned,
                    to_bank=s.to_bank,
                )
                for new in coups
                for s in self.settlements
            ]
        )
        Movement.objects.bulk_create(
            [
                Movement(
                    at=m.at,
                    debit_id=m.debit_id,
                    credit_id=m.credit_id,
                    amount=m.amount,
                    kind=m.kind,
                    shift=shift,
                    reference=f"coup:{new.pk}:copy",
                    idempotency_key=f"copy:{new.pk}:{i}",
                    actor_id=m.actor_id,
                )
                for new in coups
                for i, m in enumerate(self.movements)
            ]
        )
        return coups


def _bulk_floor(
    copier: CoupCopier, numbers: range, events_each: int, commits_each: int | None = None
) -> float:
    """The same rows, written with plain bulk INSERTs in one transaction: coups, stakes, cards,
    results, settlements, movements and chained audit events, numbered ``numbers``; or with
    ``commits_each`` durable transactions a coup (``bulk_written``). Returns seconds."""
    return sum(
        bulk_written(
            lambda n: copier.copy(numbers[n]),
            copies=len(numbers),
            subject="floor.coup",
            events_each=events_each,
            commits_each=commits_each,
        )
    )


def run() -> None:
    from audit.models import AuditEvent
    from casino.floor.models import Coup

    staff, shifts = _setup()
    # The bulk copies have a table of their own (their cards would count in the played packs): a
    # coup played there through the services is their template, and gives the events a coup has.
    template = open_table(staff, TABLES + 1)
    before = AuditEvent.objects.count()
    _play_coup(staff, template, 0)
    copier = CoupCopier(Coup.objects.get(shift=template))
    events_per_coup = AuditEvent.objects.count() - before
    # Round by round: a coup at each table through the services, then as many copies by bulk
    # INSERT. Interleaved, both meet the same machine: a neighbour's load on the two cores moved
    # the one-shot ratio from 5.5x to 11.8x between runs of the same code (issue 17).
    rounds = COUPS_PER_PACK - 1  # leave the last coup: the end of the taille is not the point
    acts = 1 + STAKES + 1 + len(NOIR + ROUGE) + 1  # open, the stakes, close, the cards, settle
    services: list[float] = []
    bulk: list[float] = []
    durable: list[float] = []
    for n in range(rounds):
        started = time.perf_counter()
        for shift in shifts:
            _play_coup(staff, shift, n)
        services.append((time.perf_counter() - started) / len(shifts))
        numbers = range(10_000 + n * len(shifts), 10_000 + (n + 1) * len(shifts))
        bulk.append(_bulk_floor(copier, numbers, events_per_coup) / len(shifts))
        numbers = range(20_000 + n * len(shifts), 20_000 + (n + 1) * len(shifts))
        durable.append(_bulk_floor(copier, numbers, events_per_coup, acts) / len(shifts))
    t_services, t_bulk = statistics.median(services), statistics.median(bulk)
    t_durable = statistics.median(durable)
    ratios = sorted(s / b for s, b in zip(services, bulk, strict=True))
    first = shifts[0]
    t_act = act_floor(
        Coup.objects.filter(shift=first).latest("pk"),
        staff[f"tailleur{first.table.number}"],
        "tailleur",
    )
    report(
        f"Floor: {rounds} rounds of {len(shifts)} coups (12 cards, {STAKES} stakes each) on "
        "PostgreSQL, each round through the services then by bulk INSERT (medians of the rounds)",
        [
            ("through the services (one writer)", f"{1 / t_services:,.1f} coups/s"),
            ("the same rows by bulk INSERT, one transaction", f"{1 / t_bulk:,.1f} coups/s"),
            (
                "ratio services / bulk",
                f"{t_services / t_bulk:.1f}x (rounds {ratios[0]:.1f}x to {ratios[-1]:.1f}x; "
                "aim: within 5x)",
            ),
            (
                "an act's fixed part (its round locked, an audit event, the commit)",
                f"{t_act * 1000:.2f} ms; x {acts} acts a coup: "
                f"{acts * t_act / t_bulk:.1f}x the bulk coup",
            ),
            (
                f"the same rows by bulk INSERT, {acts} durable transactions a coup (one an act)",
                f"{1 / t_durable:,.1f} coups/s; services / that: {t_services / t_durable:.1f}x",
            ),
        ],
    )
