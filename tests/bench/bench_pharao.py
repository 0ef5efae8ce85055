"""Pharao at the table: whole tailles played act by act through the services (stakes, marks,
collects, 52 cards each, every draw settled by the engine from the records), against plain bulk
INSERTs of the same rows (the floor of the work), on PostgreSQL, in one run."""

from __future__ import annotations

import random
import statistics
import time
from typing import Any

from tests.bench.harness import (
    HELD_AGAINST_DURABILITY,
    act_floor,
    bench_people,
    bulk_copy,
    bulk_written,
    report,
)

TABLES = 4
STAKES = 10  # placed before the first draw, on ten ranks
ROUNDS = 5


def _setup(prefix: str = "pharao") -> tuple[dict[str, Any], list[Any]]:
    """``TABLES`` tables and one more, each with its séance and a single pack cut for a taille."""
    from casino import clock
    from casino.floor.models import PostedReglement
    from casino.floor.services import reglement_load_presets, table_create
    from casino.people.roles import Role
    from casino.people.services import staff_create
    from shoes import services as packs
    from tests.bench.harness import open_seance

    staff = bench_people(prefix, caissier=Role.CAISSIER)
    directeur, commissaire = staff["directeur"], staff["commissaire"]
    reglement_load_presets(actor=commissaire, effective_from=clock.now().date())
    posted = PostedReglement.objects.get(name="baden-1854")
    shifts = []
    for number in range(1, TABLES + 2):
        for name, role in (
            ("tailleur", Role.TAILLEUR),
            ("croupier", Role.CROUPIER),
            ("chef", Role.CHEF_DE_PARTIE),
        ):
            staff[f"{name}{number}"] = staff_create(
                actor=directeur,
                username=f"{prefix}-{name}{number}",
                full_name=name,
                roles=[role],
            )
        table = table_create(
            actor=directeur,
            number=100 + number,
            game="pharao",
            reglement_id=posted.pk,
            min_stake=100,
            max_stake=100_000,
        )
        shift = open_seance(
            chef=staff[f"chef{number}"],
            croupier=staff[f"croupier{number}"],
            directeur=directeur,
            table=table,
            chips={"10000": 50},
            tailleur=staff[f"tailleur{number}"],
            croupiers=[staff[f"croupier{number}"]],
        )
        seal = f"{prefix}-{number}"
        pack = packs.pack_receive(
            actor=staff["caissier"],
            kind="single",
            maker="bench",
            maker_pack_numbers="-",
            seal_number=seal,
            sealing_authority="-",
            store_location="-",
        )
        packs.pack_store(actor=staff["caissier"], pack_id=pack.pk)
        packs.seal_verify(
            actor=commissaire, pack_id=pack.pk, seal_number_read=seal, verdict="intact"
        )
        packs.pack_open(actor=staff[f"chef{number}"], pack_id=pack.pk, shift_id=shift.pk)
        packs.pack_shuffle(actor=staff[f"croupier{number}"], pack_id=pack.pk)
        packs.pack_shuffle(actor=staff[f"tailleur{number}"], pack_id=pack.pk)
        packs.pack_cut(actor=staff[f"tailleur{number}"], pack_id=pack.pk, cut_by="bench")
        shifts.append((number, shift))
    return staff, shifts


