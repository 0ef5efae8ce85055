"""The demo's day: yesterday in the house, recorded in seconds on a simulated clock, and this
morning's séance left open at table 1 for whoever tries the table page.

Yesterday (the house's time zone; in the small hours, the day before: ``yesterday_at``): the
règlements are posted at 10:00 and the tables set up; the cage receives the day's delivery of
sealed sixains at 11:00 and stores them; from 13:00 the commissioner reads their seals (one is
read wrong: the pack is rejected, an anomaly waits for review) and signs the register page of
the day. Table 1 opens about 14:00, table 2 an hour later
with a second crew, and table 3 in the evening with the first crew after its break: hours of
coups a couple of minutes apart, fills when a bank runs low, new sixains when the cards pass.
After its break the second crew deals Pharao at table 4 (a few tailles on a single pack from
the same delivery, with marks, approvals and the odd refused act: ``pharao.py``), counts it and
closes; the worker's report of that séance is the Pharao one. From the late afternoon the
cercle's own chef de partie and croupier hold table 5 (the players deal: no tailleur): Alliance
among patrons who changed money at the cage, deals of the engine's simple players recorded act by
act, the dealer going round the table, a player leaving and another sitting down, the fee box
counted at the close and the players paid out (``alliance.py``).
After the closings a patron's complaint at each game is put under review and the
commissioner, on his round, witnesses the destruction of the packs counted back and writes his
visit in the police register. This morning, minutes before now, the cercle opens again (the fee
box counted empty, four patrons seated, a sealed pack opened: the first deal left to record),
then the first crew opens table 1 again: the float countersigned, a sixain shuffled and cut, the
first coup left to play.

Everything lies before the moment the demo starts, so whatever the real clock records later (the
worker's reports, a person's first act) comes after it in the audit chain.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass
from typing import Any

from django.utils import timezone

from casino import clock
from casino.clock import ClockError, ManualClock
from casino.disputes.services import dispute_raise, dispute_review
from casino.floor.models import Settlement, Table
from casino.floor.play.alliance.models import DealSettlement
from casino.floor.play.pharao.models import PharaoSettlement
from casino.floor.services import reglement_load_presets
from casino.police.services import observation_record
from casino.simulation import pace
from casino.simulation.alliance import cercle_seance, cercle_table_for
from casino.simulation.pharao import pharao_seance, pharao_table_for
from casino.simulation.seance import Crew, House, Planted, seance, table_for
from casino.simulation.timeline import Play, play_together
from shoes import services as packs
from shoes.models import Pack, PackKind, PackState

DELIVERY = 12  # sixains: the day's tailles, this morning's, and some left in store
# Single packs: Pharao's of the day, the cercle's of the evening and of this morning, one left in
# store.
SINGLES = 4
PHARAO_TABLE = 4
CERCLE_TABLE = 5
MISREAD = 3  # the commissioner reads this one's seal wrong
SEAL_MISREAD_AS = "RF-2026-0030"


# The day's misconduct, for the detectors to find (docs/detectors.md): at table 2 the second
# crew's croupier gets announcements wrong and tries stakes after the first card, and its
# tailleur puts a slug of the first sixain back on top of the second; in the evening at table 3 a
# seat knows the cards.
TABLE_2 = Planted(misannounce=0.3, past_post=0.05, slug=40)
TABLE_3 = Planted(lucky_seat="12", lucky_amount=300_000, lucky_every=1)


@dataclass(frozen=True)
class Seances:
    """How many coups each séance of the day plays (about thirty an hour)."""

    table_1: int = 70
    table_2: int = 75
    table_3: int = 25
    pharao: int = 3  # tailles at table 4 (a taille takes ten to fifteen minutes)
    cercle: int = 25  # deals at table 5 (a deal takes six to eight minutes)


# Until this hour of the night the demo's yesterday is the calendar's day before yesterday: the
# demo's day, played from 09:00, ends late in the evening, and its simulated clock cannot pass the
# present, so in the small hours the calendar's yesterday has not had the time to be played (run
# at 00:30, its cercle opened near midnight, after the Pharao it comes before).
YESTERDAY_TURNS = 7


def yesterday_at(hour: int, minute: int = 0) -> dt.datetime:
    """That time on the demo's yesterday (the house's time zone): the day before the one under
    way, which turns at ``YESTERDAY_TURNS`` o'clock."""
    today = timezone.localdate(clock.wall() - dt.timedelta(hours=YESTERDAY_TURNS))
    day = today - dt.timedelta(days=1)
    return timezone.make_aware(dt.datetime.combine(day, dt.time(hour, minute)))


