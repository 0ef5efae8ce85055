"""The hold detector on the floor: a séance recorded through the services where a confederate
stakes on what the stacked cards will give is found (séance, day and month); an honest simulated
séance is not; the séance's page and report draw its hold by hour against its band.

The false-alarm rate and the power are measured without the database, on the engine's séances
(``tests/detectors/test_hold_law.py``): the floor adds only the reading, checked here against
the engine coup by coup (``Played.agrees``)."""

from __future__ import annotations

import datetime as dt
import random
from collections import Counter
from pathlib import Path

import pytest
from django.test import Client
from django.utils import timezone

from audit.models import Anomaly
from casino.detectors import frame, hold
from casino.detectors.thresholds import ALPHA
from casino.floor.coups import (
    coup_close_betting,
    coup_lay_card,
    coup_open,
    coup_settle,
    stake_place,
)
from casino.floor.models import CashTransfer
from casino.floor.selectors import shift_figures
from casino.floor.services import rundown, transfer_countersign, transfer_record
from casino.games.cards import card
from casino.games.trente_et_quarante import CoupDeal, Result
from casino.reports.signing import verify_pdf
from casino.simulation.seance import chips_for
from shoes.services import pack_retire
from tests.actors import login_admin
from tests.conftest import close_seance, open_seance, pass_the_cards, talon
from tests.floor.pharao_world import pharao_table, play_a_taille
from tests.reports.test_shift_report import closed_seance, pdf_text, rendered


def _confederate_seance(cast, shift, pack, *, coups: int) -> None:
    """``coups`` coups dealt from the pack in its order; each coup some honest stakes, and a
    confederate who knows the stacked talon stakes 2,000.00 on the row that will win."""
    rng = random.Random(16)
    cards = talon(pack)
    for n in range(coups):
        deal = CoupDeal()
        ahead = iter(cards)
        while not deal.complete:
            deal.lay(card(next(ahead)))
        outcome = deal.outcome()
        coup = coup_open(actor=cast.tailleur, shift_id=shift.pk)
        stakes = [
            (
                f"h{n}-{i}",
                rng.choice(["rouge", "noir", "couleur", "inverse"]),
                500 * rng.randint(1, 20),
            )
            for i in range(rng.randint(1, 4))
        ]
        if outcome.result in (Result.NOIR, Result.ROUGE):
            stakes.append((f"c{n}", outcome.result.value, 200_000))
        for ref, chance, amount in stakes:
            stake_place(
                actor=cast.croupier,
                coup_id=coup.pk,
                ref=ref,
                holder=ref[0],
                chance=chance,
                amount=amount,
            )
        coup_close_betting(actor=cast.tailleur, coup_id=coup.pk)
        laid = None
        while laid is None or not laid.coup_complete:
            laid = coup_lay_card(actor=cast.tailleur, coup_id=coup.pk, code=cards.pop(0))
        result = coup_settle(actor=cast.croupier, coup_id=coup.pk)
        if result.last:
            break


