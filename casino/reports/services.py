"""Reports: requested in the transaction of what causes them, rendered once per version by a worker.

The render claims its report row (``SELECT … FOR UPDATE``) inside the outbox task's transaction:
a second delivery waits, then finds it rendered; a worker killed mid-way rolls back and the task is
delivered again (acks late, reject on worker lost); a failure is retried with backoff and its error
stays on the outbox message, shown in the admin.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gc
import hashlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models.functions import TruncDate
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from audit.chain import audit_record
from audit.models import AuditEvent
from casino import clock
from casino.errors import Conflict, NotFound, SegregationViolation
from casino.floor.models import Shift
from casino.outbox.outbox import enqueue
from casino.people.roles import GAMING_ROLES, Role
from casino.people.services import require_role, roles_of
from casino.reports.models import RegisterSignOff, Report
from casino.reports.signing import sign_pdf

# Fault injection for the tests that kill a worker mid-render (never set in production).
PAUSE_ENV = "CASINO_REPORT_RENDER_PAUSE"


def _next_version(**subject: Any) -> int:
    last = Report.objects.filter(**subject).order_by("-version").first()
    return (last.version + 1) if last else 1


def _chain_head() -> AuditEvent:
    head = AuditEvent.objects.order_by("-seq").first()
    if head is None:
        raise Conflict(_("la chaîne d'audit est vide"), where="chain")
    return head


def _request(
    *,
    kind: str,
    actor: Any,
    reason: str,
    chain_from: int,
    head: AuditEvent,
    shift: Shift | None = None,
    day: dt.date | None = None,
    decision: Any = None,
) -> Report:
    version = _next_version(shift=shift) if shift else _next_version(day=day)
    message = enqueue(
        "reports.render",
        version=version,
        shift=shift.pk if shift else None,
        day=day.isoformat() if day else None,
    )
    report = Report.objects.create(
        kind=kind,
        shift=shift,
        day=day,
        decision=decision,
        version=version,
        requested_at=clock.now(),
        requested_by=actor,
        reason=reason,
        chain_from=chain_from,
        chain_to=head.seq,
        head_hash=head.hash,
        outbox=message,
    )
    audit_record(
        actor=actor,
        action="report.requested",
        subject=report,
        payload={"kind": kind, "version": version, "reason": reason, "chain_to": head.seq},
    )
    return report


def shift_report_request(*, shift: Shift, actor: Any, reason: str) -> Report:
    """A new version of a closed séance's report; its checkpoint is the chain at the close."""
    Shift.objects.select_for_update(of=("self",)).get(pk=shift.pk)
    events = AuditEvent.objects.filter(subject_type="floor.shift", subject_id=str(shift.pk))
    opened = events.filter(action="shift.opened").first()
    closed = events.filter(action="shift.closed").first()
    if opened is None or closed is None:
        raise Conflict(
            _("la séance %(shift)s n'est pas fermée : son rapport vient à la fermeture")
            % {"shift": shift.pk},
            where="shift",
        )
    return _request(
        kind=Report.Kind.SHIFT,
        actor=actor,
        reason=reason,
        chain_from=opened.seq,
        head=closed,
        shift=shift,
    )


def addendum_request(*, shift: Shift, decision: Any, actor: Any, reason: str) -> Report:
    """An addendum to a closed séance's report: the corrections a dispute's decision posted after
    its close, as the next version of the séance's reports. Its checkpoint is the chain as it
    stands (the posting included), from the dispute's first event."""
    Shift.objects.select_for_update(of=("self",)).get(pk=shift.pk)
    if shift.closed_at is None:
        raise Conflict(
            _("la séance %(shift)s n'est pas fermée : son rapport vient à la fermeture")
            % {"shift": shift.pk},
            where="shift",
        )
    head = _chain_head()
    raised = (
        AuditEvent.objects.filter(
            subject_type="disputes.dispute", subject_id=str(decision.dispute_id)
        )
        .order_by("seq")
        .first()
    )
    return _request(
        kind=Report.Kind.ADDENDUM,
        actor=actor,
        reason=reason,
        chain_from=raised.seq if raised else head.seq,
        head=head,
        shift=shift,
        decision=decision,
    )


