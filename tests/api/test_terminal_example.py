"""examples/terminal.py, the client written from the schema alone, plays a whole séance against
the live server; the database then holds exactly what the rules say it played."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from django_otp.plugins.otp_totp.models import TOTPDevice

from audit.chain import verify_chain
from casino.floor.models import Coup, Movement
from casino.games.trente_et_quarante import CoupDeal
from casino.people.services import totp_secret_base32
from tests.actors import PASSWORD

ROOT = Path(__file__).resolve().parents[2]


def _terminal():
    spec = importlib.util.spec_from_file_location("terminal", ROOT / "examples" / "terminal.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def logins(cast):
    people = {}
    for user in (
        cast.caissier,
        cast.commissaire,
        cast.croupier,
        cast.directeur,
        cast.chef,
        cast.tailleur,
    ):
        device = TOTPDevice.objects.filter(user=user, confirmed=True).first()
        people[user.username] = {
            "password": PASSWORD,
            "totp_secret": totp_secret_base32(device.key) if device else None,
        }
    return people


@pytest.mark.django_db(transaction=True)
def test_the_example_terminal_plays_a_seance_the_database_agrees_with(
    live_server, logins, table, settings
):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    played = _terminal().play(live_server.url, logins, coups=8, seed=7, table=table.number)
    seance = played["seance"]
    assert seance["closed_at"] is not None
    assert seance["rundown"]["variance"] == 0
    coups = list(Coup.objects.filter(shift_id=seance["id"]).order_by("id"))
    assert [c.pk for c in coups] == [c["id"] for c in played["coups"]]
    for coup, answered in zip(coups, played["coups"], strict=True):
        deal = CoupDeal.from_codes(c.card for c in coup.cards.order_by("seq"))
        outcome = deal.outcome()
        assert (outcome.noir.total, outcome.rouge.total) == (
            coup.outcome.noir_total,
            coup.outcome.rouge_total,
        )
        assert answered["outcome"]["result"] == coup.outcome.result
    assert played["dispute"]["state"] == "decided"
    # Every stake the terminal placed is in the ledger, staked from its seat to the layout.
    placed = Movement.objects.filter(shift_id=seance["id"], kind=Movement.Kind.STAKE_PLACED)
    assert placed.count() == sum(len(c["stakes"]) for c in played["coups"]) > 0
    assert verify_chain().ok