def _play_taille(staff: dict[str, Any], number: int, shift: Any, rng: random.Random) -> int:
    """One whole taille: ten stakes, a paroli on a simple stake that wins, a collect on a marked
    one; returns the number of acts."""
    from casino.floor.play.pharao import tailles
    from casino.games.cards import ONE_PACK

    tailleur, croupier = staff[f"tailleur{number}"], staff[f"croupier{number}"]
    cards = [str(c) for c in ONE_PACK]
    rng.shuffle(cards)
    taille = tailles.taille_open(actor=tailleur, shift_id=shift.pk, bottom_card=cards[-1])
    acts = 1
    marks: dict[int, str] = {}
    for i, rank in enumerate("A23456789T"[:STAKES]):
        stake = tailles.pharao_stake_place(
            actor=croupier,
            taille_id=taille.pk,
            ref=f"s{i}",
            holder=str(i % 9 + 1),
            rank=rank,
            amount=1000 + 100 * i,
        )
        marks[stake.pk] = "simple"
        acts += 1
    for code in cards:
        laid = tailles.taille_lay_card(actor=tailleur, taille_id=taille.pk, code=code)
        acts += 1
        if laid.settled is None or laid.end is not None:
            continue
        for line in laid.settled.settlements:
            if line.outcome.value != "won":
                continue
            stake_id = int(line.stake)
            if marks[stake_id] == "simple":
                tailles.pharao_stake_mark(actor=croupier, stake_id=stake_id, move="paroli")
                marks[stake_id] = "paroli"
            else:
                tailles.pharao_stake_collect(actor=croupier, stake_id=stake_id)
            acts += 1
    return acts


class TailleCopier:
    """Copies of one ended taille (its stakes, acts, cards, draws, settlements and movements),
    written by plain bulk INSERTs: the rows the services write, without the services."""

    def __init__(self, taille: Any) -> None:
        from casino.floor.models import Movement
        from casino.floor.play.pharao.models import (
            PharaoDraw,
            PharaoSettlement,
            PharaoStake,
            PharaoStakeAct,
        )
        from shoes.models import CardLaid

        self.taille = taille
        self.stakes = list(PharaoStake.objects.filter(taille=taille).order_by("id"))
        self.acts = list(PharaoStakeAct.objects.filter(stake__taille=taille).order_by("id"))
        self.cards = list(
            CardLaid.objects.filter(pack=taille.pack, taille=taille.pack_taille).order_by("seq")
        )
        self.draws = list(PharaoDraw.objects.filter(taille=taille).order_by("number"))
        self.settlements = list(PharaoSettlement.objects.filter(taille=taille).order_by("id"))
        self.movements = list(
            Movement.objects.filter(reference__startswith=f"taille:{taille.pk}:").order_by("id")
        )

    def copy(self, n: int) -> Any:
        from casino.floor.models import Movement
        from casino.floor.play.pharao.models import (
            PharaoDraw,
            PharaoSettlement,
            PharaoStake,
            PharaoStakeAct,
            Taille,
        )
        from shoes.models import CardLaid

        (new,) = bulk_copy(Taille, [self.taille], pack_taille=1000 + n, number=1000 + n)
        stakes = bulk_copy(PharaoStake, self.stakes, taille=new)
        stake = {old.pk: copy for old, copy in zip(self.stakes, stakes, strict=True)}
        bulk_copy(PharaoStakeAct, self.acts, stake=lambda _, a: stake[a.stake_id])
        bulk_copy(CardLaid, self.cards, seq=lambda i, _: 100_000 + n * 60 + i, taille=1000 + n)
        draws = bulk_copy(PharaoDraw, self.draws, taille=new)
        draw = {old.pk: copy for old, copy in zip(self.draws, draws, strict=True)}
        bulk_copy(
            PharaoSettlement,
            self.settlements,
            taille=new,
            draw=lambda _, s: draw.get(s.draw_id),
            stake=lambda _, s: stake[s.stake_id],
        )
        bulk_copy(
            Movement,
            self.movements,
            reference=f"taille:{new.pk}:copy",
            idempotency_key=lambda i, _: f"copy:taille:{new.pk}:{i}",
        )
        return new


def _cut_again(staff: dict[str, Any], number: int, shift: Any) -> None:
    """The table's pack passed after its taille, shuffled and cut for the next (not timed)."""
    from casino.floor.play.pharao.models import Taille
    from shoes import services as packs

    pack_id = Taille.objects.filter(shift=shift).latest("pk").pack_id
    packs.cards_pass(actor=staff[f"tailleur{number}"], pack_id=pack_id, undealt=[])
    packs.pack_shuffle(actor=staff[f"croupier{number}"], pack_id=pack_id)
    packs.pack_shuffle(actor=staff[f"tailleur{number}"], pack_id=pack_id)
    packs.pack_cut(actor=staff[f"tailleur{number}"], pack_id=pack_id, cut_by="bench")