def register_request(*, day: dt.date, actor: Any, reason: str) -> Report:
    """A new version of the day's register; its checkpoint is the chain as it stands."""
    from casino.reports.daily_register import shifts_of_day

    with connection.cursor() as cursor:  # one version number at a time per day
        cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [f"register:{day}"])
    shifts = list(shifts_of_day(day))
    if not shifts:
        raise NotFound(_("aucune séance le %(day)s") % {"day": day}, where="day")
    first = (
        AuditEvent.objects.filter(
            subject_type="floor.shift", subject_id__in=[str(s.pk) for s in shifts]
        )
        .order_by("seq")
        .first()
    )
    head = _chain_head()
    return _request(
        kind=Report.Kind.REGISTER,
        actor=actor,
        reason=reason,
        chain_from=first.seq if first else head.seq,
        head=head,
        day=day,
    )


@transaction.atomic
def report_regenerate(*, actor: Any, report_id: int, reason: str) -> Report:
    """On demand: a new version; earlier versions stay."""
    require_role(
        actor,
        Role.DIRECTEUR,
        Role.COMITE,
        Role.AUDITEUR,
        Role.CHEF_DE_PARTIE,
        act=_("régénérer un rapport"),
    )
    try:
        report = Report.objects.get(pk=report_id)
    except Report.DoesNotExist:
        raise NotFound(
            _("le rapport %(report)s n'existe pas") % {"report": report_id}, where="report"
        ) from None
    reason = reason.strip() or "regenerated on demand"
    if report.kind == Report.Kind.SHIFT:
        assert report.shift is not None
        return shift_report_request(shift=report.shift, actor=actor, reason=reason)
    if report.kind == Report.Kind.ADDENDUM:
        assert report.shift is not None
        return addendum_request(
            shift=report.shift, decision=report.decision, actor=actor, reason=reason
        )
    assert report.day is not None
    return register_request(day=report.day, actor=actor, reason=reason)


def registers_due(today: dt.date | None = None) -> list[Report]:
    """Request the register of every past gaming day whose séances are all closed and that has
    none yet (the beat asks hourly, through the outbox)."""
    from casino.reports.daily_register import shifts_of_day

    today = today or timezone.localdate(clock.now())
    requested = []
    days = (
        Shift.objects.annotate(day=TruncDate("opened_at", tzinfo=timezone.get_current_timezone()))
        .filter(day__lt=today)
        .exclude(day__in=Report.objects.filter(day__isnull=False).values("day"))
        .values_list("day", flat=True)
        .distinct()
        .order_by("day")
    )
    for day in days:
        with transaction.atomic():
            if Report.objects.filter(day=day).exists():
                continue
            if shifts_of_day(day).filter(closed_at__isnull=True).exists():
                continue
            requested.append(
                register_request(day=day, actor=None, reason="journée close / day closed")
            )
            # The day is over: the statistical detectors look at it (docs/detectors.md).
            enqueue("detectors.day_end", day=day.isoformat())
    return requested


