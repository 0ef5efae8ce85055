"""The demo's day: hours of play recorded on a simulated clock, every stamp inside the day, the
audit chain in order of time, and the real clock's acts after it."""

from __future__ import annotations

import datetime as dt
import itertools
import random
from collections import defaultdict

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.db import connection, models
from django.db.models import Sum
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.utils import timezone, translation

from audit.chain import verify_chain
from audit.models import AuditEvent
from casino.disputes.models import Dispute
from casino.floor.models import Account, CashTransfer, Coup, Duty, FloatCount, Movement, Shift
from casino.floor.play.alliance.models import CercleSeat, CercleSeatEnd
from casino.floor.play.alliance.selectors import deal_document
from casino.floor.play.pharao.models import PharaoStakeAct
from casino.floor.play.pharao.selectors import taille_document
from casino.floor.selectors import figures_of, shift_figures
from casino.floor.services import Rundown, balance, rundown, rundowns, till_account
from casino.games.replay import replay
from casino.people.management.commands.demo_seed import SEED
from casino.people.management.commands.demo_seed import Command as DemoSeed
from casino.reports.services import registers_due
from casino.simulation.alliance import FEE
from casino.simulation.day import Seances, record_the_day, yesterday_at
from casino.simulation.seance import Crew, House
from casino.simulation.timeline import simulated_stretch
from shoes.models import Pack, PackEvent, PackKind, PackState, RegisterVisa, SealVerification
from tests.api.floor_world import rolled_back

CERCLE_DEALS = 8

# Stamped by the real clock on purpose: django-otp stamps its devices itself, and a TOTP code is
# checked against the world's time anyway.
WALL_CLOCK = {("otp_totp", "totpdevice", "created_at"), ("otp_totp", "totpdevice", "last_used_at")}
# Deadlines: computed from the simulated time, they lie after it.
DEADLINES = {
    ("people", "setupcode", "expires_at"),
    ("people", "apitoken", "expires_at"),
    ("police", "observation", "follow_up_due"),
}


def stamps() -> dict[str, list[dt.datetime]]:
    """Every date and time stored in the database, by ``app.model.field``."""
    found: dict[str, list[dt.datetime]] = {}
    for model in apps.get_models():
        meta = model._meta
        for field in meta.get_fields():
            if not isinstance(field, models.DateTimeField):
                continue
            key = (meta.app_label, meta.model_name, field.name)
            if key in WALL_CLOCK or key in DEADLINES:
                continue
            values = model.objects.exclude(**{field.name: None}).values_list(field.name, flat=True)
            if values:
                found[".".join(key)] = list(values)
    return found


@pytest.fixture(scope="module")
def recorded_day(django_db_setup, django_db_blocker, signing_keys, tmp_path_factory):  # type: ignore[no-untyped-def]
    """The demo's people and a shorter day (the same acts, fewer coups), on a simulated clock
    from yesterday 09:00 that stops at the moment the module's first test began.

    Recorded once for the module (about 20 s) in a transaction that is never committed; each test
    works in a savepoint inside it (its ``db``), rolled back after it, as the API tests' house."""
    folder = tmp_path_factory.mktemp("demo-day")
    files = {"VAR_DIR": folder, "MEDIA_ROOT": str(folder / "media")}
    with (
        django_db_blocker.unblock(),
        override_settings(
            PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"],
            REPORT_SIGNING_PKCS12=str(signing_keys["pkcs12"]),
            REPORT_SIGNING_PASSPHRASE_FILE=str(signing_keys["passphrase"]),
            REPORT_TRUST_ROOTS=[str(signing_keys["ca"])],
            **files,
        ),
        translation.override("en"),
        rolled_back(),
    ):
        with connection.cursor() as cursor:  # see conftest: commit-time triggers fire now
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        rng = random.Random(SEED)
        with simulated_stretch(yesterday_at(9)) as manual:
            DemoSeed()._staff(rng)
            people = {u.username: u for u in User.objects.all()}
            record_the_day(
                house=House(people["directeur"], people["caissier"], people["commissaire"]),
                crews=(
                    Crew(people["chef"], people["tailleur"], people["croupier"]),
                    Crew(people["chef2"], people["tailleur2"], people["croupier2"]),
                ),
                cercle_crew=Crew(people["chef3"], None, people["croupier3"]),
                rng=rng,
                seances=Seances(table_1=30, table_2=35, table_3=10, cercle=CERCLE_DEALS),
            )
        assert manual.until is not None
        yield files, (yesterday_at(9), manual.until, stamps())