@pytest.mark.reglement("trente-et-quarante-modern")
def test_a_confederate_who_knows_the_cards_is_found(cast, shift, sixain_in_play):
    """Planted: 20 coups, a confederate on the winning row of each decided one. Found at the
    séance's close (one test at ALPHA), and over the day and, at the month's end, the month."""
    _confederate_seance(cast, shift, sixain_in_play, coups=20)
    measure = hold.seance_measure(shift)
    assert all(c.agrees for c in measure.coups)  # the reading is the engine's, coup by coup
    # Under the prison rule the bank expects nothing of a coup's fresh stakes (its edge comes when
    # prisoners are lost, in later coups); the confederate takes about 200,000 a decided coup.
    assert measure.law.z(measure.actual) < -3
    assert measure.p_value < ALPHA

    undealt = talon(sixain_in_play)
    pass_the_cards(cast, sixain_in_play)
    pack_retire(actor=cast.chef, pack_id=sixain_in_play.pk, counted=dict(Counter(undealt)))
    fill = transfer_record(
        actor=cast.chef, shift_id=shift.pk, kind=CashTransfer.Kind.FILL, amount=5_000_000
    )  # the bank ran dry: the cage fills it, as a chef de partie would ask
    transfer_countersign(actor=cast.caissier, transfer_id=fill.pk)
    close_seance(cast, shift, chips_for(rundown(shift).expected))
    shift.refresh_from_db()
    raised = frame.run_seance_close(shift)
    anomaly = next(a for a in raised if a.detector == "hold")
    figures = dict(anomaly.evidence["figures"])
    assert figures["result"] == f"{measure.actual / 100:.2f}"
    assert "ALPHA 0.001 / 1 tests" in anomaly.evidence["threshold"]
    assert anomaly.evidence["chart"]["kind"] == "bars"
    assert {link["type"] for link in anomaly.evidence["links"]} == {"floor.shift", "floor.coup"}
    assert cast.croupier.pk in anomaly.involved

    # The day's run tests the day; the month's last day's run tests the month as well.
    day = timezone.localtime(shift.opened_at).date()
    month_end = (day.replace(day=28) + dt.timedelta(days=4)).replace(day=1) - dt.timedelta(days=1)
    tests = 2 if day == month_end else 1
    day_finding = next(f for f in hold.day_hold(day) if ":day:" in f.key)
    month_finding = next(f for f in hold.day_hold(month_end) if ":month:" in f.key)
    assert day_finding.key == f"table:{shift.table.number}:day:{day:%Y-%m-%d}"
    assert month_finding.key == f"table:{shift.table.number}:month:{day:%Y-%m}"
    assert f"/ {tests} tests" in day_finding.threshold
    assert f"/ {tests} tests" in month_finding.threshold
    assert (day_finding.columns[0], month_finding.columns[0]) == ("hour", "day")
    assert dict(month_finding.figures)["result"] == f"{measure.actual / 100:.2f}"

    # The séance's page draws its hold by hour against its band (inline SVG, nothing fetched).
    client = Client()
    login_admin(client, cast.directeur)
    page = client.get(f"/admin/floor/shift/{shift.pk}/change/").content.decode()
    assert "taux par heure (barres), attendu (trait) et bande à 95 %" in page
    assert "<svg" in page
    assert "http://" not in page.split("<svg", 1)[1].split("</svg>", 1)[0].replace(
        'xmlns="http://www.w3.org/2000/svg"', ""
    )
    assert Anomaly.objects.filter(detector="hold").count() == 1


def test_an_honest_simulated_seance_is_within_its_band(cast, posted):
    """The simulator's séance through the services: every coup read as the engine settled it,
    and the detector raises nothing (its p-value printed in the failure if it did); its signed
    report draws the hold by hour against its band."""
    shift = closed_seance(hours=0.5, seed=3)
    measure = hold.seance_measure(shift)
    assert measure.coups
    assert all(c.agrees for c in measure.coups)
    assert hold.seance_hold(shift) == [], measure.p_value
    low, high = measure.law.band()
    assert low < measure.law.mean < high
    report = rendered(shift)
    assert verify_pdf(Path(report.pdf.path).read_bytes()).ok
    text = pdf_text(report)
    assert "Hold by hour against its band" in text
    assert f"p = {measure.p_value:.3g} (two-sided)" in text.replace("\n", " ")


def test_a_pharao_seance_is_read_taille_by_taille(cast, posted):
    """At Pharao the bank's result is what its settlements kept, taille by taille (the séance's
    result of play), against the exact mean and variance of what the stakes exposed."""
    seance = open_seance(cast, pharao_table(cast))
    play_a_taille(cast, seance)
    measure = hold.seance_measure(seance)
    assert [c.link for c in measure.coups] == ["floor.taille"]
    assert measure.actual == shift_figures(seance).win
    assert not measure.law.exact
    assert measure.law.variance > 0
    assert (measure.p_value < ALPHA) == bool(hold.seance_hold(seance))
