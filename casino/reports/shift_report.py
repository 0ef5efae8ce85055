"""What a séance's report says: who worked, under which règlement, with which packs, every coup,
the money, the prison, the rundown, disputes, anomalies, two charts and the audit checkpoint."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from django.conf import settings
from django.db.models import Count, Q, Sum
from django.db.models.functions import TruncHour
from django.utils import timezone
from reportlab.graphics.charts.barcharts import VerticalBarChart
from reportlab.graphics.shapes import Drawing, Line, Rect, String
from reportlab.lib import colors
from reportlab.platypus import Flowable, Spacer

from audit.models import Anomaly
from casino import clock
from casino.detectors.frame import Chart
from casino.detectors.hold import hour_chart, seance_measure
from casino.disputes.models import about_seances
from casino.floor.coups import table_prison
from casino.floor.models import (
    Coup,
    CoupResult,
    Duty,
    Movement,
    Settlement,
    Shift,
    Stake,
)
from casino.floor.registry import game_part
from casino.floor.selectors import shift_figures
from casino.floor.services import rundown, till_account
from casino.police.models import Observation
from casino.reports.coup_table import CoupRows, CoupTable, Item, PackRow
from casino.reports.models import Report
from casino.reports.pdf import SMALL, WIDTH, Cards, Document, grid, heading, para, text
from shoes.models import Pack, PackEvent, SealVerification

COUPS_PER_TABLE = 60  # rows per table flowable: long séances split into many small tables
COUPS_PER_READ = 20 * COUPS_PER_TABLE  # coups read a query: a few hundred kB of rows at most


def local(moment: Any, pattern: str = "%Y-%m-%d %H:%M") -> str:
    return "-" if moment is None else timezone.localtime(moment).strftime(pattern)


def person(user: Any) -> str:
    full = user.get_full_name()
    return f"{full} ({user.username})" if full else user.username


def money(minor: int | None) -> str:
    return "-" if minor is None else f"{minor / 100:,.2f}".replace(",", " ")


def key_values(rows: list[tuple[str, str]]) -> Flowable:
    return grid(
        [[para(f"<b>{text(k)}</b>"), para(text(v))] for k, v in rows],
        [55 * 2.83, WIDTH - 55 * 2.83],
        header=False,
    )


def shift_document(report: Report) -> Document:
    shift = Shift.objects.select_related("table__reglement", "opened_by").get(pk=report.shift_id)
    table = shift.table
    doc = Document(
        "Rapport de séance",
        "Shift report",
        f"Table {table.number} - {local(shift.opened_at)} / {local(shift.closed_at, '%H:%M')}",
        f"version {report.version} - chaîne d'audit / audit chain #{report.chain_to} "
        f"{report.head_hash[:16]}...",
    )
    reglement = shift.reglement
    packs = list(
        Pack.objects.filter(Q(coups__shift=shift) | Q(events__shift=shift))
        .distinct()
        .order_by("id")
    )
    _seance(doc, report, shift, reglement, packs)
    _packs(doc, packs)
    # A game with a section of its own writes its rounds and its hold (``<package>.report``);
    # Trente-et-Quarante's coups, prison and hold are still written here.
    game = game_part(table.game, "report")
    if game is not None:
        doc.add(game.section(shift))  # read while the PDF is written
    else:
        doc.add(_coups(shift))
        _prison(doc, shift)
    _rundown(doc, shift)
    _disputes(doc, shift)
    _anomalies(doc, shift, packs)
    _by_hour(doc, shift)
    if game is None:
        _hold(doc, shift)
    checkpoint(doc, report)
    return doc


def _seance(doc: Document, report: Report, shift: Shift, reglement: Any, packs: list[Pack]) -> None:
    table = shift.table
    doc.add(heading("Séance", "Shift"))
    doc.add(
        key_values(
            [
                ("Casino", settings.CASINO_NAME),
                ("Licence / licence", settings.CASINO_LICENCE),
                ("Table / table", f"{table.number} - {table.get_game_display()}"),
                ("Limites / limits", f"{money(shift.min_stake)} - {money(shift.max_stake)}"),
                (
                    "Ouverture / opened",
                    f"{local(shift.opened_at)} par / by {person(shift.opened_by)}",
                ),
                ("Fermeture / closed", local(shift.closed_at)),
                (
                    "Règlement / règlement",
                    f"{reglement.name} v{reglement.version}, en vigueur le / effective "
                    f"{reglement.effective_from}, approuvé par / approved by "
                    f"{person(reglement.approved_by)}",
                ),
                (
                    "Rapport / report",
                    f"version {report.version}, demandé le / requested {local(report.requested_at)}"
                    f" ({report.reason})",
                ),
            ]
        )
    )
    doc.add(heading("Personnel de service", "Staff on duty"))
    rows: list[list[Any]] = [["personne / person", "poste / post", "de / from", "à / to", "motif"]]
    rows.append([person(shift.opened_by), "chef de partie", local(shift.opened_at), "", ""])
    for duty in Duty.objects.filter(shift=shift).select_related("person", "end"):
        end = getattr(duty, "end", None)
        rows.append(
            [
                person(duty.person),
                duty.post,
                local(duty.started_at),
                local(end.at) if end else "",
                end.reason if end else "",
            ]
        )
    commissioners = {
        person(v.commissaire)
        for v in SealVerification.objects.filter(pack__in=packs).select_related("commissaire")
    }
    commissioners |= {
        person(o.commissioner)
        for o in Observation.objects.filter(
            visited_at__gte=shift.opened_at, visited_at__lte=shift.closed_at or clock.now()
        ).select_related("commissioner")
    }
    for name in sorted(commissioners):
        rows.append([name, "commissaire de police", "", "", "scellés, visites / seals, visits"])
    doc.add(grid(rows, [150, 80, 70, 70, WIDTH - 370]))
    doc.add(heading(f"Règlement {reglement.name} v{reglement.version}", "articles applied"))
    doc.add(
        grid(
            [["art.", "texte / text"]]
            + [
                [a["number"], para(f"{text(a['fr'])} <i>/ {text(a['en'])}</i>", SMALL)]
                for a in reglement.articles
            ],
            [25, WIDTH - 25],
        )
    )


def _packs(doc: Document, packs: list[Pack]) -> None:
    doc.add(heading("Paquets utilisés", "Packs used"))
    rows: list[list[Any]] = [
        ["scellé / seal", "vérification / verification", "mêlé, coupé / shuffled, cut"]
    ]
    for pack in packs:
        checks = "; ".join(
            f"{person(v.commissaire)} {local(v.at)}: lu / read {v.seal_number_read}, {v.verdict}"
            for v in pack.verifications.select_related("commissaire")
        )
        events = "; ".join(
            f"{e.get_kind_display().split(' / ')[-1]} {local(e.at, '%H:%M')} "
            f"{e.person or person(e.actor)}"
            for e in pack.events.filter(
                kind__in=[PackEvent.Kind.OPENED, PackEvent.Kind.SHUFFLED, PackEvent.Kind.CUT]
            ).select_related("actor")
        )
        rows.append(
            [
                para(f"<b>{text(pack.seal_number)}</b><br/>{text(pack.get_kind_display())}", SMALL),
                para(text(checks or "-"), SMALL),
                para(text(events or "-"), SMALL),
            ]
        )
    doc.add(grid(rows, [90, 190, WIDTH - 280]))


class CoupLine(NamedTuple):
    """A coup as the table of coups prints it; ``result`` is None until it is settled."""

    id: int
    number: int
    phase: str
    pack_id: int
    seal_number: str
    result: str | None
    void: bool | None
    noir_cards: list[str] | None
    rouge_cards: list[str] | None
    noir_total: int | None
    rouge_total: int | None
    announcement: dict[str, Any] | None

    def phase_label(self) -> str:
        return str(dict(Coup._meta.get_field("phase").flatchoices).get(self.phase, self.phase))


# A CoupLine's columns, in its order.
COUP_LINE = (
    "id",
    "number",
    "phase",
    "pack_id",
    "pack__seal_number",
    *(f"outcome__{name}" for name in CoupLine._fields[5:]),
)


def _coup_batches(
    shift: Shift,
) -> Iterator[list[tuple[CoupLine, dict[str, Any], dict[str, Any]]]]:
    """The séance's coups, a table's worth at a time, with their stakes and money summed: a long
    séance is read in pieces, never all at once."""
    # The ids first (a few bytes a coup), then the coups by id, many tables' worth a query: a
    # keyset on the séance would make PostgreSQL walk the séance's coups again for every read,
    # and a read a table was most of a long séance's round trips.
    every = list(Coup.objects.filter(shift=shift).order_by("id").values_list("id", flat=True))
    for start in range(0, len(every), COUPS_PER_READ):
        ids = every[start : start + COUPS_PER_READ]
        # Values, not model rows: a coup's row and its result's refer to each other, so ten
        # thousand of them were left for the garbage collector, whose passes over the whole
        # process grew with the séance.
        read = [
            CoupLine._make(row)
            for row in Coup.objects.filter(id__in=ids).order_by("id").values_list(*COUP_LINE)
        ]
        stakes = {
            r["coup_id"]: r
            for r in Stake.objects.filter(coup_id__in=ids, withdrawal__isnull=True)
            .values("coup_id")
            .annotate(n=Count("id"), staked=Sum("amount"))
        }
        money_of = {
            r["coup_id"]: r
            for r in Settlement.objects.filter(coup_id__in=ids)
            .values("coup_id")
            .annotate(paid=Sum("paid"), to_bank=Sum("to_bank"), premium=Sum("premium"))
        }
        for first in range(0, len(read), COUPS_PER_TABLE):
            yield [
                (
                    c,
                    stakes.get(c.id, {"n": 0, "staked": 0}),
                    money_of.get(c.id, {"paid": 0, "to_bank": 0, "premium": 0}),
                )
                for c in read[first : first + COUPS_PER_TABLE]
            ]


CARDS_WIDTH = 190
COUP_HEADER = [
    "no",
    "rangée",
    "cartes / cards",
    "pts",
    "annonce / announcement",
    "mises",
    "ramassé",
    "payé",
]
COUP_WIDTHS = [26, 34, CARDS_WIDTH, 20, 118, 45, 45, 45]


def _coups(shift: Shift) -> Iterator[Flowable]:
    """Every coup, both rows as cards, with its stakes, what was collected and what was paid;
    then the totals. A generator: the PDF is written while the coups are read."""
    yield heading("Coups", "Coups")
    totals = {"n": 0, "staked": 0, "collected": 0, "paid": 0, "coups": 0}
    pack = None
    for batch in _coup_batches(shift):
        items: list[Item] = []
        for coup, s, m in batch:
            if coup.pack_id != pack:
                pack = coup.pack_id
                items.append(PackRow(f"paquet / pack {coup.seal_number}"))
            collected = (m["to_bank"] or 0) + (m["premium"] or 0)
            paid = m["paid"] or 0
            totals["coups"] += 1
            totals["n"] += s["n"]
            totals["staked"] += s["staked"] or 0
            totals["collected"] += collected
            totals["paid"] += paid
            if coup.result is None:
                items.append(CoupRows(str(coup.number), [coup.phase_label(), *[""] * 6], [""] * 7))
                continue
            said = coup.announcement.get("result") or coup.result
            void = " (nul / void)" if coup.void else ""
            words = f"{coup.announcement.get('noir') or ''} / "
            words += coup.announcement.get("rouge") or ""
            noir = [
                "noir",
                Cards(coup.noir_cards, CARDS_WIDTH),
                str(coup.noir_total),
                words,
                f"{s['n']}: {money(s['staked'] or 0)}",
                money(collected),
                money(paid),
            ]
            rouge = [
                "rouge",
                Cards(coup.rouge_cards, CARDS_WIDTH),
                str(coup.rouge_total),
                f"{said}{void}",
                *[""] * 3,
            ]
            items.append(CoupRows(str(coup.number), noir, rouge))
        yield CoupTable(COUP_HEADER, COUP_WIDTHS, items)
    figures = shift_figures(shift)
    hold = "-" if figures.hold is None else f"{figures.hold:.2f} %"
    yield heading("Totaux", "Totals")
    yield key_values(
        [
            ("Coups / coups", str(totals["coups"])),
            ("Mises / stakes", f"{totals['n']} pour / for {money(totals['staked'])}"),
            ("Ramassé / collected", money(totals["collected"])),
            ("Payé / paid", money(totals["paid"])),
            ("Résultat / result (win)", money(figures.win)),
            ("Drop, hold", f"{money(figures.drop)}, {hold}"),
        ]
    )


def _prison(doc: Document, shift: Shift) -> None:
    first = CoupResult.objects.filter(coup__shift=shift).order_by("id").first()
    last = CoupResult.objects.filter(coup__shift=shift).order_by("-id").first()
    carried_in = table_prison(shift, before=first) if first else table_prison(shift)
    carried_out = last.prison_after if last else []
    doc.add(heading("Prison", "Prisoners carried in and out"))
    rows: list[list[Any]] = [["", "mise / stake", "chance", "retenu / held", "niveau / level"]]
    for label, prisoners in (
        ("entrée / in", [(p.stake, p.chance.value, p.held, p.level) for p in carried_in]),
        ("sortie / out", [(p["stake"], p["chance"], p["held"], p["level"]) for p in carried_out]),
    ):
        if not prisoners:
            rows.append([label, "-", "", "", ""])
        for stake, chance, held, level in prisoners:
            rows.append([label, str(stake), chance, money(held), str(level)])
    doc.add(grid(rows, [70, 80, 80, 80, WIDTH - 310]))


def _rundown(doc: Document, shift: Shift) -> None:
    r = rundown(shift)
    doc.add(heading("Caisse de la table", "Cash rundown"))
    doc.add(
        key_values(
            [
                ("Ouverture / opening", money(r.opening)),
                ("Apports / fills", money(r.fills)),
                ("Retours / credits", money(r.credits)),
                ("Résultat du jeu / result of play", money(r.result)),
                ("Attendu / expected", money(r.expected)),
                ("Fermeture comptée / closing count", money(r.closing)),
                ("Écart / variance", money(r.variance)),
            ]
        )
    )
    rows: list[list[Any]] = [
        ["", "total", "jetons / chips", "compté par / counted by", "contresigné / countersigned"]
    ]
    for count in shift.float_counts():
        chips = ", ".join(
            f"{n} x {money(int(d))}"
            for d, n in sorted(count.chips.items(), key=lambda c: -int(c[0]))
        )
        rows.append(
            [
                count.get_moment_display(),
                money(count.total),
                para(text(chips), SMALL),
                person(count.counted_by),
                person(count.countersignature.by) if hasattr(count, "countersignature") else "-",
            ]
        )
    doc.add(Spacer(1, 3), grid(rows, [85, 55, WIDTH - 370, 115, 115]))


def _disputes(doc: Document, shift: Shift) -> None:
    found = about_seances([shift.pk]).prefetch_related(
        "decisions__decided_by", "decisions__approval__by"
    )
    doc.add(heading("Contestations", "Disputes"))
    rows: list[list[Any]] = [
        ["no", "objet, réclamation / subject, claim", "état / state", "décisions / decisions"]
    ]
    for dispute in found:
        decisions = "<br/>".join(
            text(
                f"{d.get_instance_display()}: {person(d.decided_by)} {local(d.decided_at)}, "
                f"art. {', '.join(d.articles)}; corrections: "
                + (
                    "; ".join(f"{a} -> {b}: {money(n)}" for a, b, n in d.corrections)
                    or "aucune / none"
                )
                + _approval_of(d)
            )
            for d in dispute.decisions.all()
        )
        rows.append(
            [
                str(dispute.pk),
                para(text(f"{dispute.subject_label()}: {dispute.claim}"), SMALL),
                dispute.get_state_display(),
                para(decisions or "-", SMALL),
            ]
        )
    if len(rows) == 1:
        rows.append(["", "aucune / none", "", ""])
    doc.add(grid(rows, [22, 190, 90, WIDTH - 302]))


def _approval_of(decision: Any) -> str:
    """A decision's second approval, when its corrections needed one."""
    if not decision.approval_grounds:
        return ""
    approval = getattr(decision, "approval", None)
    if approval is None:
        return " (en attente d'approbation / awaiting approval)"
    verdict = "approuvée / approved" if approval.approved else "refusée / refused"
    return f" ({verdict}: {person(approval.by)} {local(approval.at)})"