def _write(name: str, data: bytes) -> None:
    """Write the file under MEDIA_ROOT in one step (a rendered version has one fixed name)."""
    path = Path(settings.MEDIA_ROOT) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    partial.write_bytes(data)
    os.replace(partial, path)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """A report holds its coups, tables and PDF objects until the document is written. The
    cyclic garbage collector's full passes walk every one of them, and a longer séance triggers
    more passes: the render grew faster than its pages (issue 17's profile of 10,000 coups: 1 full
    pass at 1,000 coups, 8 at 10,000). Reference counting still frees what the render drops; what
    it leaves in cycles is collected after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def report_render(*, version: int, shift: int | None = None, day: str | None = None) -> Report:
    """Render and sign one version, once; called by the outbox task in its transaction."""
    # A signed report is a record: its words (the labels it prints go through the catalog) are
    # the house's language, whoever asks for it and whatever language the caller speaks.
    with translation.override(settings.LANGUAGE_CODE):
        return _render(version=version, shift=shift, day=day)


def _render(*, version: int, shift: int | None, day: str | None) -> Report:
    from casino.reports.addendum import addendum_document
    from casino.reports.daily_register import register_document
    from casino.reports.shift_report import shift_document

    subject: dict[str, Any] = (
        {"shift_id": shift} if shift is not None else {"day": dt.date.fromisoformat(str(day))}
    )
    report = Report.objects.select_for_update().get(version=version, **subject)
    if report.rendered_at is not None:
        return report
    with _collector_paused():
        document = {
            Report.Kind.SHIFT: shift_document,
            Report.Kind.ADDENDUM: addendum_document,
            Report.Kind.REGISTER: register_document,
        }[Report.Kind(report.kind)](report)
        pdf, pages = document.render()
    pause = float(os.environ.get(PAUSE_ENV) or 0)
    if pause:
        print(f"rendering report {report.pk} in {os.getpid()}: pausing {pause}s", flush=True)
        time.sleep(pause)
    signed, signer = sign_pdf(
        pdf,
        box=document.signature["box"],
        page=document.signature["page"],
        reason=f"{report} - {settings.CASINO_NAME}",
    )
    digest = hashlib.sha256(signed).hexdigest()
    subject_name = f"shift-{report.shift_id}" if report.shift_id else f"register-{report.day}"
    if report.kind == Report.Kind.ADDENDUM:
        subject_name += "-addendum"
    name = f"reports/{subject_name}-v{report.version}.pdf"
    _write(name, signed)
    report.rendered_at = clock.now()
    report.pdf.name = name
    report.sha256 = digest
    report.pages = pages
    report.signer = signer
    report.save(update_fields=["rendered_at", "pdf", "sha256", "pages", "signer"])
    audit_record(
        actor=None,
        action="report.rendered",
        subject=report,
        payload={
            "kind": report.kind,
            "version": report.version,
            "sha256": digest,
            "pages": pages,
            "signer": signer,
            "chain_to": report.chain_to,
            "head_hash": report.head_hash,
        },
    )
    return report


@transaction.atomic
def register_sign_off(*, actor: Any, day: dt.date) -> RegisterSignOff:
    """ "Certifié exact": the director, and a second person of the comité, sign off the day's
    register. Once both have, a new version carrying their sign-offs is signed."""
    roles = roles_of(actor)
    if roles & GAMING_ROLES:
        raise SegregationViolation(
            _("%(person)s enregistre le jeu et ne peut pas le certifier") % {"person": actor},
            where="actor",
        )
    require_role(actor, Role.DIRECTEUR, Role.COMITE, act=_("viser le registre du jour"))
    capacity = (
        RegisterSignOff.Capacity.DIRECTEUR
        if Role.DIRECTEUR in roles
        else RegisterSignOff.Capacity.COMITE
    )
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [f"register:{day}"])
    report = Report.objects.filter(day=day, rendered_at__isnull=False).order_by("-version").first()
    if report is None:
        raise Conflict(
            _("le registre du %(day)s n'est pas encore signé : rien à viser") % {"day": day},
            where="day",
        )
    done = RegisterSignOff.objects.filter(day=day)
    if done.filter(person=actor).exists():
        raise SegregationViolation(
            _("%(person)s a déjà visé le %(day)s") % {"person": actor, "day": day}, where="actor"
        )
    if done.filter(capacity=capacity).exists():
        twice = (
            _("le directeur a déjà visé le %(day)s")
            if capacity == RegisterSignOff.Capacity.DIRECTEUR
            else _("le comité a déjà visé le %(day)s")
        )
        raise Conflict(twice % {"day": day}, where="actor")
    sign_off = RegisterSignOff.objects.create(
        day=day, person=actor, capacity=capacity, at=clock.now(), report=report
    )
    audit_record(
        actor=actor,
        action="register.signed_off",
        subject=report,
        payload={"day": day, "capacity": capacity, "version": report.version},
    )
    if done.count() == 2:
        register_request(
            day=day,
            actor=actor,
            reason="certifié exact: "
            + ", ".join(s.person.username for s in done.select_related("person")),
        )
    return sign_off
