"""A simulated séance of Pharao, played through the services: it balances, its audit chain holds,
every taille is the replay of its recorded document, and its refusals are on record."""

from __future__ import annotations

import random

import pytest

from audit.chain import verify_chain
from audit.models import Anomaly
from casino import clock
from casino.floor.models import Account, Shift
from casino.floor.play.pharao.models import (
    PharaoApproval,
    PharaoDraw,
    PharaoStakeAct,
    Taille,
)
from casino.floor.play.pharao.selectors import taille_document
from casino.floor.services import balance, rundown
from casino.games.replay import replay
from casino.simulation.pharao import pharao_seance, pharao_table_for
from casino.simulation.seance import Crew, House
from casino.simulation.timeline import play_together
from shoes.models import PackState
from tests.api.test_pharao_api import _expected_movements, _movements

pytestmark = pytest.mark.django_db


@pytest.fixture
def played(cast, posted):
    """Two tailles at Pharao table 5, with mistakes and late stakes far more often than a real
    room would see them, so that each kind of refusal is met."""
    house = House(cast.directeur, cast.caissier, cast.commissaire)
    crew = Crew(cast.chef, cast.tailleur, cast.croupier)
    table = pharao_table_for(house, 5)
    play = pharao_seance(
        table, crew, house, random.Random(13), tailles_to_play=2, mistakes=0.5, late=0.3
    )
    play_together([(clock.now(), play)])
    return Shift.objects.get(table=table)


def test_a_simulated_pharao_seance_closes_balanced(played):
    assert played.closed_at is not None
    figures = rundown(played)
    assert figures.variance == 0
    assert balance(Account.objects.get(code="T5:layout")) == 0
    assert sum(balance(a) for a in Account.objects.all()) == 0
    assert played.table.game == "pharao"
    # The pack dealt both tailles and was counted back at the close.
    assert {t.pack.state for t in Taille.objects.filter(shift=played)} == {PackState.RETIRED}


def test_every_simulated_taille_is_the_replay_of_its_document(played):
    found = Taille.objects.filter(shift=played).order_by("number")
    assert [(t.number, t.phase) for t in found] == [(1, "ended"), (2, "ended")]
    for taille in found:
        document = taille_document(taille)
        replayed = replay(document)
        assert replayed["refused"] == []
        assert [(d["bank"], d["players"]) for d in replayed["draws"]] == list(
            PharaoDraw.objects.filter(taille=taille)
            .order_by("number")
            .values_list("bank_card", "players_card")
        )
        assert _movements(taille) == _expected_movements(document, replayed)


def test_the_simulation_marks_asks_approvals_and_meets_refusals(cast, played):
    acts = set(PharaoStakeAct.objects.values_list("act", flat=True))
    assert {"paroli", "collect"} <= acts
    assert PharaoApproval.objects.exists()
    assert not PharaoApproval.objects.filter(approved_by=cast.croupier).exists()
    detectors = set(Anomaly.objects.values_list("detector", flat=True))
    assert {"false_paroli", "late_stake"} <= detectors
    assert verify_chain().ok
