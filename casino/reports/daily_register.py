"""The daily register (registre de contrôle): per table and séance, the result of the gaming day,
certified exact by the director and a second comité member."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.conf import settings
from django.db.models import QuerySet
from django.utils import timezone

from casino.disputes.models import corrections_posted
from casino.floor.models import Shift
from casino.floor.selectors import shift_figures
from casino.floor.services import rundown
from casino.reports.models import RegisterSignOff, Report
from casino.reports.pdf import SMALL, WIDTH, Document, grid, heading, para, text
from casino.reports.shift_report import key_values, local, money, person


def _bounds(day: dt.date) -> tuple[dt.datetime, dt.datetime]:
    """The day from midnight to midnight, in the casino's time zone."""
    start = dt.datetime.combine(day, dt.time.min, tzinfo=timezone.get_current_timezone())
    return start, start + dt.timedelta(days=1)


def shifts_of_day(day: dt.date) -> QuerySet[Shift]:
    """The séances of a gaming day: those opened on that date, in the casino's time zone."""
    start, _ = _bounds(day)
    return (
        Shift.objects.filter(opened_at__gte=start, opened_at__lt=start + dt.timedelta(days=1))
        .select_related("table", "opened_by")
        .order_by("table__number", "opened_at")
    )


def register_document(report: Report) -> Document:
    assert report.day is not None
    doc = Document(
        "Registre de contrôle",
        "Daily register",
        f"journée de jeu / gaming day {report.day:%Y-%m-%d}",
        f"version {report.version} - chaîne d'audit / audit chain #{report.chain_to} "
        f"{report.head_hash[:16]}...",
    )
    doc.add(
        key_values(
            [
                ("Casino", settings.CASINO_NAME),
                ("Licence / licence", settings.CASINO_LICENCE),
                ("Journée / gaming day", f"{report.day:%Y-%m-%d}"),
                ("Rapport / report", f"version {report.version} ({report.reason})"),
            ]
        )
    )
    doc.add(heading("Résultats par table et séance", "Result per table and séance"))
    rows: list[list[Any]] = [
        ["table", "séance", "chef de partie", "coups", "drop", "résultat / win", "écart", ""]
    ]
    total_win = total_drop = 0
    for shift in shifts_of_day(report.day):
        figures = shift_figures(shift)
        variance = rundown(shift).variance
        total_win += figures.win
        total_drop += figures.drop
        rows.append(
            [
                str(shift.table.number),
                f"{local(shift.opened_at, '%H:%M')}-{local(shift.closed_at, '%H:%M')}",
                person(shift.opened_by),
                str(figures.coups),
                money(figures.drop),
                money(figures.win),
                money(variance),
                "certifié exact" if shift.closed_at else "en cours / open",
            ]
        )
    rows.append(["", "total", "", "", money(total_drop), money(total_win), "", ""])
    doc.add(grid(rows, [30, 60, 130, 35, 65, 70, 50, WIDTH - 440]))
    _corrections(doc, report.day)
    doc.add(heading("Certifié exact", "Certified exact"))
    sign_offs = RegisterSignOff.objects.filter(
        day=report.day, at__lte=report.requested_at
    ).select_related("person")
    if sign_offs:
        for s in sign_offs:
            doc.add(
                para(
                    text(
                        f"{s.get_capacity_display()}: {person(s.person)}, le / on {local(s.at)}, "
                        f"sur la version / on version {s.report.version}"
                    )
                )
            )
    else:
        doc.add(
            para(
                text(
                    "À viser par le directeur et un second membre du comité / to be signed off by "
                    "the director and a second committee member"
                )
            )
        )
    return doc


def _corrections(doc: Document, day: dt.date) -> None:
    """Corrections decided on disputes, on the day they were posted (outside any séance, so in no
    rundown): the dispute, its séance, who decided, who approved, the movements."""
    doc.add(heading("Corrections sur contestation", "Dispute corrections"))
    rows: list[list[Any]] = [
        ["contestation", "table, séance", "décidée par", "approuvée par", "mouvements / movements"]
    ]
    for decision, movements in corrections_posted(*_bounds(day)):
        dispute = decision.dispute
        shift = dispute.seance()
        approval = getattr(decision, "approval", None)
        rows.append(
            [
                para(text(f"{dispute.pk} ({decision.get_instance_display()})"), SMALL),
                para(
                    text(f"{shift.table.number}, {local(shift.opened_at)}" if shift else "-"),
                    SMALL,
                ),
                para(text(person(decision.decided_by)), SMALL),
                para(
                    text(person(approval.by) if approval else "non requise / not required"), SMALL
                ),
                para(
                    text(
                        "; ".join(
                            f"{m.credit.code} -> {m.debit.code}: {money(m.amount)}"
                            for m in movements
                        )
                    ),
                    SMALL,
                ),
            ]
        )
    if len(rows) == 1:
        rows.append(["", "aucune / none", "", "", ""])
    doc.add(grid(rows, [70, 85, 95, 95, WIDTH - 345]))