def run() -> None:
    from audit.models import AuditEvent
    from casino.floor.play.pharao.models import Taille

    staff, shifts = _setup()
    rng = random.Random(1764)
    # The bulk copies have a table of their own (their cards would count in the played packs'
    # sequence): a taille played there through the services, not timed, is their template, gives
    # the events a taille has, and prepares the acts' statements on the connection (a terminal's
    # server has them prepared).
    (template_number, template), shifts = shifts[-1], shifts[:-1]
    events_before = AuditEvent.objects.count()
    acts_per_taille = _play_taille(staff, template_number, template, rng)
    events_per_taille = AuditEvent.objects.count() - events_before
    copier = TailleCopier(Taille.objects.get(shift=template))
    # Round by round, as the Trente-et-Quarante floor: a taille at each table through the
    # services, then as many copies by bulk INSERT in one transaction, then with one durable
    # transaction an act; medians of the rounds, each a taille's seconds.
    services: list[float] = []
    bulk: list[float] = []
    durable: list[float] = []
    copies = 0
    for round_ in range(ROUNDS):
        if round_:  # the first round's packs are cut already
            for number, shift in shifts:
                _cut_again(staff, number, shift)
        started = time.perf_counter()
        for number, shift in shifts:
            _play_taille(staff, number, shift, rng)
        services.append((time.perf_counter() - started) / len(shifts))
        for spent, commits_each in ((bulk, None), (durable, acts_per_taille)):
            first = copies
            spent.append(
                statistics.mean(
                    bulk_written(
                        lambda n, first=first: copier.copy(first + n),
                        copies=len(shifts),
                        subject="floor.taille",
                        events_each=events_per_taille,
                        commits_each=commits_each,
                    )
                )
            )
            copies += len(shifts)
    per_services, per_bulk = statistics.median(services), statistics.median(bulk)
    per_durable = statistics.median(durable)
    ratios = sorted(s / b for s, b in zip(services, bulk, strict=True))
    number, shift = shifts[0]
    t_act = act_floor(
        Taille.objects.filter(shift=shift).latest("pk"), staff[f"tailleur{number}"], "tailleur"
    )
    report(
        f"Pharao at the table: {ROUNDS} rounds of {len(shifts)} whole tailles (26 draws, {STAKES} "
        f"stakes, marks and collects: {acts_per_taille} acts each) on PostgreSQL, each round "
        "through the services then by bulk INSERT (medians of the rounds)",
        [
            ("through the services (one writer)", f"{26 / per_services:,.1f} draws/s"),
            (
                "",
                f"{acts_per_taille / per_services:,.1f} acts/s, {per_services:.2f} s a taille",
            ),
            ("the same rows by bulk INSERT, one transaction", f"{26 / per_bulk:,.1f} draws/s"),
            (
                "ratio services / bulk",
                f"{per_services / per_bulk:.1f}x (rounds {ratios[0]:.1f}x to {ratios[-1]:.1f}x; "
                f"{HELD_AGAINST_DURABILITY})",
            ),
            (
                "an act's fixed part (its round locked, an audit event, the commit)",
                f"{t_act * 1000:.2f} ms; x {acts_per_taille} acts a taille: "
                f"{acts_per_taille * t_act / per_bulk:.1f}x the bulk taille",
            ),
            (
                f"the same rows by bulk INSERT, {acts_per_taille} durable transactions a taille",
                f"{26 / per_durable:,.1f} draws/s; services / that: "
                f"{per_services / per_durable:.1f}x (aim: within 5x)",
            ),
        ],
    )
