"""The simulator plays through the services; the admin shows coups and séances read-only."""

from __future__ import annotations

import datetime as dt
import io

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from audit.chain import verify_chain
from audit.models import AuditEvent
from casino import clock
from casino.clock import ManualClock
from casino.floor.models import Account, Coup, Movement, Shift
from casino.floor.play.alliance.models import Deal
from casino.floor.play.pharao.models import Taille
from casino.floor.services import balance
from tests.actors import login_admin, make_cast


def test_simulate_plays_seances_through_the_services(cast, posted):
    call_command("simulate", tables=2, hours=0.4, seed=5, stdout=io.StringIO())
    assert Coup.objects.filter(phase="settled").count() == 24
    assert Shift.objects.count() == 2
    assert sum(balance(a) for a in Account.objects.all()) == 0
    for table in (1, 2):
        layout = Account.objects.get(code=f"T{table}:layout")
        assert balance(layout) == 0  # every stake on the layout was settled
    assert verify_chain().ok


def test_the_admin_shows_a_coup_as_cards_and_a_seance_with_its_figures(cast, posted):
    call_command("simulate", tables=1, hours=0.1, seed=11, stdout=io.StringIO())
    coup = Coup.objects.filter(phase="settled").first()
    client = Client()
    login_admin(client, cast.inspecteur)
    page = client.get(f"/admin/floor/coup/{coup.pk}/change/")
    assert page.status_code == 200
    content = page.content.decode()
    assert "♠" in content or "♣" in content or "♥" in content or "♦" in content
    assert coup.outcome.announcement["result"] in content.replace("&#x27;", "'")
    listing = client.get("/admin/floor/coup/?outcome__result=" + coup.outcome.result)
    assert listing.status_code == 200
    listed = set(listing.context["cl"].result_list)
    assert listed == set(Coup.objects.filter(outcome__result=coup.outcome.result)) > {coup}
    shift = client.get(f"/admin/floor/shift/{coup.shift_id}/change/")
    assert "hold" in shift.content.decode()
    assert client.post(f"/admin/floor/coup/{coup.pk}/delete/", {"post": "yes"}).status_code == 403


