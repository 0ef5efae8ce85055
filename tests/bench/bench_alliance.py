"""Alliance at the cercle table: seeded deals recorded act by act through the services (the deal
opened, its 52 cards, each call, the contract, each of the 48 cards played, the last one settling
it), against plain bulk INSERTs of the same rows; the same kind of deal from its paper sheet
through ``deals.deal_record`` (the batch endpoint's service); and the queries each act costs. On
PostgreSQL, in one run, as the Pharao bench does for tailles."""

from __future__ import annotations

import statistics
import time
from collections import defaultdict
from types import SimpleNamespace
from typing import Any

from tests.bench.harness import (
    HELD_AGAINST_DURABILITY,
    act_floor,
    bench_people,
    bulk_copy,
    bulk_written,
    report,
)

DEALS = 20
WATCHED = 3  # further deals played with every act's queries counted (counting slows them)
NUMBER = 201  # the cercle table: clear of the other benches' tables


def _cast(prefix: str = "alliance") -> Any:
    """Who the cercle needs, as ``tests/floor/alliance_world.py`` names them."""
    from casino.people.roles import Role

    return SimpleNamespace(
        **bench_people(
            prefix, chef=Role.CHEF_DE_PARTIE, croupier=Role.CROUPIER, caissier=Role.CAISSIER
        )
    )


class DealCopier:
    """Copies of one deal played out (the deal, its calls, contract, cards played, settlement,
    the 52 cards dealt, the pack's shuffle, cut and pass, the movements it posted), written by
    plain bulk INSERTs: the rows the services wrote, without the services."""

    def __init__(self, deal: Any, pack_events: list[Any]) -> None:
        from casino.floor.models import Movement
        from casino.floor.play.alliance.models import (
            DealCall,
            DealContract,
            DealPlay,
            DealSettlement,
        )
        from shoes.models import CardLaid

        self.deal = deal
        self.calls = list(DealCall.objects.filter(deal=deal).order_by("index"))
        self.contract = list(DealContract.objects.filter(deal=deal))
        self.plays = list(DealPlay.objects.filter(deal=deal).order_by("index"))
        self.settlement = list(DealSettlement.objects.filter(deal=deal))
        self.cards = list(
            CardLaid.objects.filter(pack=deal.pack, taille=deal.pack_taille).order_by("seq")
        )
        self.pack_events = pack_events
        self.movements = list(Movement.objects.filter(reference=f"deal:{deal.pk}").order_by("id"))

    @property
    def rows(self) -> int:
        return 1 + sum(
            len(rows)
            for rows in (
                self.calls,
                self.contract,
                self.plays,
                self.settlement,
                self.cards,
                self.pack_events,
                self.movements,
            )
        )

    def copy(self, n: int) -> Any:
        from casino.floor.models import Movement
        from casino.floor.play.alliance.models import (
            Deal,
            DealCall,
            DealContract,
            DealPlay,
            DealSettlement,
        )
        from shoes.models import CardLaid, PackEvent

        cut = 1000 + n  # a cut of the pack no deal played
        (new,) = bulk_copy(Deal, [self.deal], number=10_000 + n, pack_taille=cut)
        bulk_copy(DealCall, self.calls, deal=new)
        bulk_copy(DealContract, self.contract, deal=new)
        bulk_copy(DealPlay, self.plays, deal=new)
        bulk_copy(DealSettlement, self.settlement, deal=new)
        bulk_copy(CardLaid, self.cards, seq=lambda i, _: 1_000_000 + n * 60 + i, taille=cut)
        bulk_copy(PackEvent, self.pack_events)
        bulk_copy(
            Movement,
            self.movements,
            reference=f"deal:{new.pk}",
            idempotency_key=lambda i, _: f"copy:deal:{new.pk}:{i}",
        )
        return new


class QueryCount:
    """Plays each act under ``CaptureQueriesContext`` and keeps its count by service (the last
    card, which settles the deal, apart)."""

    def __init__(self) -> None:
        self.by_act: dict[str, list[int]] = defaultdict(list)

    def __call__(self, service: Any, **arguments: Any) -> Any:
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        with CaptureQueriesContext(connection) as queries:
            done = service(**arguments)
        name = service.__name__
        if name == "deal_play" and done.outcome is not None:
            name = "deal_play, the last card (settles)"
        self.by_act[name].append(len(queries.captured_queries))
        return done

    def rows(self) -> list[tuple[str, str]]:
        out = []
        for name, counts in self.by_act.items():
            low, high = min(counts), max(counts)
            spread = (
                f"{low}" if low == high else f"median {statistics.median(counts):g} ({low}–{high})"
            )
            out.append((f"  {name}", f"{spread} queries"))
        return out