@pytest.fixture
def the_day(recorded_day, db, settings):  # type: ignore[no-untyped-def]
    files, day = recorded_day
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    for name, value in files.items():  # where the day's files are
        setattr(settings, name, value)
    return day


def local(moment: dt.datetime) -> dt.datetime:
    return timezone.localtime(moment)


@pytest.mark.parametrize(
    ("now_in_paris", "yesterday"),
    [
        ("2026-12-02 14:00", "2026-12-01"),
        ("2026-12-02 07:30", "2026-12-01"),
        # In the small hours the day before is still under way: the one before it is yesterday,
        # or its play would run into the present (these tests failed when run at 00:30).
        ("2026-12-02 00:30", "2026-11-30"),
        ("2026-12-02 06:59", "2026-11-30"),
    ],
)
def test_yesterday_is_the_gaming_day_before_the_one_under_way(monkeypatch, now_in_paris, yesterday):
    house = timezone.get_current_timezone()  # the settings' Europe/Paris
    now = dt.datetime.fromisoformat(now_in_paris).replace(tzinfo=house)
    monkeypatch.setattr("casino.clock.wall", lambda: now.astimezone(dt.UTC))
    assert local(yesterday_at(9)) == dt.datetime.fromisoformat(f"{yesterday} 09:00").replace(
        tzinfo=house
    )


def test_every_stamp_lies_inside_the_day_and_the_real_clocks_acts_come_after(the_day):
    start, until, found = the_day
    assert {"audit.auditevent.at", "floor.coup.opened_at", "shoes.cardlaid.at"} <= set(found)
    assert "auth.user.date_joined" in found  # the accounts were opened that morning too
    outside = {key: [v for v in values if not start <= v <= until] for key, values in found.items()}
    assert {key: values for key, values in outside.items() if values} == {}

    day_end = AuditEvent.objects.order_by("-seq").first()
    registers_due()  # on the real clock, as the beat asks
    times = list(AuditEvent.objects.order_by("seq").values_list("at", flat=True))
    assert times == sorted(times)
    after = AuditEvent.objects.filter(seq__gt=day_end.seq)
    assert after.exists()
    assert all(e.at > until for e in after)
    assert verify_chain().ok


