"""The Pharao section of the séance report: every draw, the stakes with their marks and acts, the
approvals and refusals, the bank's hold against the band expected from the stakes exposed; the
signed PDF still verifies (issue 13, item 6)."""

from __future__ import annotations

import pytest

from casino.floor.play.pharao.selectors import taille_document
from casino.floor.selectors import shift_figures
from casino.floor.services import rundown, shift_close
from casino.games.pharao_odds import expected_result
from casino.games.pharao_replay import taille_of
from tests.api.tour import chips_for
from tests.conftest import open_seance, signed_count
from tests.floor.pharao_world import pharao_table, play_a_taille
from tests.reports.test_shift_report import pdf_text, rendered, verify

pytestmark = pytest.mark.django_db


def test_a_pharao_seance_report_shows_its_taille_and_its_hold_against_the_expected_band(
    cast, posted
):
    seance = open_seance(cast, pharao_table(cast))
    taille = play_a_taille(cast, seance)
    closing = signed_count(cast, seance.table, "closing", chips_for(rundown(seance).expected))
    shift_close(actor=cast.chef, shift=seance, count_id=closing.pk)
    report = rendered(seance)
    assert verify(report.pdf.path) == 0
    words = pdf_text(report)
    assert "Taille 1 - paquet RF-PH-1" in words
    assert "Coups / Coups" not in words  # Trente-et-Quarante's rounds are not this table's
    # 26 draws, the plié of draw 2 on the stake p, the paroli on a.
    assert "\nplié\np (2) plie banque 4.00 [simple]\n" in words
    assert words.count("\nplié\n") == 3  # the column head on its two pages, and draw 2
    assert "paroli @2 [paroli]" in words
    assert "reduce 2.00 (ok chef) @2" in words
    assert "non utilisée / unused" in words
    assert "faux paroli / false paroli" in words
    assert "mise tardive / late stake" in words
    # The hold and its band, from the stakes actually exposed at each draw.
    played, rules = taille_of(taille_document(taille))
    expected = expected_result(played, rules)
    figures = shift_figures(seance)
    assert figures.drop == 1000 + 600 + 800 + 400
    want = 100 * float(expected.mean) / figures.drop
    actual = 100 * figures.win / figures.drop
    assert f"hold réel / actual {actual:.2f} %; attendu / expected {want:.2f} %" in words
    assert expected.variance > 0
