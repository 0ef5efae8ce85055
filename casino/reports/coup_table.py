"""The séance report's table of coups, drawn straight on the canvas.

A long séance lays tens of thousands of rows. reportlab's general ``Table`` (``pdf.grid``) sized,
styled and split every one of them cell by cell, again for each page, and that was most of a
10,000-coup report's time. This table knows its one layout: fixed columns, rows of one height, a
bold header repeated on every page, a pack's row, and each coup as two rows (noir, rouge) under
its number. It lays the same marks ``grid`` laid, in the same order, so the pages are the same
to the byte: ``tests/reports/test_coup_table.py`` draws both on pages of every height and compares
the PDF content streams.

What ``grid`` drew, and this draws the same way:
- the header on a grey band, in bold; a pack's row in bold across the whole width;
- each cell's text at its column's left padding, centred in its row as reportlab centres it;
- a coup's number centred across its two rows (a span), its cards as ``pdf.Cards``;
- a light grey line under every row, not through the number's span; then a white line over the
  line between a coup's two rows (so a coup reads as one band);
- a table split across pages repeats its header; each continuation draws the line under its
  header twice, as reportlab's split does (once for the header, once above the rows it carries:
  a line stroked twice is a shade darker where it is anti-aliased, so it is kept).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from reportlab.lib import colors
from reportlab.platypus import Flowable

from casino.reports.pdf import GREY, Cards

FONT, BOLD = "Helvetica", "Helvetica-Bold"
SIZE = 7.5
LEADING = 1.2 * SIZE  # reportlab's leading for a FONT command without one
PADDING = 1.5  # above and below (pdf.grid's TOPPADDING and BOTTOMPADDING)
LEFT = 6  # reportlab's default left padding
ROW = LEADING + 2 * PADDING  # one line of text, or a row of cards (9 high), and the padding
LINE = 0.25

Cell = str | Cards


@dataclass(frozen=True)
class PackRow:
    """A new pack begins: its seal across the whole width, in bold."""

    label: str


@dataclass(frozen=True)
class CoupRows:
    """A coup: its number across both rows, then the noir row's cells and the rouge row's."""

    number: str
    noir: Sequence[Cell]
    rouge: Sequence[Cell]


Item = PackRow | CoupRows


def _rows_of(item: Item) -> int:
    return 1 if isinstance(item, PackRow) else 2


def _text_rise(height: float) -> float:
    """Where reportlab puts a line of text in a cell ``height`` high (valign MIDDLE), from its
    bottom: ``Table._drawCell``'s formula."""
    return (PADDING + height - PADDING + LEADING) / 2.0 - SIZE


def _flowable_rise(height: float, flowable_height: float) -> float:
    """Where reportlab puts a flowable in a cell ``height`` high (valign MIDDLE), from its bottom."""
    return (height + PADDING - PADDING + flowable_height) / 2.0 - flowable_height


class CoupTable(Flowable):
    """``header`` and the coups' rows under it, in columns ``widths`` wide; splits between items,
    never inside a coup, the header repeated on each part."""

    def __init__(
        self,
        header: Sequence[str],
        widths: Sequence[float],
        items: Sequence[Item],
        *,
        continued: bool = False,
    ) -> None:
        super().__init__()
        self.header = list(header)
        self.widths = list(widths)
        self.items = list(items)
        self.continued = continued  # a part after the first: see the module's docstring
        self.hAlign = "CENTER"  # as a Table: wider than the frame, it overhangs both margins
        self.lefts = [sum(self.widths[:i]) for i in range(len(self.widths))]
        self.width = sum(self.widths)
        self.height = ROW * self._rows(self.items)

    @staticmethod
    def _rows(items: Sequence[Item]) -> int:
        return 1 + sum(_rows_of(item) for item in items)

    def wrap(self, available_width: float, available_height: float) -> tuple[float, float]:
        return self.width, self.height

    def split(self, available_width: float, available_height: float) -> list[Flowable]:
        """As ``Table.split`` splits by rows: after the last item that fits under the header,
        or nothing when not even the first one does."""
        used, fit = ROW, 0  # the header, then the items that fit whole
        for item in self.items:
            for _ in range(_rows_of(item)):  # row by row as reportlab adds them: the same sums
                used += ROW
            if used > available_height:
                break
            fit += 1
        if fit == 0:
            return []
        if fit == len(self.items):
            return [self]
        return [
            CoupTable(self.header, self.widths, self.items[:fit], continued=self.continued),
            CoupTable(self.header, self.widths, self.items[fit:], continued=True),
        ]

    def draw(self) -> None:
        canvas = self.canv
        canvas.saveState()
        canvas.setFillColor(GREY)
        canvas.rect(0, self.height, self.width, -ROW, stroke=0, fill=1)
        canvas.setFillColor(colors.black)
        font = _Font(canvas)
        y = self.height - ROW  # the bottom of the row being drawn
        font.use(BOLD)
        self._row(canvas, y, self.header)
        rules = [(0.0, y)]  # (where the line starts, its height): one under every row
        gaps = []  # the line between a coup's two rows, whitened afterwards
        for item in self.items:
            if isinstance(item, PackRow):
                y -= ROW
                font.use(BOLD)
                _write(canvas, LEFT, y + _text_rise(ROW), item.label)
                rules.append((0.0, y))
                continue
            y -= 2 * ROW
            font.use(FONT)
            _write(canvas, LEFT, y + _text_rise(2 * ROW), item.number)
            self._row(canvas, y + ROW, item.noir, first=1)
            self._row(canvas, y, item.rouge, first=1)
            rules += [(self.widths[0], y + ROW), (0.0, y)]
            gaps.append(y + ROW)
        self._lines(canvas, rules, gaps)
        canvas.restoreState()

    def _row(self, canvas: Any, y: float, cells: Sequence[Cell], first: int = 0) -> None:
        """One row's cells from column ``first``, ``y`` its bottom."""
        for left, cell in zip(self.lefts[first:], cells, strict=True):
            if isinstance(cell, Cards):
                cell.drawOn(canvas, left + LEFT, y + _flowable_rise(ROW, cell.height))
            else:
                _write(canvas, left + LEFT, y + _text_rise(ROW), cell)

    def _lines(self, canvas: Any, rules: list[tuple[float, float]], gaps: list[float]) -> None:
        canvas.saveState()
        canvas.setLineCap(1)
        canvas.setLineJoin(1)
        canvas.setStrokeColor(colors.lightgrey)
        canvas.setLineWidth(LINE)
        if self.continued:
            canvas.line(0, rules[0][1], self.width, rules[0][1])
        for start, y in rules:
            canvas.line(start, y, self.width, y)
        if gaps:
            canvas.setStrokeColor(colors.white)
            for y in gaps:
                canvas.line(self.widths[0], y, self.width, y)
        canvas.restoreState()


def _write(canvas: Any, x: float, y: float, text: str) -> None:
    """What ``canvas.drawString`` writes for a line of left-to-right text: its own text object,
    without the width it measures for right-to-left scripts and drops here (a long séance's
    table is a hundred thousand lines of text, and measuring them was a third of their cost)."""
    line = canvas.beginText(x, y)
    line.textLine(text)
    canvas.drawText(line)


class _Font:
    """Sets the canvas's font only when it changes, as ``Table`` does from cell to cell."""

    def __init__(self, canvas: Any) -> None:
        self.canvas = canvas
        self.name: str | None = None

    def use(self, name: str) -> None:
        if name != self.name:
            self.canvas.setFont(name, SIZE, LEADING)
            self.name = name
