"""Building blocks of the reports' PDF (reportlab): A4 pages with the house's header, "page x of
y" footers, French headings with English alongside, tables that split across pages with their
header repeated, cards drawn as rank and suit glyph, and the place of the signature.

"Page x of y" without keeping every page in memory: each footer draws a form (a PDF XObject) that
is only written once the last page is known.
"""

from __future__ import annotations

import functools
import io
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from reportlab.lib import colors
from reportlab.lib.enums import TA_LEFT
from reportlab.lib.pagesizes import A4
from reportlab.lib.rl_accel import fp_str
from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
from reportlab.lib.units import mm
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.platypus import (
    BaseDocTemplate,
    Flowable,
    Frame,
    KeepTogether,
    PageTemplate,
    Paragraph,
    Spacer,
    Table,
    TableStyle,
)

PAGE_WIDTH, PAGE_HEIGHT = A4
MARGIN = 15 * mm
WIDTH = PAGE_WIDTH - 2 * MARGIN
RED = colors.HexColor("#c0392b")
GREY = colors.HexColor("#eeeeee")
SUITS = {
    "S": ("\u2660", colors.black),
    "H": ("\u2665", RED),
    "D": ("\u2666", RED),
    "C": ("\u2663", colors.black),
}

_styles = getSampleStyleSheet()
BODY = ParagraphStyle("body", parent=_styles["Normal"], fontSize=8.5, leading=10.5)
SMALL = ParagraphStyle("small", parent=BODY, fontSize=7, leading=8.5)
H1 = ParagraphStyle("h1", parent=_styles["Heading1"], fontSize=15, leading=18, alignment=TA_LEFT)
H2 = ParagraphStyle("h2", parent=_styles["Heading2"], fontSize=11, leading=14, spaceBefore=8)


def text(value: Any) -> str:
    """Plain text made safe for reportlab's paragraph markup; characters the standard fonts lack
    written the way a typist would."""
    out = str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return out.replace("\u2212", "-").replace("\u2192", "->").replace("\u2014", "-")


def heading(fr: str, en: str) -> Paragraph:
    return Paragraph(f"{text(fr)} <font color='#777777' size='9'>/ {text(en)}</font>", H2)


def para(value: str, style: ParagraphStyle = BODY) -> Paragraph:
    return Paragraph(value, style)


def grid(
    rows: Sequence[Sequence[Any]],
    widths: Sequence[float],
    *,
    header: bool = True,
    extra: Iterable[tuple[Any, ...]] = (),
    font_size: float = 7.5,
) -> Table:
    """A table that splits cleanly across pages, its header row repeated."""
    table = Table(list(rows), colWidths=list(widths), repeatRows=1 if header else 0)
    style: list[tuple[Any, ...]] = [
        ("FONT", (0, 0), (-1, -1), "Helvetica", font_size),
        ("VALIGN", (0, 0), (-1, -1), "MIDDLE"),
        ("LINEBELOW", (0, 0), (-1, -1), 0.25, colors.lightgrey),
        ("TOPPADDING", (0, 0), (-1, -1), 1.5),
        ("BOTTOMPADDING", (0, 0), (-1, -1), 1.5),
    ]
    if header:
        style += [
            ("FONT", (0, 0), (-1, 0), "Helvetica-Bold", font_size),
            ("BACKGROUND", (0, 0), (-1, 0), GREY),
        ]
    table.setStyle(TableStyle([*style, *extra]))
    return table


class Cards(Flowable):
    """A row of cards: rank in Helvetica-Bold, suit in ZapfDingbats (a standard PDF font, so no
    font file is needed), red or black as on the table."""

    STEP = 13

    def __init__(self, codes: Sequence[str], width: float) -> None:
        super().__init__()
        self.codes = list(codes)
        self.width = width
        self.height = 9

    def wrap(self, available_width: float, available_height: float) -> tuple[float, float]:
        return self.width, self.height

    def draw(self) -> None:
        # Each of the 52 cards is drawn once per document, as a form (a PDF XObject), and each
        # card laid is a reference to it: a long séance lays tens of thousands of cards, and
        # drawing each one's rank and suit again was most of the time spent drawing its coups.
        # Around each reference, the operators saveState, translate and restoreState would
        # write, written directly: their bookkeeping of the graphics state (copied, moved, put
        # back as it was) cost more than the reference itself, a hundred thousand times.
        canvas = self.canv
        x = 0.0
        for code in self.codes:
            name = f"card{code}"
            if not canvas.hasForm(name):
                self._card_form(name, code)
            canvas.addLiteral("q")
            canvas.addLiteral(f"{fp_str(1, 0, 0, 1, x, 0)} cm")
            canvas.doForm(name)
            canvas.addLiteral("Q")
            x += _rank_width(code[0]) + 0.5 + self.STEP - 4

    def _card_form(self, name: str, code: str) -> None:
        canvas = self.canv
        glyph, colour = SUITS[code[1]]
        canvas.beginForm(name)
        canvas.setFillColor(colour)
        canvas.setFont("Helvetica-Bold", 7.5)
        canvas.drawString(0, 1, _rank(code[0]))
        canvas.setFont("ZapfDingbats", 6.5)
        canvas.drawString(_rank_width(code[0]) + 0.5, 1, glyph)
        canvas.endForm()


