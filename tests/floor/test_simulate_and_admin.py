"""The simulator plays through the services; the admin shows coups and séances read-only."""

from __future__ import annotations

import io

from django.core.management import call_command
from django.test import Client

from audit.chain import verify_chain
from casino.floor.models import Account, Coup, Shift
from casino.floor.services import balance
from tests.actors import login_admin


def test_simulate_plays_seances_through_the_services(cast, posted):
    call_command("simulate", tables=2, hours=0.2, seed=5, stdout=io.StringIO())
    assert Coup.objects.filter(phase="settled").count() == 24
    assert Shift.objects.count() == 2
    assert sum(balance(a) for a in Account.objects.all()) == 0
    for table in (1, 2):
        layout = Account.objects.get(code=f"T{table}:layout")
        assert balance(layout) == 0  # every stake on the layout was settled
    assert verify_chain().ok


def test_the_admin_shows_a_coup_as_cards_and_a_seance_with_its_figures(cast, posted):
    call_command("simulate", tables=1, hours=0.05, seed=11, stdout=io.StringIO())
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
    shift = client.get(f"/admin/floor/shift/{coup.shift_id}/change/")
    assert "hold" in shift.content.decode()
    assert client.post(f"/admin/floor/coup/{coup.pk}/delete/", {"post": "yes"}).status_code == 403
