"""The séance report's coups drawn straight on the canvas (``casino.reports.coup_table``) against
reportlab's general table as the report used it before (``pdf.grid`` with a span for each coup's
number and each pack's row, and a white line between a coup's two rows): every page's PDF content
is the same to the byte, wherever the page breaks fall and however many pages a table spans."""

from __future__ import annotations

import io
from typing import Any

import pypdf
import pytest
from reportlab.lib import colors
from reportlab.platypus import Flowable, Spacer

from casino.reports.coup_table import CoupRows, CoupTable, Item, PackRow
from casino.reports.pdf import Cards, Document, _rank_width, grid
from casino.reports.shift_report import CARDS_WIDTH, COUP_HEADER, COUP_WIDTHS


def items(coups: int, first: int = 1) -> list[Item]:
    """Coups as a séance lays them: a pack's row now and then, cards on both rows, a void coup,
    a coup that never reached its cards, accents and parentheses in the words."""
    out: list[Item] = []
    for n in range(first, first + coups):
        if n % 37 == 1:
            out.append(PackRow(f"paquet / pack S-{n:04d} (scellé)"))
        if n % 23 == 0:
            out.append(CoupRows(str(n), ["mises closes", *[""] * 6], [""] * 7))
            continue
        noir = ["2S", "3H", "TD", "KC", "AS"][: 2 + n % 4]
        rouge = ["QH", "9S", "8D", "AC", "5H", "6C"][: 3 + n % 3]
        void = " (nul / void)" if n % 19 == 0 else ""
        out.append(
            CoupRows(
                str(n),
                [
                    "noir",
                    Cards(noir, CARDS_WIDTH),
                    str(30 + n % 10),
                    "un / deux",
                    f"{n % 11}: 1 2{n % 7}0.50",
                    "50.25",
                    "0.00",
                ],
                ["rouge", Cards(rouge, CARDS_WIDTH), "34", f"après{void}", "", "", ""],
            )
        )
    return out


def as_grid(table: list[Item]) -> Flowable:
    """The coups as ``shift_report._coups`` gave them to ``pdf.grid`` before."""
    rows: list[list[Any]] = [COUP_HEADER]
    spans: list[tuple[Any, ...]] = []
    for item in table:
        if isinstance(item, PackRow):
            rows.append([item.label, *[""] * 7])
            spans += [
                ("SPAN", (0, len(rows) - 1), (-1, len(rows) - 1)),
                ("FONT", (0, len(rows) - 1), (-1, len(rows) - 1), "Helvetica-Bold", 7.5),
            ]
            continue
        top = len(rows)
        rows.append([item.number, *item.noir])
        rows.append(["", *item.rouge])
        spans += [
            ("SPAN", (0, top), (0, top + 1)),
            ("LINEBELOW", (0, top), (-1, top), 0, colors.white),
        ]
    return grid(rows, COUP_WIDTHS, extra=spans)


def pages(story: list[Flowable]) -> list[bytes]:
    doc = Document("Rapport", "Report", "Table 1", "note")
    doc.add(*story)
    data, _ = doc.render()
    return [page.get_contents().get_data() for page in pypdf.PdfReader(io.BytesIO(data)).pages]


@pytest.mark.parametrize("before", [0, 5, 11.5, 12, 13, 23.9, 400, 690])
def test_the_coups_read_as_the_general_tables_drew_them_to_the_byte(before):
    """Sixty coups a table, as the report lays them, after a gap that moves the page breaks
    through every position in a row: one table spans two or three pages."""
    tables = [items(60, first=1), items(60, first=61), items(7, first=121)]
    old = pages([Spacer(1, before), *(as_grid(t) for t in tables)])
    new = pages([Spacer(1, before), *(CoupTable(COUP_HEADER, COUP_WIDTHS, t) for t in tables)])
    assert len(old) >= 5
    assert len(new) == len(old)
    for number, (drawn, expected) in enumerate(zip(new, old, strict=True), start=1):
        assert drawn == expected, f"page {number}"


def test_a_table_too_tall_for_what_is_left_of_the_page_splits_between_coups():
    table = CoupTable(COUP_HEADER, COUP_WIDTHS, items(5))  # a pack's row and five coups
    assert table.split(523, 11) == []  # not even the header
    assert table.split(523, 12 + 11) == []  # the header alone
    first, rest = table.split(523, 12 + 12 + 24 + 23)  # the pack, one coup and half of one
    assert [type(i).__name__ for i in first.items] == ["PackRow", "CoupRows"]
    assert len(rest.items) == 4
    assert (first.continued, rest.continued) == (False, True)
    assert (first.height, rest.height) == (12 * 4, 12 * 9)
    assert table.split(523, table.height) == [table]


class StateKeepingCards(Cards):
    """A row of cards drawn as before: each form referenced inside the canvas's own saveState,
    translate and restoreState."""

    def draw(self) -> None:
        canvas = self.canv
        x = 0.0
        for code in self.codes:
            name = f"card{code}"
            if not canvas.hasForm(name):
                self._card_form(name, code)
            canvas.saveState()
            canvas.translate(x, 0)
            canvas.doForm(name)
            canvas.restoreState()
            x += _rank_width(code[0]) + 0.5 + self.STEP - 4


def test_a_row_of_cards_writes_what_the_canvas_state_calls_wrote():
    rows = [["KS", "TH", "2D", "AC", "9H", "QD"], ["TH", "TS"], ["7C"]]
    before = pages([StateKeepingCards(row, CARDS_WIDTH) for row in rows])
    assert pages([Cards(row, CARDS_WIDTH) for row in rows]) == before
    assert before[0].count(b"/FormXob.cardTH Do") == 2


def test_a_coup_read_as_values_names_its_phase_as_its_model_row_does():
    from casino.floor.models import Coup
    from casino.reports.shift_report import CoupLine

    for phase, _ in Coup._meta.get_field("phase").flatchoices:
        line = CoupLine(1, 1, phase, 1, "S", *[None] * 7)
        assert line.phase_label() == Coup(phase=phase).get_phase_display()