def _at(manual: ManualClock, hour: int, minute: int = 0) -> None:
    """Move on to that time of the simulated day, unless the day already runs later."""
    day = timezone.localdate(manual.peek())
    moment = timezone.make_aware(dt.datetime.combine(day, dt.time(hour, minute)))
    if moment > manual.peek():
        manual.move_to(moment)


def record_the_day(
    *,
    house: House,
    crews: tuple[Crew, Crew],
    cercle_crew: Crew,
    rng: random.Random,
    seances: Seances = Seances(),
) -> None:
    """The day, from a manual clock standing on yesterday's morning (``yesterday_at(9)``,
    after the accounts were opened), to this morning's open séances. ``cercle_crew``: the
    cercle's chef de partie and croupier (no tailleur)."""
    manual = clock.simulated()
    if manual is None or manual.until is None:
        raise ClockError("the demo's day is recorded on a simulated clock that stops at now")
    first, second = crews
    _at(manual, 10)
    reglement_load_presets(actor=house.commissaire, effective_from=clock.now().date())
    _at(manual, 10, 30)
    tables = []
    for number in (1, 2, 3):
        tables.append(table_for(house, number))
        pace.let_pass(rng, pace.DESK)
    pharao = pharao_table_for(house, PHARAO_TABLE)
    pace.let_pass(rng, pace.DESK)
    cercle = cercle_table_for(house, CERCLE_TABLE)
    pace.let_pass(rng, pace.DESK)
    _at(manual, 11)
    _card_room_morning(house, rng)
    _at(manual, 13)
    _seals_read(house, rng)
    start = manual.peek()
    play_together(
        [
            (start, _two_seances(first, house, rng, tables[0], tables[2], seances)),
            (
                start + dt.timedelta(hours=1, minutes=20),
                _second_crew(second, house, rng, tables[1], pharao, seances),
            ),
            (
                start + dt.timedelta(hours=3, minutes=45),
                cercle_seance(cercle, cercle_crew, house, rng, deals_to_play=seances.cercle),
            ),
        ]
    )
    pace.let_pass(rng, pace.BREAK)
    _complaint(first)
    _pharao_complaint(second)
    _cercle_complaint(cercle_crew)
    pace.let_pass(rng, pace.BREAK)
    _commissioners_round(house, rng)
    # This morning, minutes before now: the cercle opens with its players seated, and the first
    # crew opens table 1 again.
    morning = manual.until - dt.timedelta(minutes=40)
    if morning > manual.peek():
        manual.move_to(morning)
    play_together(
        [
            (
                manual.peek(),
                cercle_seance(cercle, cercle_crew, house, rng, deals_to_play=0, close=False),
            ),
            (
                manual.peek() + dt.timedelta(minutes=15),
                seance(tables[0], first, house, rng, coups=0, close=False),
            ),
        ]
    )


def _two_seances(
    crew: Crew,
    house: House,
    rng: random.Random,
    afternoon: Table,
    evening: Table,
    seances: Seances,
) -> Play:
    """The first crew's day: table 1 in the afternoon, a break, table 3 in the evening."""
    yield from seance(afternoon, crew, house, rng, coups=seances.table_1)
    yield pace.pause(rng, pace.BREAK)
    yield from seance(evening, crew, house, rng, coups=seances.table_3, planted=TABLE_3)


def _second_crew(
    crew: Crew, house: House, rng: random.Random, table: Table, pharao: Table, seances: Seances
) -> Play:
    """The second crew's day: table 2 in the afternoon, a break, Pharao at table 4."""
    yield from seance(table, crew, house, rng, coups=seances.table_2, planted=TABLE_2)
    yield pace.pause(rng, pace.BREAK)
    yield from pharao_seance(pharao, crew, house, rng, tailles_to_play=seances.pharao)


def _card_room_morning(house: House, rng: random.Random) -> None:
    """The delivery entered in the register at once, then each sixain put in the store."""
    delivered = packs.delivery_receive(
        actor=house.caissier,
        kind=PackKind.SIXAIN,
        maker="Grimaud",
        sealing_authority="Préfecture de police",
        store_location="coffre A",
        packs=[
            {"seal_number": f"RF-2026-{n:04d}", "maker_pack_numbers": f"G-{n}01..{n}06"}
            for n in range(1, DELIVERY + 1)
        ],
    )
    singles = packs.delivery_receive(
        actor=house.caissier,
        kind=PackKind.SINGLE,
        maker="Grimaud",
        sealing_authority="Préfecture de police",
        store_location="coffre A",
        packs=[
            {"seal_number": f"RF-2026-P{n:03d}", "maker_pack_numbers": f"G-P{n}"}
            for n in range(1, SINGLES + 1)
        ],
    )
    for pack in [*delivered, *singles]:
        pace.let_pass(rng, pace.STORE)
        packs.pack_store(actor=house.caissier, pack_id=pack.pk)