def _anomalies(doc: Document, shift: Shift, packs: list[Pack]) -> None:
    coup_ids = [str(pk) for pk in Coup.objects.filter(shift=shift).values_list("pk", flat=True)]
    found = Anomaly.objects.filter(
        Q(subject_type="floor.shift", subject_id=str(shift.pk))
        | Q(subject_type="floor.coup", subject_id__in=coup_ids)
        | Q(subject_type="shoes.pack", subject_id__in=[str(p.pk) for p in packs])
    ).order_by("detected_at")
    doc.add(heading("Anomalies", "Anomalies and their review"))
    rows: list[list[Any]] = [
        ["détectée / detected", "détecteur", "gravité", "résumé / summary", "état / state"]
    ]
    for anomaly in found:
        rows.append(
            [
                local(anomaly.detected_at),
                para(text(anomaly.detector), SMALL),
                anomaly.severity,
                para(text(anomaly.summary), SMALL),
                anomaly.get_state_display(),
            ]
        )
    if len(rows) == 1:
        rows.append(["", "aucune / none", "", "", ""])
    doc.add(grid(rows, [80, 80, 40, WIDTH - 270, 70]))


def _by_hour(doc: Document, shift: Shift) -> None:
    bank = till_account(shift.table)  # a cercle's fee box: the house banks nothing there
    by_hour = list(
        Movement.objects.filter(shift=shift)
        .exclude(kind__in=[Movement.Kind.FLOAT, Movement.Kind.FILL, Movement.Kind.CREDIT])
        .annotate(hour=TruncHour("at", tzinfo=timezone.get_current_timezone()))
        .values("hour")
        .annotate(
            came=Sum("amount", filter=Q(debit=bank)), went=Sum("amount", filter=Q(credit=bank))
        )
        .order_by("hour")
    )
    doc.add(heading("Résultat par heure", "Result by hour"))
    drawing = Drawing(WIDTH, 130)
    chart = VerticalBarChart()
    chart.x, chart.y, chart.width, chart.height = 40, 20, WIDTH - 60, 95
    values = [((h["came"] or 0) - (h["went"] or 0)) / 100 for h in by_hour] or [0]
    chart.data = [values]
    chart.categoryAxis.categoryNames = [local(h["hour"], "%Hh") for h in by_hour] or ["-"]
    chart.categoryAxis.labels.fontSize = 7
    chart.valueAxis.labels.fontSize = 7
    chart.bars[0].fillColor = colors.HexColor("#2c3e50")
    drawing.add(chart)
    doc.add(drawing)