def _rank(letter: str) -> str:
    return "10" if letter == "T" else letter


@functools.cache
def _rank_width(letter: str) -> float:
    return float(stringWidth(_rank(letter), "Helvetica-Bold", 7.5))


class SignaturePlace(Flowable):
    """The box the signature goes into, at the end of the report; records where it was drawn so
    that the signer puts the visible signature exactly there."""

    def __init__(self, where: dict[str, Any]) -> None:
        super().__init__()
        self.where = where
        self.width, self.height = WIDTH, 32 * mm

    def wrap(self, available_width: float, available_height: float) -> tuple[float, float]:
        return self.width, self.height

    def draw(self) -> None:
        canvas = self.canv
        x, y = canvas.absolutePosition(0, 0)
        canvas.setStrokeColor(colors.grey)
        canvas.rect(0, 0, self.width, self.height)
        canvas.setFont("Helvetica", 7)
        canvas.drawString(
            4,
            self.height - 9,
            "Signature électronique du casino / the casino's electronic signature",
        )
        self.where.update(page=canvas.getPageNumber() - 1, box=(x + 4, y + 4, x + 260, y + 74))


class LazyStory(list):  # type: ignore[type-arg]
    """The story reportlab consumes from its front, refilled from a generator as it goes, so a long
    report never holds all its flowables at once (reportlab only ever looks a few ahead)."""

    WINDOW = 16

    def __init__(self, items: Iterable[Flowable]) -> None:
        super().__init__()
        self._source: Iterator[Flowable] | None = iter(items)

    def _fill(self) -> None:
        while self._source is not None and list.__len__(self) < self.WINDOW:
            try:
                self.append(next(self._source))
            except StopIteration:
                self._source = None

    def __len__(self) -> int:
        self._fill()
        return list.__len__(self)

    def __getitem__(self, index: Any) -> Any:
        self._fill()
        return list.__getitem__(self, index)


@dataclass
class Document:
    """A report being written: the story, then ``render()`` to bytes."""

    title_fr: str
    title_en: str
    subtitle: str
    footer_note: str
    story: list[Flowable | Iterable[Flowable]] = field(default_factory=list)
    signature: dict[str, Any] = field(default_factory=dict)

    def add(self, *flowables: Flowable | Iterable[Flowable]) -> None:
        """Flowables, or an iterable of them (a generator is read only as the pages are laid)."""
        self.story.extend(flowables)

    def _page(self, canvas: Any, doc: Any) -> None:
        canvas.saveState()
        canvas.setFont("Helvetica-Bold", 8)
        canvas.drawString(MARGIN, PAGE_HEIGHT - 10 * mm, f"{settings.CASINO_NAME}")
        canvas.setFont("Helvetica", 7.5)
        canvas.drawRightString(
            PAGE_WIDTH - MARGIN,
            PAGE_HEIGHT - 10 * mm,
            f"{self.title_fr} / {self.title_en} - {self.subtitle}",
        )
        canvas.line(MARGIN, PAGE_HEIGHT - 11.5 * mm, PAGE_WIDTH - MARGIN, PAGE_HEIGHT - 11.5 * mm)
        canvas.line(MARGIN, 12 * mm, PAGE_WIDTH - MARGIN, 12 * mm)
        canvas.drawString(MARGIN, 8 * mm, self.footer_note)
        canvas.drawRightString(PAGE_WIDTH - MARGIN - 16, 8 * mm, f"page {doc.page} sur / of")
        canvas.doForm("page_total")
        canvas.restoreState()

    def render(self) -> tuple[bytes, int]:
        buffer = io.BytesIO()
        template = BaseDocTemplate(
            buffer,
            pagesize=A4,
            leftMargin=MARGIN,
            rightMargin=MARGIN,
            topMargin=16 * mm,
            bottomMargin=16 * mm,
            title=f"{self.title_fr} / {self.title_en} - {self.subtitle}",
            author=settings.CASINO_NAME,
        )
        frame = Frame(MARGIN, 16 * mm, WIDTH, PAGE_HEIGHT - 32 * mm, id="body")
        template.addPageTemplates([PageTemplate(id="page", frames=[frame], onPage=self._page)])

        def flowables() -> Iterator[Flowable]:
            yield para(
                f"{text(self.title_fr)} <font color='#777777'>/ {text(self.title_en)}</font>", H1
            )
            yield para(text(self.subtitle))
            yield Spacer(1, 4)
            for item in self.story:
                if isinstance(item, Flowable):
                    yield item
                else:
                    yield from item
            yield Spacer(1, 6)
            yield KeepTogether([SignaturePlace(self.signature)])

        template.build(LazyStory(flowables()), canvasmaker=_canvas_with_total)
        return buffer.getvalue(), template.page


def _canvas_with_total(*args: Any, **kwargs: Any) -> Any:
    from reportlab.pdfgen.canvas import Canvas

    class TotalCanvas(Canvas):  # type: ignore[misc]
        def save(self) -> None:
            pages = self.getPageNumber() - (1 if self._code == [] else 0)
            self.beginForm("page_total")
            self.setFont("Helvetica", 7.5)
            self.drawString(PAGE_WIDTH - MARGIN - 13, 8 * mm, str(pages))
            self.endForm()
            super().save()

    return TotalCanvas(*args, **kwargs)
