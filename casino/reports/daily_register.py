"""The daily register (registre de contrôle): per table and séance, the result of the gaming day,
certified exact by the director and a second comité member."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.conf import settings
from django.db.models import QuerySet
from django.utils import timezone

from casino.floor.models import Shift
from casino.floor.selectors import shift_figures
from casino.floor.services import rundown
from casino.reports.models import RegisterSignOff, Report
from casino.reports.pdf import WIDTH, Document, grid, heading, para, text
from casino.reports.shift_report import key_values, local, money, person


def shifts_of_day(day: dt.date) -> QuerySet[Shift]:
    """The séances of a gaming day: those opened on that date, in the casino's time zone."""
    zone = timezone.get_current_timezone()
    start = dt.datetime.combine(day, dt.time.min, tzinfo=zone)
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