def _hold(doc: Document, shift: Shift) -> None:
    # The hold detector's own reading (``casino.detectors.hold``): the séance's actual result
    # against the law of the stakes actually placed, each coup's joint outcome, all its stakes and
    # prisoners together through the engine, hour by hour too.
    m = seance_measure(shift)
    doc.add(heading("Hold réel et attendu", "Actual vs. expected hold"))
    if not m.drop:
        doc.add(para("aucune mise / no stakes"))
        return
    law, drop = m.law, m.drop
    expected, low, high = (100 * v / drop for v in (law.mean, *law.band()))
    actual = 100 * m.actual / drop
    doc.add(hold_drawing(actual, expected, low, high))
    if law.exact and not law.slack:
        how = f"loi exacte / exact law on the lattice of {money(law.step)}"
    elif law.exact:
        how = (
            f"loi sur un réseau de / law on a lattice of {money(law.step)}, "
            f"arrondis / rounding at most {money(int(law.slack))}, lue prudemment / read conservatively"
        )
    else:
        how = f"loi normale / normal law (Berry-Esseen {law.berry_esseen:.2g})"
    doc.add(
        para(
            text(
                f"hold réel / actual {actual:.2f} %; attendu / expected {expected:.2f} %, bande à "
                f"95 % / 95 % band [{low:.2f} %, {high:.2f} %], p = {m.p_value:.3g} (two-sided). "
                f"Each coup's six joint outcomes (odds module), all its stakes and the prisoners it "
                f"began with settled by the engine together; {how}; {len(m.coups)} coups, "
                f"{drop / 100:,.2f} staked."
            ),
            SMALL,
        )
    )
    doc.add(heading("Hold par heure et sa bande", "Hold by hour against its band"))
    doc.add(hour_drawing(hour_chart(m, percent=True)))