def _seals_read(house: House, rng: random.Random) -> None:
    """The commissioner reads every seal in the store before the openings, then signs the
    register page of the day."""
    for n, pack in enumerate(Pack.objects.filter(state=PackState.IN_STORE).order_by("id"), 1):
        pace.let_pass(rng, pace.SEAL)
        packs.seal_verify(
            actor=house.commissaire,
            pack_id=pack.pk,
            seal_number_read=SEAL_MISREAD_AS if n == MISREAD else pack.seal_number,
            verdict="intact",
        )
    pace.let_pass(rng, pace.DESK)
    packs.register_visa(
        actor=house.commissaire,
        day=timezone.localdate(clock.now()),
        remarks="Registre vu, scellés contrôlés.",
    )


def _complaint(crew: Crew) -> None:
    """A patron contests a lost stake; the chef de partie has it under review."""
    lost = (
        Settlement.objects.filter(outcome="lost", stake__coup__shift__table__number=1)
        .select_related("stake")
        .first()
    )
    if lost is None:
        return
    _taken_up(
        crew,
        20,
        subject="stake",
        subject_id=lost.stake_id,
        claim="the patron says the plaque was on the other colour",
        on_behalf_of=lost.stake.holder.name,
        statement="J'avais misé avant la première carte, sur l'autre couleur.",
    )


def _pharao_complaint(crew: Crew) -> None:
    """At the Pharao table a patron says his lost stake lay on another rank; the chef de partie
    has it under review (decided by recomputing the taille with the rank found)."""
    lost = (
        PharaoSettlement.objects.filter(outcome="lost", taille__shift__table__number=PHARAO_TABLE)
        # The chef de partie reviews it: a stake he approved an act on is not his to review.
        .exclude(stake__approvals__approved_by=crew.chef)
        .exclude(stake__acts__by=crew.chef)
        .exclude(stake__placed_by=crew.chef)
        .select_related("stake__holder")
        .order_by("id")
        .first()
    )
    if lost is None:
        return
    _taken_up(
        crew,
        10,
        subject="pharao_stake",
        subject_id=lost.stake_id,
        claim="the patron says his stake lay on the next card of the layout",
        on_behalf_of=lost.stake.holder.name,
        statement="Ma mise était sur la carte d'à côté.",
    )


def _cercle_complaint(crew: Crew) -> None:
    """At the cercle a player says a card of a deal he lost was recorded wrong; the chef de
    partie, who recorded none of its acts, has it under review (decided by replaying the deal as
    found)."""
    settled = DealSettlement.objects.filter(deal__shift__table__number=CERCLE_TABLE).order_by("id")
    found = ((s, p) for s in settled for p, marks in s.outcome["marks"].items() if marks < 0)
    lost, loser = next(found, (None, ""))
    if lost is None:
        return
    _taken_up(
        crew,
        10,
        subject="deal",
        subject_id=lost.deal_id,
        claim="the player says a card of the last trick was recorded wrong",
        on_behalf_of=loser,
        statement="Mon partenaire a joué la dame, pas le roi, au dernier pli.",
    )


def _taken_up(crew: Crew, minutes: int, **complaint: Any) -> None:
    """The croupier raises a patron's complaint; ``minutes`` later the chef de partie, who heard
    him, has it under review."""
    dispute = dispute_raise(actor=crew.croupier, **complaint)
    clock.elapse(dt.timedelta(minutes=minutes))
    dispute_review(actor=crew.chef, dispute_id=dispute.pk, note="patron heard")


def _commissioners_round(house: House, rng: random.Random) -> None:
    """The sixains counted back are destroyed before the commissioner; his visit goes in the
    police register, with an injunction the director must follow up."""
    arrived = clock.now()
    for pack in Pack.objects.filter(state=PackState.RETIRED).order_by("id"):
        pace.let_pass(rng, pace.SEAL)
        packs.pack_destroy(actor=house.commissaire, pack_id=pack.pk, remarks="détruit au broyeur")
    pace.let_pass(rng, pace.DESK)
    observation_record(
        actor=house.commissaire,
        visited_at=arrived,
        checks="seals of the sixains in store; règlement posted at the three tables; "
        "destruction of the sixains of the day",
        injunctions="post the règlement at the cage as well",
    )