def test_the_coups_are_minutes_apart_over_hours_in_a_day_in_order(the_day):
    start, until, _found = the_day
    the_day_runs_in_the_order_of_a_real_house(start, until)
    yesterday = start.date()
    by_table = defaultdict(list)
    for coup in Coup.objects.select_related("shift__table").order_by("opened_at"):
        if local(coup.opened_at).date() == yesterday:
            by_table[coup.shift.table.number].append(coup.opened_at)
    assert sorted(by_table) == [1, 2, 3]
    played = sorted(at for times in by_table.values() for at in times)
    assert played[-1] - played[0] > dt.timedelta(hours=2, minutes=30)
    minutes = {local(at).replace(second=0, microsecond=0) for at in played}
    assert len(minutes) > 0.9 * len(played)  # tables side by side may share a minute, rarely
    for times in by_table.values():
        gaps = [b - a for a, b in itertools.pairwise(times)]
        assert min(gaps) > dt.timedelta(seconds=45)  # stakes, eleven cards, the payments
        assert sorted(gaps)[len(gaps) // 2] < dt.timedelta(minutes=4)
        assert max(gaps) < dt.timedelta(minutes=40)  # the longest: a new sixain, or a fill


def test_the_second_crew_deals_pharao_at_table_4_in_the_evening(the_day):
    start, _until, _found = the_day
    seance = Shift.objects.get(table__number=4)
    assert (seance.table.game, seance.closed_at is not None) == ("pharao", True)
    assert Duty.objects.filter(shift=seance, person__username="tailleur2").exists()
    assert rundown(seance).variance == 0
    tailles = list(seance.tailles.order_by("number"))
    assert [(t.number, t.phase, t.pack.kind) for t in tailles] == [
        (n, "ended", PackKind.SINGLE) for n in (1, 2, 3)
    ]
    for taille in tailles:
        assert replay(taille_document(taille))["refused"] == []
        draws = list(taille.draws.order_by("number").values_list("settled_at", flat=True))
        assert len(draws) == 26
        assert local(draws[0]).date() == start.date()
        assert draws[-1] - taille.opened_at > dt.timedelta(minutes=4)  # a real table's pace
    assert PharaoStakeAct.objects.filter(act__in=["paroli", "appe"]).exists()
    assert balance(Account.objects.get(code="T4:layout")) == 0
    # A patron's complaint about a lost stake there, under review by the chef de partie.
    complaint = Dispute.objects.get(pharao_stake__isnull=False)
    assert (complaint.state, complaint.seance()) == ("under_review", seance)


def test_the_cercle_s_own_crew_holds_table_5_in_the_evening(the_day):
    start, _until, _found = the_day
    seance = Shift.objects.filter(table__number=5).earliest("opened_at")
    assert (seance.table.game, seance.closed_at is not None) == ("alliance", True)
    on_duty = set(Duty.objects.filter(shift=seance).values_list("person__username", "post"))
    assert on_duty == {("chef3", "chef_de_partie"), ("croupier3", "croupier")}
    deals = list(seance.deals.order_by("number"))
    assert [(d.number, d.phase) for d in deals] == [(n, "over") for n in range(1, CERCLE_DEALS + 1)]
    for deal in deals:
        assert replay(deal_document(deal)) == deal.settlement.outcome
    evening = local(deals[0].opened_at)
    assert (evening.date(), evening.hour >= 17) == (start.date(), True)
    gaps = [b.opened_at - a.opened_at for a, b in itertools.pairwise(deals)]
    assert min(gaps) > dt.timedelta(minutes=3)  # 52 cards dealt, the calls, 48 cards played
    figures = rundown(seance)
    fees = sum(FEE * len(d.players) for d in deals)
    assert (figures.result, figures.closing, figures.variance) == (fees, fees, 0)
    assert CercleSeatEnd.objects.filter(seating__shift=seance, reason="left").count() == 1
    # A player's complaint about a deal he lost, under review by the cercle's chef de partie.
    complaint = Dispute.objects.get(deal__isnull=False)
    assert (complaint.state, complaint.seance()) == ("under_review", seance)
    assert complaint.deal.settlement.outcome["marks"][complaint.on_behalf_of] < 0
    players = set(CercleSeat.objects.filter(shift=seance).values_list("patron__code", flat=True))
    paid_out = Movement.objects.filter(kind=Movement.Kind.CASH_OUT)  # none yet this morning
    assert set(paid_out.values_list("reference", flat=True)) == players


def the_day_runs_in_the_order_of_a_real_house(start: dt.datetime, until: dt.datetime) -> None:
    seances = list(Shift.objects.select_related("table").order_by("opened_at"))
    yesterday = [s for s in seances if local(s.opened_at).date() == start.date()]
    at = {s.table.number: s for s in yesterday}
    assert sorted(at) == [1, 2, 3, 4, 5]
    assert at[1] == yesterday[0]
    assert at[2].opened_at - at[1].opened_at > dt.timedelta(minutes=45)
    assert at[3].opened_at > at[1].closed_at  # the first crew, after its break
    assert at[1].opened_at < at[5].opened_at < at[4].opened_at  # the cercle's crew, from 17:00
    assert at[4].opened_at > at[2].closed_at  # the second crew, after its break
    first_opening = yesterday[0].opened_at
    assert all(v.at < first_opening for v in SealVerification.objects.all())
    assert SealVerification.objects.filter(verdict="mismatch").count() == 1
    visa = RegisterVisa.objects.get()
    assert visa.day == start.date()
    assert visa.at < first_opening
    for seance in yesterday:
        last = (
            seance.coups.order_by("-opened_at").first()
            or seance.tailles.order_by("-opened_at").first()
            or seance.deals.latest("opened_at")
        )
        closing = FloatCount.objects.get(shift=seance, moment="closing")
        assert last.opened_at < closing.at < seance.closed_at
    assert CashTransfer.objects.filter(kind="fill").exists()  # a bank ran low
    passed = PackEvent.objects.filter(kind=PackEvent.Kind.PASSED, pack__kind=PackKind.SIXAIN)
    assert passed.count() > 3  # sixains passed mid-séance, not only at the three closings
    destroyed = PackEvent.objects.filter(kind=PackEvent.Kind.DESTROYED)
    assert destroyed.count() == Pack.objects.filter(state=PackState.DESTROYED).count() > 0
    assert min(e.at for e in destroyed) > max(s.closed_at for s in yesterday)
    # This morning, minutes before now: table 1 open again, the cards cut, no coup yet; and the
    # cercle open at table 5 with its players seated and a pack opened, no deal yet.
    today = seances[-1]
    assert (today.table.number, today.closed_at, today.coups.count()) == (1, None, 0)
    assert until - dt.timedelta(minutes=30) < today.opened_at < until
    assert Duty.objects.filter(shift=today, person__username="tailleur", end=None).exists()
    assert Pack.objects.filter(state=PackState.IN_PLAY).count() == 1
    cercle = seances[-2]
    assert (cercle.table.number, cercle.closed_at, cercle.deals.count()) == (5, None, 0)
    assert until - dt.timedelta(minutes=45) < cercle.opened_at < today.opened_at
    assert Duty.objects.filter(shift=cercle, person__username="croupier3", end=None).exists()
    assert CercleSeat.objects.filter(shift=cercle, end=None).count() == 4
    assert Pack.objects.filter(state=PackState.OPENED).get().kind == PackKind.SINGLE
    assert Pack.objects.filter(state=PackState.VERIFIED).exists()  # some left in store


def ledger_rundown(seance: Shift) -> Rundown:
    """A séance's rundown as its definition reads the ledger, alone: what its till received and
    gave, by kind, and its last countersigned closing count."""
    till = till_account(seance.table)
    mine = Movement.objects.filter(shift=seance)
    cash = ["float", "fill", "credit"]

    def summed(**where: object) -> int:
        return int(mine.filter(**where).aggregate(s=Sum("amount"))["s"] or 0)

    won = summed(debit=till) - summed(debit=till, kind__in=cash)
    lost = summed(credit=till) - summed(credit=till, kind__in=cash)
    closing = (
        FloatCount.objects.filter(shift=seance, moment="closing", countersignature__isnull=False)
        .order_by("-id")
        .first()
    )
    return Rundown(
        summed(debit=till, kind="float"),
        summed(debit=till, kind="fill"),
        summed(credit=till, kind="credit"),
        won - lost,
        closing.total if closing and seance.closed_at else None,
    )


def test_the_days_seances_read_together_have_each_the_figures_it_has_alone(the_day):
    """A list's page and the day's register read the séances' figures together (issue 17): each
    séance's rundown is what the ledger says of its own till, and its figures are those it has
    read alone, in as many queries for the day as for one séance of each game."""
    shifts = list(Shift.objects.select_related("table").order_by("pk"))
    games = {s.table.game for s in shifts}
    assert games == {"trente-et-quarante", "pharao", "alliance"}
    together = rundowns(shifts)
    assert together == {s.pk: ledger_rundown(s) for s in shifts}
    # The day gives each part of the rundown something to count.
    assert all(any(getattr(r, part) for r in together.values()) for part in ("opening", "fills"))
    assert any(r.closing for r in together.values())
    assert {r.result > 0 for r in together.values()} == {True, False}  # a won séance, a lost one

    with CaptureQueriesContext(connection) as day:
        figures = figures_of(shifts)
    assert figures == {s.pk: shift_figures(Shift.objects.get(pk=s.pk)) for s in shifts}
    assert all(figures[s.pk].coups for s in shifts if s.closed_at)
    one_of_each = [next(s for s in shifts if s.table.game == game) for game in games]
    with CaptureQueriesContext(connection) as each_game:
        figures_of(one_of_each)
    assert len(day) == len(each_game)