def hour_drawing(chart: Chart, height: int = 140) -> Drawing:
    """A ``bars`` chart (``casino.detectors.frame.Chart``) as a vector drawing: each bar's band
    in light blue, its expected value as a blue tick, the bar itself dark (red outside its band)."""
    values = list(chart.values) or [0.0]
    everything = [*values, *chart.expected, *chart.low, *chart.high, 0.0]
    lo, hi = min(everything), max(everything)
    if hi == lo:
        hi = lo + 1
    left, bottom, top = 44, 16, 12
    plot_w, plot_h = WIDTH - left - 10, height - bottom - top

    def y(value: float) -> float:
        return bottom + (value - lo) / (hi - lo) * plot_h

    drawing = Drawing(WIDTH, height)
    step = plot_w / len(values)
    for i, value in enumerate(values):
        x = left + i * step
        inside = True
        if i < len(chart.low) and i < len(chart.high):
            drawing.add(
                Rect(
                    x + 1,
                    y(chart.low[i]),
                    step - 2,
                    max(y(chart.high[i]) - y(chart.low[i]), 0.5),
                    fillColor=colors.HexColor("#d6eaf8"),
                    strokeColor=None,
                )
            )
            inside = chart.low[i] <= value <= chart.high[i]
        base, end = sorted((y(0.0), y(value)))
        drawing.add(
            Rect(
                x + step * 0.3,
                base,
                step * 0.4,
                max(end - base, 0.5),
                fillColor=colors.HexColor("#2c3e50" if inside else "#c0392b"),
                strokeColor=None,
            )
        )
        if i < len(chart.expected):
            drawing.add(
                Line(
                    x + step * 0.15,
                    y(chart.expected[i]),
                    x + step * 0.85,
                    y(chart.expected[i]),
                    strokeColor=colors.HexColor("#2980b9"),
                    strokeWidth=1.5,
                )
            )
        if i < len(chart.labels):
            drawing.add(String(x + step / 2, 3, chart.labels[i], fontSize=6.5, textAnchor="middle"))
    drawing.add(Line(left, y(0.0), WIDTH - 10, y(0.0), strokeColor=colors.grey))
    for value in (lo, hi):
        drawing.add(
            String(
                left - 4, y(value) - 2, f"{value:.4g}{chart.unit}", fontSize=6.5, textAnchor="end"
            )
        )
    return drawing