def test_simulate_from_a_past_moment_gives_each_act_its_time(db, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    two_days_ago = clock.wall() - dt.timedelta(days=2)
    with ManualClock(two_days_ago):
        make_cast()  # hired before the day played
    start = (two_days_ago + dt.timedelta(days=1)).replace(hour=13, minute=0)
    out = io.StringIO()
    call_command("simulate", "--start", start.isoformat(), hours=1.5, seed=8, stdout=out)
    assert "simulated 45 coups" in out.getvalue()
    opened = list(Coup.objects.order_by("opened_at").values_list("opened_at", flat=True))
    assert opened[0] > start
    assert opened[-1] - opened[0] > dt.timedelta(hours=1, minutes=20)
    assert len({at.replace(second=0, microsecond=0) for at in opened}) == len(opened)
    times = list(AuditEvent.objects.order_by("seq").values_list("at", flat=True))
    assert times == sorted(times)
    assert times[-1] < clock.wall()
    assert verify_chain().ok


def test_simulate_refuses_a_start_that_would_put_history_out_of_order(cast):
    with pytest.raises(CommandError, match="already holds an act"):
        call_command("simulate", "--start", (clock.wall() - dt.timedelta(days=1)).isoformat())
    with pytest.raises(CommandError, match="in the past"):
        call_command("simulate", "--start", (clock.wall() + dt.timedelta(hours=1)).isoformat())
    assert not Coup.objects.exists()


def simulated_yesterday(settings, hour: int, **options) -> str:
    """The cast hired two days ago, then ``simulate`` with ``options`` on a simulated clock from
    ``hour`` yesterday: what it printed."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    two_days_ago = clock.wall() - dt.timedelta(days=2)
    with ManualClock(two_days_ago):
        make_cast()
    start = (two_days_ago + dt.timedelta(days=1)).replace(hour=hour, minute=0)
    out = io.StringIO()
    call_command("simulate", "--start", start.isoformat(), stdout=out, **options)
    return out.getvalue()


def test_simulate_plays_pharao_tailles_each_at_the_pace_of_a_real_table(db, settings):
    printed = simulated_yesterday(settings, 15, game="pharao", first=4, hours=0.5, seed=2)
    assert "simulated 2 tailles of Pharao on 1 table(s)" in printed
    shift = Shift.objects.get(table__number=4, table__game="pharao")
    assert shift.closed_at is not None
    for taille in Taille.objects.filter(shift=shift):
        draws = list(taille.draws.order_by("number").values_list("settled_at", flat=True))
        assert len(draws) == 26
        # A taille takes minutes, not the instant a loop would give it.
        assert dt.timedelta(minutes=4) < draws[-1] - taille.opened_at < dt.timedelta(minutes=30)
    assert balance(Account.objects.get(code="T4:layout")) == 0
    assert verify_chain().ok


def test_the_pharao_lists_read_in_queries_that_do_not_grow_with_the_tailles(db, settings):
    """The tailles' list (its séance filter, its rows' table, pack and draws) and the stakes'
    (its taille filter, its rows' taille) read in as many queries for more séances and tailles
    (issue 17's month: 1,215 queries the tailles' page, each séance's table read on its own)."""
    from django.contrib.auth.models import User

    from casino.floor.play.pharao.models import PharaoStake

    simulated_yesterday(settings, 15, game="pharao", first=4, hours=0.5, seed=2)
    client = login_admin(Client(), User.objects.get(username="inspecteur"))
    pages = ["/admin/floor/taille/", "/admin/floor/pharaostake/"]
    few = (Taille.objects.count(), queries(client, pages))
    call_command("simulate", game="pharao", first=6, hours=0.5, seed=3, stdout=io.StringIO())
    call_command("simulate", tables=2, first=7, hours=0.05, seed=4, stdout=io.StringIO())
    many = (Taille.objects.count(), queries(client, pages))
    assert many[0] > few[0]
    assert PharaoStake.objects.exists()
    assert many[1] == few[1]
    page = client.get("/admin/floor/taille/").content.decode()
    for taille in Taille.objects.all():
        assert f"{taille} " in page or f"{taille}<" in page
        assert f">{taille.draws.count()} / 26<" in page


def test_simulate_refuses_to_play_pharao_at_a_trente_et_quarante_table(cast, posted):
    call_command("simulate", tables=1, hours=0.05, seed=1, stdout=io.StringIO())
    with pytest.raises(CommandError, match="table 1 plays trente-et-quarante, not pharao"):
        call_command("simulate", game="pharao", first=1, stdout=io.StringIO())


PAIR = ("fritz", "greta")  # not among the first five to sit down, unless planted


def test_simulate_holds_the_cercle_at_the_pace_of_a_real_table(db, settings):
    printed = simulated_yesterday(
        settings, 20, game="alliance", first=5, hours=0.5, players=5, seed=3, colluders=PAIR
    )
    assert "simulated 4 deals of Alliance on 1 table(s)" in printed
    shift = Shift.objects.get(table__number=5, table__game="alliance")
    assert shift.closed_at is not None
    for deal in Deal.objects.filter(shift=shift):
        assert (deal.phase, len(deal.players)) == ("over", 5)
        assert {f"patron:{p}" for p in PAIR} <= set(deal.players)  # the planted pair plays on
        # A deal takes minutes: 52 cards dealt, the calls, 50 cards played one by one.
        assert (
            dt.timedelta(minutes=3) < deal.settlement.at - deal.opened_at < dt.timedelta(minutes=15)
        )
    assert sum(balance(a) for a in Account.objects.all()) == 0
    assert verify_chain().ok


def test_simulate_refuses_a_colluding_pair_that_is_not_two_of_its_patrons(cast, posted):
    for pair in ("ana,zoe", "ana,ana", "ana"):
        with pytest.raises(CommandError, match="--colluders"):
            call_command("simulate", "--game", "alliance", "--colluders", pair)
    assert not Shift.objects.exists()


def test_the_coups_changelist_reads_in_queries_that_do_not_grow_with_the_coups(cast, posted):
    """A row's table, pack and result, and the séances of the filter, come with the page: a
    month of coups reads in as many queries as an hour of them (issue 17's month bench)."""
    client = login_admin(Client(), cast.inspecteur)
    pages = ["/admin/floor/coup/", "/admin/floor/coup/?outcome__result=rouge"]
    call_command("simulate", tables=1, hours=0.05, seed=11, stdout=io.StringIO())
    few = (Coup.objects.count(), Shift.objects.count(), queries(client, pages))
    call_command("simulate", tables=2, first=2, hours=0.15, seed=12, stdout=io.StringIO())
    many = (Coup.objects.count(), Shift.objects.count(), queries(client, pages))
    assert many[0] > 2 * few[0]
    assert many[1] > few[1]
    assert many[2] == few[2]


def test_the_ledger_and_the_audit_log_read_in_queries_that_do_not_grow_with_them(cast, posted):
    """The movements' accounts, séance and author come with the page, and the audit log's
    actions and kinds of subject are found through their indexes: a month reads in as many
    queries as an hour (issue 17's month bench: 214 queries a page of the ledger)."""
    client = login_admin(Client(), cast.inspecteur)
    pages = [
        "/admin/floor/movement/",
        "/admin/floor/movement/?kind__exact=stake",
        "/admin/audit/auditevent/",
        "/admin/audit/auditevent/?action=coup.settled",
    ]
    call_command("simulate", tables=1, hours=0.05, seed=11, stdout=io.StringIO())
    few = (Movement.objects.count(), AuditEvent.objects.count(), queries(client, pages))
    call_command("simulate", tables=2, first=2, hours=0.15, seed=12, stdout=io.StringIO())
    many = (Movement.objects.count(), AuditEvent.objects.count(), queries(client, pages))
    assert many[0] > 2 * few[0]
    assert many[1] > 2 * few[1]
    assert many[2] == few[2]


def test_a_seances_page_reads_its_coups_in_queries_that_do_not_grow_with_them(cast, posted):
    """A séance's coups are listed on its page with their pack and result read with them: a long
    séance reads in as many queries as a short one (issue 17's month: 620 queries)."""
    call_command("simulate", tables=2, hours=0.05, seed=11, stdout=io.StringIO())
    call_command("simulate", tables=1, first=3, hours=0.15, seed=12, stdout=io.StringIO())
    short, long = (Shift.objects.get(table__number=n) for n in (1, 3))
    client = login_admin(Client(), cast.inspecteur)
    assert long.coups.count() > 2 * short.coups.count()
    pages = [f"/admin/floor/shift/{shift.pk}/change/" for shift in (short, long)]
    counts = queries(client, pages)
    assert counts[0] == counts[1]


def test_the_seances_lists_read_in_queries_that_do_not_grow_with_the_seances(cast, posted, api):
    """Each séance's figures (admin) and its staff and rundown (API) are read for the page at once:
    a day of séances reads in as many queries as one (issue 17's month: 514 and 403 queries)."""
    admin = login_admin(Client(), cast.inspecteur)
    terminal = api(cast.inspecteur)
    call_command("simulate", tables=1, hours=0.05, seed=11, stdout=io.StringIO())
    one = (queries(admin, ["/admin/floor/shift/"]), queries(terminal, ["/api/v1/shifts"]))
    call_command("simulate", tables=3, first=2, hours=0.05, seed=12, stdout=io.StringIO())
    assert Shift.objects.count() == 4
    assert queries(admin, ["/admin/floor/shift/"]) == one[0]
    assert queries(terminal, ["/api/v1/shifts"]) == one[1]


def test_the_packs_list_reads_in_queries_that_do_not_grow_with_the_packs(cast, posted):
    """Each pack's table and cards laid are read for the page (issue 17's month: 414 queries);
    the page shows what each pack's own reads show."""
    from shoes.models import Pack
    from shoes.services import current_shift

    client = login_admin(Client(), cast.inspecteur)
    call_command("simulate", tables=1, hours=0.05, seed=11, stdout=io.StringIO())
    few = queries(client, ["/admin/shoes/pack/"])
    call_command("simulate", tables=3, first=2, hours=0.2, seed=12, stdout=io.StringIO())
    assert Pack.objects.count() >= 4
    assert queries(client, ["/admin/shoes/pack/"]) == few
    page = client.get("/admin/shoes/pack/").content.decode()
    for pack in Pack.objects.all():
        shift = current_shift(pack)
        table = shift.table.number if shift else "–"
        row = page.split(f">{pack.seal_number}<", 1)[1].split("</tr>", 1)[0]
        assert f'class="field-table">{table}<' in row
        assert f'class="field-cards">{pack.cards_laid.count()}<' in row
    # Alone on its own page, a pack reads its cards laid as a page of one.
    pack = Pack.objects.filter(cards_laid__isnull=False).first()
    alone = client.get(f"/admin/shoes/pack/{pack.pk}/change/").content.decode()
    cards = alone.split('class="form-row field-cards', 1)[1].split('<div class="readonly">', 1)[1]
    assert cards.startswith(f"{pack.cards_laid.count()}<")


def queries(client: Client, pages: list[str]) -> list[int]:
    """The SQL queries of each page, read a second time (the session's first reads apart)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    counts = []
    for url in pages:
        client.get(url)
        with CaptureQueriesContext(connection) as captured:
            assert client.get(url).status_code == 200
        counts.append(len(captured.captured_queries))
    return counts
