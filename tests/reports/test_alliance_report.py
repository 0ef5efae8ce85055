"""The cercle section of the séance report: the seats, every deal with its declarer, game, trumps,
couleur doubling, winners, each player's marks and the fee, each player's totals and the fee box,
which is the séance's rundown; every figure the settlements' and the ledger's; the signed PDF
still verifies (issue 15, item 5)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from casino.floor.cage import patron_buy_in
from casino.floor.models import Account, Shift
from casino.floor.play.alliance.models import Deal
from casino.floor.play.alliance.report import section
from casino.floor.play.alliance.seats import seat_take
from casino.floor.services import balance, rundown
from tests.floor.alliance_world import (
    BUY_IN,
    FEE,
    cercle_ready,
    close_cercle,
    play_act_by_act,
    simulated,
)
from tests.reports.test_shift_report import pdf_text, rendered, verify

pytestmark = pytest.mark.django_db

SUITS = {"S": "pique", "H": "coeur", "D": "carreau", "C": "trèfle"}


def money(minor: int) -> str:
    return f"{'-' if minor < 0 else ''}{abs(minor) // 100}.{abs(minor) % 100:02d}"


def short(code: str) -> str:
    return code.removeprefix("patron:")


def deal_row(deal: Deal) -> str:
    """The deal's row as the report writes it, from its settlement."""
    o = deal.settlement.outcome
    game = o["game"] + (" forcé / forced" if o["forced"] else "")
    return " ".join(
        [
            str(deal.number),
            short(deal.dealer),
            short(o["declarer"]),
            game,
            SUITS[o["trumps"]],
            "x2" if o["trumps"] == o["couleur"] else "-",
            ", ".join(short(w) for w in o["winners"]),
            ", ".join(f"{short(p)} {o['marks'][p]:+d}" for p in deal.players),
            money(o["fee"] * len(deal.players)),
        ]
    )


@pytest.fixture
def seance(cast, posted):
    return cercle_ready(cast)


def seat_emil(cast, shift):
    patron_buy_in(actor=cast.caissier, patron="emil", amount=BUY_IN)
    seat_take(actor=cast.croupier, shift_id=shift.pk, seat=5, patron="emil")


def test_a_cercle_seance_report_shows_its_deals_each_players_result_and_its_fee_box(cast, seance):
    for seed in (7, 17):  # an alliance in the couleur, a lever with its take
        play_act_by_act(cast, seance, simulated(seed))
    seat_emil(cast, seance)
    play_act_by_act(cast, seance, simulated(3, players=5))
    close_cercle(cast, seance)
    shift = Shift.objects.get(pk=seance.pk)
    report = rendered(shift)
    assert verify(report.pdf.path) == 0
    words = " ".join(pdf_text(report).split())
    assert "Places au cercle / Seats" in words
    assert "5 patron:emil (emil)" in words
    assert words.count("séance closed") == 5 + 2  # every seat left at the close, and two duties
    deals = list(Deal.objects.filter(shift=shift).order_by("number"))
    assert [d.phase for d in deals] == ["over"] * 3
    for deal in deals:
        # The text of each trumps' suit is its glyph (ZapfDingbats) then its name.
        assert deal_row(deal) in words.replace("♠ ", "").replace("♥ ", "").replace(
            "♦ ", ""
        ).replace("♣ ", ""), deal_row(deal)
    assert "x2" in deal_row(deals[0])  # the alliance was played in the couleur: doubled
    # Each player's totals are the ledger's: what his account won or lost at the table.
    for name, played in (("ana", 3), ("ben", 3), ("carl", 3), ("dora", 3), ("emil", 1)):
        code = f"patron:{name}"
        marks = sum(d.settlement.outcome["marks"].get(code, 0) for d in deals)
        net = balance(Account.objects.get(code=code)) - BUY_IN
        assert net == marks * 100 - played * FEE
        row = f"{code} {played} {marks:+d} {money(marks * 100)} {money(played * FEE)} {money(net)}"
        assert row in words, row
    fees = (4 + 4 + 5) * FEE  # each player of each deal
    fee_box = Account.objects.get(table=shift.table, kind=Account.Kind.FEE_BOX)
    assert balance(fee_box) == rundown(shift).result == fees
    assert f"total +0 0.00 {money(fees)} {money(-fees)}" in words
    assert f"Droits des donnes / fees of the deals {money(fees)}" in words
    assert f"Résultat de la caisse / rundown result {money(fees)} Contrôle / check égaux" in words
    # The rundown of a cercle is its fee box: opened empty, closed on the fees.
    assert "Ouverture / opening 0.00" in words
    assert f"Fermeture comptée / closing count {money(fees)} Écart / variance 0.00" in words
    assert "Coups / Coups" not in words  # Trente-et-Quarante's rounds are not this table's


def test_the_cercle_section_reads_the_same_few_queries_whatever_the_number_of_deals(cast, seance):
    """Linear in the deals: they are read a table's worth at a time, with their settlements,
    never one query per deal or per player."""

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            list(section(Shift.objects.get(pk=seance.pk)))
        return len(captured)

    play_act_by_act(cast, seance, simulated(7))
    one = queries()
    for seed in (17, 3):
        play_act_by_act(cast, seance, simulated(seed))
    assert queries() == one
