"""The cards detector on the floor (docs/detectors.md, The cards of a sixain): a séance dealt from
a stacked sixain, recorded act by act through the services as the floor records it, raises one
``cards`` anomaly when it closes, naming the tailleur and the coups; an honest one raises none.
The laws and the measured rates are in test_cards_law.py."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

import pytest

from audit.models import Anomaly
from casino import clock
from casino.detectors.cards import sixain_cards
from casino.detectors.frame import raise_finding
from casino.detectors.tasks import seance_closed
from casino.floor.models import Shift
from casino.outbox.models import OutboxMessage
from casino.simulation import pace
from casino.simulation import seance as sim
from casino.simulation.timeline import Play, play_together
from shoes import services as packs
from tests.detectors.test_cards_law import (
    PER_TEST,
    dealt_cards,
    refaits_planted,
    sixain,
    sixain_tests_of,
    stacked,
)

pytestmark = pytest.mark.django_db


def _sixain_from(s: sim._Seance, order: Sequence[str]) -> Play:
    """A sixain from the store, shuffled and cut as the floor records it; its cards then lie in
    ``order`` (what a stacked sixain would be made to hold)."""
    yield pace.pause(s.rng, pace.FETCH_PACK)
    yield from sim._from_store(s)
    assert s.pack is not None
    packs.pack_open(actor=s.crew.chef, pack_id=s.pack.pk, shift_id=s.open_shift.pk)
    packs.pack_shuffle(actor=s.crew.croupier, pack_id=s.pack.pk)
    packs.pack_shuffle(actor=s.crew.tailleur, pack_id=s.pack.pk)
    packs.pack_cut(actor=s.crew.tailleur, pack_id=s.pack.pk, cut_by="un ponte de la galerie")
    s.talon = list(order)


def _seance(cast, orders: Sequence[Sequence[str]], coups: int = 99, seed: int = 1) -> Shift:  # type: ignore[no-untyped-def]
    """A séance at table 1 dealing each sixain of ``orders`` to its end or for ``coups`` coups
    (then the cards pass: the tailleur counts the rest), then closed."""
    house = sim.House(cast.directeur, cast.caissier, cast.commissaire)
    crew = sim.Crew(cast.chef, cast.tailleur, cast.croupier)
    s = sim._Seance(sim.table_for(house, 1), crew, house, random.Random(seed))

    def play() -> Play:
        yield from sim._open(s)
        n = 0
        for order in orders:
            yield from _sixain_from(s, order)
            for _ in range(coups):
                yield from sim._mind_the_bank(s)
                yield from sim._coup(s, n, 1)
                n += 1
                if not s.talon:
                    break
            if s.talon:
                yield from sim._cards_pass(s)
        yield from sim._close(s)

    play_together([(clock.now(), play())])
    return Shift.objects.get(pk=s.open_shift.pk)


def test_a_sixain_stacked_with_refaits_is_raised_once_naming_its_tailleur_and_coups(
    cast, posted
) -> None:
    # Twelve refaits planted among the first 25 coups: found in 4 of 5 such sixains or more
    # (test_cards_law.py, docs/detectors.md); the first seed where the law finds it.
    rng = random.Random(40)
    order = next(
        o
        for o in (stacked(rng, refaits_planted(12, rng)) for _ in range(10))
        if any(t.p_value < PER_TEST for t in sixain_tests_of(o))
    )
    shift = _seance(cast, [order])
    assert OutboxMessage.objects.filter(
        task="detectors.seance_closed", kwargs={"shift_id": shift.pk}
    ).exists()
    seance_closed(shift.pk)
    for finding in sixain_cards(shift):  # found again by another run: raised once
        raise_finding(finding)
    anomaly = Anomaly.objects.get(detector="cards")
    evidence = anomaly.evidence
    assert anomaly.summary.startswith("sixain ")
    assert "rows_31" in anomaly.summary or "refaits" in anomaly.summary
    assert float(evidence["p_value"]) < PER_TEST
    refaits = [row for row in evidence["table"]["rows"] if row[5] == "refait"]
    assert len(refaits) >= 8
    assert all(row[1].count(" ") >= 2 and row[1].split()[0][-1] in "SHDC" for row in refaits)
    coups = {link["id"] for link in evidence["links"] if link["type"] == "floor.coup"}
    assert coups <= {str(pk) for pk in shift.coups.values_list("pk", flat=True)}
    assert coups
    assert anomaly.involved == [cast.tailleur.pk]
    chart = evidence["chart"]
    assert chart["kind"] == "band"
    assert float(chart["values"][0]) > float(chart["high"][0])  # beyond what would be quiet


def test_a_slug_put_back_from_an_earlier_sixain_is_raised(cast, posted) -> None:
    rng = random.Random(41)
    first = sixain(rng)
    again = sixain(rng)
    again[:60] = first[20:80]  # sixty cards of the first sixain put back in their order
    rest = again[60:]
    # The second sixain must still hold a sixain's cards: the doubles swapped for the missing.
    missing = Counter(first) - Counter(again)
    extra = Counter(again) - Counter(first)
    for i, code in enumerate(rest):
        if extra[code]:
            extra[code] -= 1
            rest[i] = next(m for m in missing if missing[m])
            missing[rest[i]] -= 1
    again = again[:60] + rest
    assert sorted(again) == sorted(first)
    shift = _seance(cast, [first, again], coups=8)  # eight coups: some 85 cards of each
    findings = sixain_cards(shift)
    assert len(findings) == 1  # the later sixain: the earlier one is not its slug
    slug = findings[0]
    assert ": slug beyond chance" in slug.summary
    assert dict(slug.figures)["slug"].startswith("observed ")
    measured = {t["name"]: t for t in slug.extra["tests"]}["slug"]
    assert int(measured["observed"]) >= 55  # the sixty, less what the dealing split off


def test_an_honest_seance_raises_nothing(cast, posted) -> None:
    rng = random.Random(42)
    order = sixain(rng)
    assert dealt_cards(order)
    shift = _seance(cast, [order], coups=12)
    assert sixain_cards(shift) == []