def hold_drawing(actual: float, expected: float, low: float, high: float) -> Drawing:
    lo = min(low, actual, 0.0) - 1
    hi = max(high, actual, 0.0) + 1
    width, height = WIDTH, 50

    def x(value: float) -> float:
        return 20 + (value - lo) / (hi - lo) * (width - 40)

    drawing = Drawing(width, height)
    drawing.add(Line(20, 20, width - 20, 20, strokeColor=colors.grey))
    drawing.add(
        Rect(
            x(low), 12, x(high) - x(low), 16, fillColor=colors.HexColor("#d6eaf8"), strokeColor=None
        )
    )
    drawing.add(
        Line(
            x(expected), 8, x(expected), 32, strokeColor=colors.HexColor("#2980b9"), strokeWidth=1.5
        )
    )
    drawing.add(
        Rect(x(actual) - 3, 17, 6, 6, fillColor=colors.HexColor("#c0392b"), strokeColor=None)
    )
    drawing.add(Line(x(0), 14, x(0), 26, strokeColor=colors.black))
    for value, label in (
        (low, f"{low:.1f}%"),
        (high, f"{high:.1f}%"),
        (actual, f"réel {actual:.2f}%"),
    ):
        drawing.add(
            String(x(value), 36 if value is actual else 2, label, fontSize=6.5, textAnchor="middle")
        )
    return drawing


def checkpoint(
    doc: Document, report: Report, head: str = "Tête à la clôture / head at close"
) -> None:
    """The audit chain's range and head hash the report pins (an addendum: as requested)."""
    doc.add(heading("Chaîne d'audit", "Audit chain checkpoint"))
    doc.add(
        key_values(
            [
                ("Événements / events", f"#{report.chain_from} .. #{report.chain_to}"),
                (head, f"#{report.chain_to}"),
                ("Empreinte / head hash", report.head_hash),
                (
                    "Vérifier / verify",
                    "python manage.py verify_audit; the regulator's export carries the events",
                ),
            ]
        )
    )
