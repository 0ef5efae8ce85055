"""What waits for those who oversee the floor: the commissioner (seals, the receipt register's
visa, escalated anomalies, appeals), internal audit (the anomaly queue), the director and the
comité (registers to certify, counts to countersign, police follow-ups) and the regulator (the
latest signed reports, the audit chain's last verification)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db.models import Q
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from audit.api import AnomalyList, ChainVerify
from audit.models import Anomaly, AnomalyState, ChainHead, ChainVerification, Severity
from casino import clock
from casino.disputes.api import DisputeList
from casino.disputes.models import DisputeState
from casino.floor.api import CountList
from casino.floor.models import FloatCount
from casino.people.roles import Role
from casino.people.services import roles_of
from casino.pit.access import holds
from casino.pit.cardroom import register_pages
from casino.pit.templatetags.pit_cash import money, person
from casino.pit.waiting import Group, Item, Link, Section, day, quoted
from casino.police.api import ObservationList
from casino.reports.api import ReportList
from casino.reports.models import RegisterSignOff, Report
from shoes.api import PackList, VisaList
from shoes.models import PackState

SHOWN = 15  # items of a long queue shown on the home; the whole queue is a link away
LATEST_REPORTS = 8
GRAVITY = {Severity.CRITICAL: 0, Severity.WARNING: 1, Severity.INFO: 2}
AWAITING_APPROVAL = (DisputeState.AWAITING_APPROVAL, DisputeState.AWAITING_APPROVAL_APPEAL)


def commissaire(user: Any) -> Section:
    packs = PackList.readable_by(user)
    escalated = AnomalyList.readable_by(user).filter(state=AnomalyState.ESCALATED)
    appealed = DisputeList.readable_by(user).filter(state=DisputeState.APPEALED)
    return Section(
        "commissaire",
        _("Commissaire de police"),
        [
            Group(
                "seals",
                _("Scellés à vérifier"),
                [
                    _pack(p, _("en magasin depuis sa réception"))
                    for p in packs.filter(state=PackState.IN_STORE).order_by("received_at")
                ],
                _("Aucun scellé n'attend d'être vérifié."),
            ),
            Group(
                "register",
                _("Registre de prise en charge à viser"),
                _register_pages(user),
                _("Toutes les pages du registre sont visées."),
            ),
            Group(
                "escalated",
                _("Anomalies qui vous sont transmises"),
                [_anomaly(a) for a in _by_gravity(escalated)],
                _("Aucune anomalie ne vous est transmise."),
            ),
            Group(
                "appeals",
                _("Contestations en appel"),
                [
                    _dispute(d, "decide", _("à décider en appel"))
                    for d in appealed.order_by("raised_at", "id")
                ],
                _("Aucune contestation en appel."),
            ),
            _approvals(user),
            Group(
                "destruction",
                _("Jeux à détruire devant vous"),
                [
                    _pack(p, p.get_state_display())
                    for p in packs.filter(state__in=[PackState.RETIRED, PackState.REJECTED])
                ],
                _("Aucun jeu n'attend sa destruction."),
            ),
        ],
    )


def auditeur(user: Any) -> Section:
    queue = AnomalyList.readable_by(user)
    opened = _by_gravity(queue.filter(state=AnomalyState.OPEN))
    taken = _by_gravity(queue.filter(state=AnomalyState.ACKNOWLEDGED))
    changelist = reverse("admin:audit_anomaly_changelist")
    return Section(
        "auditeur",
        _("Audit interne"),
        [
            Group(
                "anomalies-open",
                _("Anomalies ouvertes, les plus graves d'abord"),
                [_anomaly(a) for a in opened[:SHOWN]],
                _("Aucune anomalie ouverte."),
                act=_queue(opened, f"{changelist}?state__exact={AnomalyState.OPEN}"),
            ),
            Group(
                "anomalies-acknowledged",
                _("Prises en compte, à conclure"),
                [_anomaly(a) for a in taken[:SHOWN]],
                _("Aucune anomalie prise en compte n'attend de conclusion."),
                act=_queue(taken, f"{changelist}?state__exact={AnomalyState.ACKNOWLEDGED}"),
            ),
        ],
    )


def direction(user: Any) -> Section:
    """The director and the comité: the daily registers to certify exact, the counts to
    countersign; the director also the police follow-ups and the decisions to approve."""
    director = holds(user, Role.DIRECTEUR)
    groups = [
        Group(
            "registers",
            _("Registres du jour à certifier exacts"),
            _registers_to_certify(user),
            _("Aucun registre n'attend votre visa."),
        ),
        Group(
            "counts",
            _("Comptages à contresigner"),
            _counts_to_countersign(user),
            _("Aucun comptage n'attend de contresignature."),
        ),
    ]
    if director:
        groups += [_follow_ups(user), _approvals(user)]
    return Section("direction", _("Direction") if director else _("Comité de direction"), groups)


def inspecteur(user: Any) -> Section:
    reports = (
        ReportList.readable_by(user)
        .filter(rendered_at__isnull=False)
        .select_related("shift__table")
        .order_by("-rendered_at", "-id")[:LATEST_REPORTS]
    )
    return Section(
        "inspecteur",
        _("Inspection"),
        [
            Group(
                "reports",
                _("Derniers rapports signés"),
                [_report(r) for r in reports],
                _("Aucun rapport signé pour l'instant."),
                act=Link(_("Tous les rapports"), reverse("admin:reports_report_changelist")),
                waits=False,
            ),
            Group(
                "chain",
                _("La chaîne d'audit"),
                _chain(user),
                _("La chaîne n'a jamais été vérifiée."),
                act=Link(
                    _("Toutes les vérifications"),
                    reverse("admin:audit_chainverification_changelist"),
                ),
                waits=False,
            ),
        ],
    )


# --- the parts -----------------------------------------------------------------------------------

SEVERITY_WORDS = {
    Severity.CRITICAL: gettext_lazy("critique"),
    Severity.WARNING: gettext_lazy("avertissement"),
    Severity.INFO: gettext_lazy("information"),
}


def _queue(anomalies: list[Anomaly], url: str) -> Link | None:
    """The whole queue in the admin, when there is one."""
    return Link(_("Toute la file (%(n)s)") % {"n": len(anomalies)}, url) if anomalies else None


def _by_gravity(anomalies: Any) -> list[Anomaly]:
    """The gravest first, then the oldest."""
    return sorted(anomalies, key=lambda a: (GRAVITY[Severity(a.severity)], a.detected_at, a.pk))


def _anomaly(anomaly: Anomaly) -> Item:
    return Item(
        _("%(severity)s · %(summary)s")
        % {
            "severity": str(SEVERITY_WORDS[Severity(anomaly.severity)]).capitalize(),
            "summary": quoted(anomaly.summary, 20),
        },
        reverse("admin:audit_anomaly_review", args=[anomaly.pk]),
        at=anomaly.detected_at,
        urgent=anomaly.severity == Severity.CRITICAL,
    )


def _pack(pack: Any, note: str) -> Item:
    return Item(
        _("%(kind)s scellé %(seal)s") % {"kind": pack.get_kind_display(), "seal": pack.seal_number},
        reverse("admin:pit-pack", args=[pack.pk]),
        at=pack.received_at,
        note=note,
    )


def _dispute(dispute: Any, act: str, note: str) -> Item:
    return Item(
        _("Contestation n° %(number)s : « %(claim)s »")
        % {"number": dispute.pk, "claim": quoted(dispute.claim)},
        reverse("admin:disputes_dispute_act", args=[dispute.pk, act]),
        at=dispute.raised_at,
        note=note,
    )


def _approvals(user: Any) -> Group:
    """Decisions whose corrections wait for a second approver (the director or the
    commissioner), except those the person made."""
    waiting = (
        DisputeList.readable_by(user)
        .filter(state__in=AWAITING_APPROVAL)
        .exclude(decisions__decided_by=user)
        .order_by("raised_at", "id")
        .distinct()
    )
    return Group(
        "approvals",
        _("Décisions à approuver"),
        [_dispute(d, "approve", _("décision en attente d'un second approbateur")) for d in waiting],
        _("Aucune décision n'attend votre approbation."),
    )


def _register_pages(user: Any) -> list[Item]:
    """The receipt register's pages without a visa: today's, and the days a pack was received."""
    if not holds(user, *VisaList.read_roles):
        return []
    today = timezone.localdate(clock.now())
    card_room = reverse("admin:pit-card-room")
    return [
        Item(
            _("Page du %(day)s : %(n)s jeux reçus") % {"day": day(p["day"]), "n": len(p["packs"])},
            f"{card_room}#register-{p['day']:%Y-%m-%d}",
            urgent=p["day"] < today,
        )
        for p in register_pages(today)
        if p["visa"] is None and (p["packs"] or p["day"] == today)
    ]


def _registers_to_certify(user: Any) -> list[Item]:
    """The latest signed version of each day's register that the person has not certified and
    that no one has certified in the same capacity (register_sign_off refuses both)."""
    capacity = (
        RegisterSignOff.Capacity.DIRECTEUR
        if Role.DIRECTEUR in roles_of(user)
        else RegisterSignOff.Capacity.COMITE
    )
    certified = RegisterSignOff.objects.filter(Q(person=user) | Q(capacity=capacity)).values("day")
    registers = (
        ReportList.readable_by(user)
        .filter(kind=Report.Kind.REGISTER, rendered_at__isnull=False)
        .exclude(day__in=certified)
        .order_by("day", "-version")
    )
    latest: dict[dt.date, Report] = {}
    for report in registers:
        latest.setdefault(report.day, report)
    return [
        Item(
            _("Registre de contrôle du %(day)s") % {"day": day(on)},
            reverse("admin:reports_report_sign_off", args=[report.pk]),
            at=report.rendered_at,
            note=_("version %(version)s, signée") % {"version": report.version},
            also=(Link(_("le rapport"), reverse("admin:reports_report_change", args=[report.pk])),),
        )
        for on, report in latest.items()
    ]


def _counts_to_countersign(user: Any) -> list[Item]:
    """Opening counts no séance has opened on yet, and closing counts of séances still open,
    that wait for a countersignature."""
    counts = (
        CountList.readable_by(user)
        .filter(countersignature__isnull=True)
        .filter(
            Q(moment=FloatCount.Moment.OPENING, opened__isnull=True)
            | Q(moment=FloatCount.Moment.CLOSING, shift__closed_at__isnull=True)
        )
        .order_by("at", "id")
    )
    items = []
    for count in counts:
        if count.moment == FloatCount.Moment.OPENING:
            words = _("Comptage d'ouverture de %(table)s : %(total)s, compté par %(by)s")
            url = f"{reverse('admin:pit-seance-open')}?table={count.table.number}"
        else:
            words = _("Comptage de fermeture de %(table)s : %(total)s, compté par %(by)s")
            url = reverse("admin:pit-seance", args=[count.shift_id])
        items.append(
            Item(
                words
                % {
                    "table": count.table,
                    "total": money(count.total),
                    "by": person(count.counted_by),
                },
                f"{url}#count-{count.pk}",
                at=count.at,
            )
        )
    return items


def _follow_ups(user: Any) -> Group:
    """The commissioner's observations the director has not followed up yet, the soonest due
    first; those past their due date are late (what ``follow_ups_overdue`` flags each hour)."""
    now = clock.now()
    awaited = (
        ObservationList.readable_by(user)
        .filter(follow_up__isnull=True)
        .order_by("follow_up_due", "id")
    )
    return Group(
        "follow-ups",
        _("Suites à donner aux observations de police"),
        [
            Item(
                _("Visite du %(day)s : %(checks)s")
                % {"day": day(o.visited_at), "checks": quoted(o.injunctions or o.checks)},
                reverse("admin:police_observation_follow_up", args=[o.pk]),
                note=(
                    _("échéance dépassée le %(due)s")
                    if o.follow_up_due < now
                    else _("échéance le %(due)s")
                )
                % {"due": day(o.follow_up_due)},
                urgent=o.follow_up_due < now,
            )
            for o in awaited
        ],
        _("Aucune observation n'attend de suite."),
    )


def _report(report: Report) -> Item:
    if report.kind == Report.Kind.REGISTER:
        text = _("Registre de contrôle du %(day)s") % {"day": day(report.day)}
    elif report.kind == Report.Kind.ADDENDUM:
        text = _("Addendum au rapport de la séance n° %(shift)s, %(table)s") % {
            "shift": report.shift_id,
            "table": report.shift.table,
        }
    else:
        text = _("Rapport de la séance n° %(shift)s, %(table)s") % {
            "shift": report.shift_id,
            "table": report.shift.table,
        }
    return Item(
        text,
        reverse("admin:reports_report_change", args=[report.pk]),
        at=report.rendered_at,
        note=_("version %(version)s") % {"version": report.version},
        also=(
            Link(_("PDF signé"), reverse("admin:reports_report_pdf", args=[report.pk])),
            Link(_("export (zip)"), reverse("admin:reports_report_export", args=[report.pk])),
        ),
    )


def _chain(user: Any) -> list[Item]:
    """The last verification of the audit chain, and how far the chain has grown since."""
    if not holds(user, *ChainVerify.read_roles):
        return []
    last = ChainVerification.objects.order_by("-at", "-id").first()
    if last is None:
        return []
    head = ChainHead.objects.filter(pk=1).values_list("seq", flat=True).first() or 0
    since = max(head - last.head_seq, 0)
    if last.ok:
        text = _("Intacte : %(events)s événements vérifiés, jusqu'au n° %(head)s") % {
            "events": last.events,
            "head": last.head_seq,
        }
    else:
        text = _("ROMPUE au n° %(seq)s : %(reason)s") % {
            "seq": last.first_broken_seq,
            "reason": last.reason,
        }
    return [
        Item(
            text,
            reverse("admin:audit_chainverification_change", args=[last.pk]),
            at=last.at,
            note=_("événements enregistrés depuis : %(n)s") % {"n": since},
            urgent=not last.ok,
        )
    ]
