"""The cercle section of the séance report (``casino/reports/shift_report.py`` asks the table's game
for it through the registry): who sat where and when, every deal with its declarer, game, trumps,
the couleur doubling, its winners, the marks of each player and the fee; then each player's totals
and the fee box, which is the séance's rundown (the house banks nothing at a cercle: its result is
the fees it took, RULES.md 3.6).

Every figure is the settlement's, the engine's document kept at each deal's last card; the
report is the casino's signed document, written in both languages at once like the rest of it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from reportlab.platypus import Flowable

from casino.floor.play.alliance.models import CercleSeat, Deal, DealPhase
from casino.floor.services import rundown
from casino.reports.pdf import SMALL, SUITS, WIDTH, grid, heading, para, text
from casino.reports.shift_report import key_values, local, money, person

DEALS_PER_TABLE = 40  # rows per table flowable: a long séance splits into many small tables
SUIT_NAMES = {"S": "pique", "H": "coeur", "D": "carreau", "C": "trèfle"}
GAMES = {"alliance": "alliance", "lever": "lever", "solo": "solo"}

SEAT_HEADER = ["place", "joueur / player", "assis / from", "levé / to", "placé par / by", "motif"]
SEAT_WIDTHS = [30, 130, 70, 70, 110, WIDTH - 410]
DEAL_HEADER = [
    ("no", ""),
    ("donneur", "dealer"),
    ("déclarant", "declarer"),
    ("jeu", "game"),
    ("atout", "trumps"),
    ("couleur", "x2"),
    ("gagnants", "winners"),
    ("marques de chaque joueur", "each player's marks"),
    ("droit", "fee"),
]
DEAL_WIDTHS = [22, 48, 48, 52, 48, 40, 70, WIDTH - 368, 40]
PLAYER_HEADER = [
    "joueur / player",
    "donnes / deals",
    "marques / marks",
    "argent / money",
    "droits / fees",
    "résultat net / net",
]
PLAYER_WIDTHS = [WIDTH - 350, 60, 65, 75, 75, 75]


@dataclass
class Totals:
    """One player's séance: the deals he played, his net marks, their money, the fees he paid
    and what he won or lost in all (the settlements' ``money``)."""

    deals: int = 0
    marks: int = 0
    money: int = 0
    fees: int = 0
    net: int = 0


def two_lines(fr: str, en: str) -> Flowable:
    """A column's head on two lines, French then English: the deals' columns are narrow."""
    return para(f"<b>{text(fr)}</b><br/>{text(en)}" if en else f"<b>{text(fr)}</b>", SMALL)


def short(code: str) -> str:
    """A patron's account code without its prefix (``patron:ana`` → ``ana``): the seats table
    names each in full."""
    return code.removeprefix("patron:")


def suit(code: str | None) -> Any:
    """The suit as on the table, its glyph in ZapfDingbats (a standard PDF font) and its name."""
    if code is None:
        return "-"
    glyph, colour = SUITS[code]
    return para(
        f"<font face='ZapfDingbats' color='#{colour.hexval()[2:]}'>{glyph}</font> "
        f"{SUIT_NAMES[code]}",
        SMALL,
    )


def section(shift: Any) -> Iterator[Flowable]:
    """The seats, the deals, each player's totals, the fee box. A generator, like the coups': the
    PDF is written while the deals are read."""
    yield heading("Places au cercle", "Seats")
    yield _seats(shift)
    yield heading("Donnes", "Deals")
    totals: dict[str, Totals] = {}
    fees = 0
    played = 0
    for batch in _deal_batches(shift):
        rows: list[list[Any]] = [[two_lines(fr, en) for fr, en in DEAL_HEADER]]
        for deal in batch:
            outcome = deal.settlement.outcome if deal.phase == DealPhase.OVER else None
            rows.append(_deal_row(deal, outcome))
            if outcome is None:
                continue
            played += 1
            fees += outcome["fee"] * len(deal.players)
            for player in deal.players:
                t = totals.setdefault(player, Totals())
                t.deals += 1
                t.marks += outcome["marks"][player]
                t.money += outcome["marks"][player] * deal.mark_value
                t.fees += outcome["fee"]
                t.net += outcome["money"][player]
        yield grid(rows, DEAL_WIDTHS)
    if not played:
        yield para("aucune donne jouée / no deal played out")
    yield heading("Résultats des joueurs", "Players' results")
    yield _players(totals)
    yield heading("Cagnotte", "Fee box")
    result = rundown(shift).result
    yield key_values(
        [
            ("Donnes jouées / deals played", str(played)),
            ("Droits des donnes / fees of the deals", money(fees)),
            ("Résultat de la caisse / rundown result", money(result)),
            (
                "Contrôle / check",
                "égaux / equal" if fees == result else f"ÉCART / MISMATCH {money(result - fees)}",
            ),
        ]
    )


def _seats(shift: Any) -> Flowable:
    rows: list[list[Any]] = [SEAT_HEADER]
    for s in (
        CercleSeat.objects.filter(shift=shift)
        .select_related("patron", "by", "end")
        .order_by("at", "id")
    ):
        end = getattr(s, "end", None)
        name = f"{s.patron.code} ({s.patron.name})" if s.patron.name else s.patron.code
        rows.append(
            [
                str(s.seat),
                para(text(name), SMALL),
                local(s.at),
                local(end.at) if end else "-",
                para(text(person(s.by)), SMALL),
                para(text(end.reason if end else ""), SMALL),
            ]
        )
    if len(rows) == 1:
        rows.append(["", "aucun / none", "", "", "", ""])
    return grid(rows, SEAT_WIDTHS)


def _deal_batches(shift: Any) -> Iterator[list[Deal]]:
    """The séance's deals, a table's worth at a time, each with its settlement: read in pieces,
    never all at once (the ids first, then each table's deals by id)."""
    every = list(Deal.objects.filter(shift=shift).order_by("id").values_list("id", flat=True))
    for start in range(0, len(every), DEALS_PER_TABLE):
        ids = every[start : start + DEALS_PER_TABLE]
        yield list(Deal.objects.filter(id__in=ids).select_related("settlement").order_by("id"))


def _deal_row(deal: Deal, outcome: dict[str, Any] | None) -> list[Any]:
    if outcome is None:
        return [str(deal.number), short(deal.dealer), deal.get_phase_display(), *[""] * 6]
    game = GAMES[outcome["game"]] + (" forcé / forced" if outcome["forced"] else "")
    doubled = outcome["trumps"] == outcome["couleur"]
    marks = ", ".join(f"{short(p)} {outcome['marks'][p]:+d}" for p in deal.players)
    return [
        str(deal.number),
        para(text(short(deal.dealer)), SMALL),
        para(text(short(outcome["declarer"])), SMALL),
        para(text(game), SMALL),
        suit(outcome["trumps"]),
        "x2" if doubled else "-",
        para(text(", ".join(short(w) for w in outcome["winners"]) or "personne / nobody"), SMALL),
        para(text(marks), SMALL),
        money(outcome["fee"] * len(deal.players)),
    ]


def _players(totals: dict[str, Totals]) -> Flowable:
    rows: list[list[Any]] = [PLAYER_HEADER]
    whole = Totals()
    for player, t in sorted(totals.items()):
        rows.append(
            [para(text(player), SMALL), str(t.deals), f"{t.marks:+d}", *map(money, _money(t))]
        )
        whole.marks += t.marks
        whole.money += t.money
        whole.fees += t.fees
        whole.net += t.net
    if len(rows) == 1:
        rows.append(["aucun / none", "", "", "", "", ""])
    rows.append(["total", "", f"{whole.marks:+d}", *map(money, _money(whole))])
    return grid(rows, PLAYER_WIDTHS, extra=[("FONT", (0, -1), (-1, -1), "Helvetica-Bold", 7.5)])


def _money(t: Totals) -> tuple[int, int, int]:
    return t.money, t.fees, t.net
