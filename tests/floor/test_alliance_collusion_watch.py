"""The cercle's collusion watch on the floor (issue 15, item 6; docs/detectors.md): when a cercle
séance closes, the worker tests its pairs of players and raises a ``collusion`` anomaly, its
evidence naming the deals. The séances are the engine simulator's, recorded deal by deal from
their sheets through the floor's acts; the statistics' recall and false alarms at scale are
measured in tests/games/test_alliance_collusion.py."""

from __future__ import annotations

import pytest

from audit.models import Anomaly
from casino.floor.play.alliance import deals
from casino.floor.play.alliance.collusion import collusion_watch
from casino.games.alliance import render
from casino.games.alliance_collusion import record_from_render, suspicious_pairs
from casino.games.simulator import simulate_alliance_seance
from casino.outbox.models import OutboxMessage
from tests.floor.alliance_world import MARK, cercle_ready, close_cercle, sheet

pytestmark = pytest.mark.django_db

COLLUDERS = ("ana", "carl")


def _flagged(seed: int, colluders: tuple[str, str] | None, count: int) -> bool:
    seance = simulate_alliance_seance(seed=seed, deals=count, colluders=colluders, mark_value=MARK)
    records = [record_from_render(str(i), render(s.outcome)) for i, s in enumerate(seance)]
    return any(f.pair == COLLUDERS for f in suspicious_pairs(records))


def _recorded(cast, seed: int, colluders: tuple[str, str] | None, count: int):
    """A cercle séance whose deals are the simulator's séance ``seed``, closed on its fees."""
    shift = cercle_ready(cast)
    for sim in simulate_alliance_seance(
        seed=seed, deals=count, colluders=colluders, mark_value=MARK
    ):
        deals.deal_record(actor=cast.croupier, shift_id=shift.pk, sheet=sheet(sim))
    close_cercle(cast, shift)
    return shift


def test_a_planted_pair_is_raised_for_review_with_the_deals_of_its_evidence(cast, posted):
    # A planted pair is found in about a quarter of single 40-deal séances at four players
    # (docs/detectors.md): the first seed where the engine's statistics find it.
    seed = next(s for s in range(40) if _flagged(s, COLLUDERS, 40))
    shift = _recorded(cast, seed, COLLUDERS, 40)
    assert OutboxMessage.objects.filter(
        task="alliance.collusion_watch", kwargs={"shift_id": shift.pk}
    ).exists()
    collusion_watch(shift.pk)
    found = Anomaly.objects.filter(detector="collusion", evidence__window="séance")
    assert [a.evidence["pair"] for a in found] == [["patron:ana", "patron:carl"]]
    evidence = found.get().evidence
    assert evidence["deals"]
    assert set(evidence["deals"]) <= set(shift.deals.values_list("pk", flat=True))
    assert evidence["statistics"][0]["statistic"] in ("alliances", "marks")
    collusion_watch(shift.pk)  # the worker may run twice: raised once
    assert Anomaly.objects.filter(detector="collusion", evidence__window="séance").count() == 1


def test_an_honest_seance_raises_nothing(cast, posted):
    shift = _recorded(cast, 3, None, 20)
    assert collusion_watch(shift.pk) == []
    assert not Anomaly.objects.filter(detector="collusion").exists()
