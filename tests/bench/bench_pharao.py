"""Pharao at the table: whole tailles played act by act through the services (stakes, marks,
collects, 52 cards each, every draw settled by the engine from the records), against plain bulk
INSERTs of the same rows (the floor of the work), on PostgreSQL, in one run."""

from __future__ import annotations

import random
import time
from typing import Any

from tests.bench.harness import bench_house, bulk_chained_events, report

TABLES = 4
STAKES = 10  # placed before the first draw, on ten ranks
COPIES = 40


def _setup(prefix: str = "pharao") -> tuple[dict[str, Any], list[Any]]:
    from casino import clock
    from casino.floor.models import PostedReglement
    from casino.floor.services import reglement_load_presets, table_create
    from casino.people.roles import Role
    from casino.people.services import staff_create
    from shoes import services as packs
    from tests.bench.harness import open_seance

    directeur, commissaire = bench_house(prefix)
    staff: dict[str, Any] = {"directeur": directeur, "commissaire": commissaire}
    staff["caissier"] = staff_create(
        actor=directeur, username=f"{prefix}-caissier", full_name="c", roles=[Role.CAISSIER]
    )
    reglement_load_presets(actor=commissaire, effective_from=clock.now().date())
    posted = PostedReglement.objects.get(name="baden-1854")
    shifts = []
    for number in range(1, TABLES + 1):
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

        t = self.taille
        new = Taille.objects.bulk_create(
            [
                Taille(
                    shift=t.shift,
                    pack=t.pack,
                    pack_taille=1000 + n,
                    number=1000 + n,
                    reglement=t.reglement,
                    min_stake=t.min_stake,
                    max_stake=t.max_stake,
                    bottom_card=t.bottom_card,
                    opened_at=t.opened_at,
                    opened_by=t.opened_by,
                    phase="ended",
                )
            ]
        )[0]
        stakes = PharaoStake.objects.bulk_create(
            [
                PharaoStake(
                    taille=new,
                    ref=s.ref,
                    holder_id=s.holder_id,
                    rank=s.rank,
                    amount=s.amount,
                    draw=s.draw,
                    placed_at=s.placed_at,
                    placed_by_id=s.placed_by_id,
                )
                for s in self.stakes
            ]
        )
        by_old = {old.pk: copy for old, copy in zip(self.stakes, stakes, strict=True)}
        PharaoStakeAct.objects.bulk_create(
            [
                PharaoStakeAct(
                    stake=by_old[a.stake_id],
                    act=a.act,
                    amount=a.amount,
                    draw=a.draw,
                    by_id=a.by_id,
                    at=a.at,
                    mark=a.mark,
                    put=a.put,
                    returned=a.returned,
                )
                for a in self.acts
            ]
        )
        CardLaid.objects.bulk_create(
            [
                CardLaid(
                    pack=c.pack,
                    seq=100_000 + n * 60 + i,
                    taille=1000 + n,
                    card=c.card,
                    at=c.at,
                    actor_id=c.actor_id,
                    shift=c.shift,
                )
                for i, c in enumerate(self.cards)
            ]
        )
        draws = PharaoDraw.objects.bulk_create(
            [
                PharaoDraw(
                    taille=new,
                    number=d.number,
                    bank_card=d.bank_card,
                    players_card=d.players_card,
                    plie=d.plie,
                    settled_at=d.settled_at,
                    settled_by_id=d.settled_by_id,
                )
                for d in self.draws
            ]
        )
        draw_of = {old.pk: copy for old, copy in zip(self.draws, draws, strict=True)}
        PharaoSettlement.objects.bulk_create(
            [
                PharaoSettlement(
                    taille=new,
                    draw=draw_of.get(s.draw_id),
                    stake=by_old[s.stake_id],
                    outcome=s.outcome,
                    paid=s.paid,
                    returned=s.returned,
                    to_bank=s.to_bank,
                    mark=s.mark,
                )
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
                    shift=t.shift,
                    reference=f"taille:{new.pk}:copy",
                    idempotency_key=f"copy:taille:{new.pk}:{i}",
                    actor_id=m.actor_id,
                )
                for i, m in enumerate(self.movements)
            ]
        )
        return new


def _bulk(copies: int, events_per_taille: int) -> float:
    """The same rows, written with plain bulk INSERTs in one transaction, chained audit events
    included. Returns seconds."""
    from django.db import connection, transaction

    from audit.models import AuditEvent
    from casino.floor.play.pharao.models import Taille

    copier = TailleCopier(Taille.objects.filter(phase="ended").order_by("id").first())
    started = time.perf_counter()
    with transaction.atomic():
        last = AuditEvent.objects.order_by("-seq").first()
        seq, prev = (last.seq, last.hash) if last else (0, "0" * 64)
        for n in range(copies):
            new = copier.copy(n)
            seq, prev = bulk_chained_events(
                subject="floor.taille", subject_id=new.pk, count=events_per_taille, head=(seq, prev)
            )
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    return time.perf_counter() - started


def run() -> None:
    from audit.models import AuditEvent

    staff, shifts = _setup()
    rng = random.Random(1764)
    events_before = AuditEvent.objects.count()
    started = time.perf_counter()
    acts = sum(_play_taille(staff, number, shift, rng) for number, shift in shifts)
    t_services = time.perf_counter() - started
    played = len(shifts)
    events_per_taille = (AuditEvent.objects.count() - events_before) // played
    t_bulk = _bulk(COPIES, events_per_taille)
    per_services = t_services / played
    per_bulk = t_bulk / COPIES
    report(
        f"Pharao at the table: {played} whole tailles (26 draws, {STAKES} stakes, marks and "
        f"collects: {acts // played} acts each) on PostgreSQL",
        [
            ("through the services (one writer)", f"{26 / per_services:,.1f} draws/s"),
            ("", f"{acts / t_services:,.1f} acts/s, {per_services:.2f} s a taille"),
            ("the same rows by bulk INSERT, one transaction", f"{26 / per_bulk:,.1f} draws/s"),
            ("ratio services / bulk", f"{per_services / per_bulk:.1f}x"),
        ],
    )