def run() -> None:
    from audit.models import AuditEvent
    from shoes.models import PackEvent
    from tests.floor.alliance_world import (
        cercle_pack,
        cercle_seance,
        cercle_table,
        play_act_by_act,
        sheet,
        simulated,
    )

    cast = _cast()
    shift = cercle_seance(cast, cercle_table(cast, number=NUMBER))
    cercle_pack(cast, shift, seal="alliance-bench-1")

    # Act by act through the services, each deal timed alone (the simulator's work before it).
    through_services, acts, copiers, events = [], [], [], []
    for seed in range(DEALS):
        sim = simulated(seed)
        last_event = PackEvent.objects.order_by("-id").values_list("id", flat=True).first()
        events_before = AuditEvent.objects.count()
        started = time.perf_counter()
        deal = play_act_by_act(cast, shift, sim)
        through_services.append(time.perf_counter() - started)
        acts.append(3 + len(sim.calls) + 48)  # opened, dealt, calls, contract, 48 cards
        events.append(AuditEvent.objects.count() - events_before)
        copiers.append(DealCopier(deal, list(PackEvent.objects.filter(id__gt=last_event))))

    counted = QueryCount()
    for seed in range(DEALS, DEALS + WATCHED):
        play_act_by_act(cast, shift, simulated(seed), act=counted)

    # The whole deal from its paper sheet, one transaction through the same acts.
    from casino.floor.play.alliance.deals import deal_record

    from_sheets = []
    for seed in range(100, 100 + DEALS):
        document = sheet(simulated(seed))
        started = time.perf_counter()
        deal_record(actor=cast.croupier, shift_id=shift.pk, sheet=document)
        from_sheets.append(time.perf_counter() - started)

    # Last: the copies take cuts of the pack that no deal played.
    by_bulk = bulk_written(
        lambda n: copiers[n].copy(n),
        copies=DEALS,
        subject="floor.deal",
        events_each=lambda n: events[n],
    )

    by_durable = bulk_written(
        lambda n: copiers[n].copy(DEALS + n),
        copies=DEALS,
        subject="floor.deal",
        events_each=lambda n: events[n],
        commits_each=lambda n: acts[n],
    )

    per_services = statistics.median(through_services)
    per_sheet = statistics.median(from_sheets)
    per_bulk = statistics.median(by_bulk)
    per_durable = statistics.median(by_durable)
    per_deal = statistics.median(acts)
    t_act = act_floor(deal, cast.croupier, "croupier")
    report(
        f"Alliance at the cercle table: {DEALS} seeded deals of 4 players (a median "
        f"{per_deal:g} acts each: opened, dealt, the calls, the contract, 48 cards) "
        "on PostgreSQL, medians per deal",
        [
            (
                "act by act through the services (one writer)",
                f"{per_services * 1000:,.0f} ms a deal, "
                f"{sum(acts) / sum(through_services):,.1f} acts/s",
            ),
            (
                "the whole sheet through deals.deal_record",
                f"{per_sheet * 1000:,.0f} ms a deal",
            ),
            (
                "the same rows by bulk INSERT",
                f"{per_bulk * 1000:,.1f} ms a deal (a median "
                f"{statistics.median(c.rows for c in copiers):g} rows and "
                f"{statistics.median(events):g} chained audit events)",
            ),
            (
                "ratio services / bulk",
                f"{per_services / per_bulk:.1f}x ({HELD_AGAINST_DURABILITY})",
            ),
            (
                "an act's fixed part (its round locked, an audit event, the commit)",
                f"{t_act * 1000:.2f} ms; x {per_deal:g} acts a deal: "
                f"{per_deal * t_act / per_bulk:.1f}x the bulk deal",
            ),
            (
                "the same rows by bulk INSERT, one durable transaction an act",
                f"{per_durable * 1000:,.1f} ms a deal; services / that: "
                f"{per_services / per_durable:.1f}x (aim: within 5x)",
            ),
            ("ratio deal_record / bulk", f"{per_sheet / per_bulk:.1f}x"),
            (f"queries per act ({WATCHED} deals, savepoints included)", ""),
            *counted.rows(),
        ],
    )
