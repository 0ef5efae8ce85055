"""The police register: the commissioner records, the director follows up, a detector watches the
eight days."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from audit.chain import audit_record
from audit.models import Anomaly, Severity
from audit.services import anomaly_raise
from casino import clock, shown
from casino.errors import Conflict, DomainError, NotFound
from casino.floor.models import Table
from casino.locks import lock_name
from casino.people.roles import Role
from casino.people.services import require_role
from casino.police.models import FOLLOW_UP_WITHIN, FollowUp, Observation


class InvalidObservation(DomainError):
    code = "invalid_observation"


@transaction.atomic
def observation_record(
    *,
    actor: Any,
    visited_at: dt.datetime,
    checks: str,
    injunctions: str = "",
    table_number: int | None = None,
) -> Observation:
    """The commissioner writes a visit in the register: the checks made, any injunction."""
    require_role(actor, Role.COMMISSAIRE, act=_("écrire au registre de police"))
    now = clock.now()
    if visited_at > now:
        raise InvalidObservation(
            _("une visite est enregistrée après avoir eu lieu"), where="visited_at"
        )
    if not checks.strip():
        raise InvalidObservation(_("dites ce qui a été contrôlé"), where="checks")
    table = None
    if table_number is not None:
        table = Table.objects.filter(number=table_number).first()
        if table is None:
            raise NotFound(
                _("la table %(table)s n'existe pas") % {"table": table_number}, where="table"
            )
    observation = Observation.objects.create(
        commissioner=actor,
        visited_at=visited_at,
        recorded_at=now,
        table=table,
        checks=checks.strip(),
        injunctions=injunctions.strip(),
        follow_up_due=visited_at + FOLLOW_UP_WITHIN,
    )
    audit_record(
        actor=actor,
        action="police.observation",
        subject=observation,
        payload={
            "visited_at": visited_at,
            "table": table_number,
            "checks": observation.checks,
            "injunctions": observation.injunctions,
            "follow_up_due": observation.follow_up_due,
        },
    )
    return observation


@transaction.atomic
def follow_up_record(*, actor: Any, observation_id: int, action: str) -> FollowUp:
    """The director records what the house did about an observation."""
    require_role(
        actor, Role.DIRECTEUR, act=_("enregistrer la suite donnée à une observation de police")
    )
    try:
        lock_name(f"observation:{observation_id}")  # one follow-up at a time per observation
        observation = Observation.objects.get(pk=observation_id)
    except Observation.DoesNotExist:
        raise NotFound(
            _("l'observation %(observation)s n'existe pas") % {"observation": observation_id},
            where="observation",
        ) from None
    if FollowUp.objects.filter(observation=observation).exists():
        raise Conflict(
            _("%(observation)s a déjà sa suite") % {"observation": observation},
            where="observation",
        )
    if not action.strip():
        raise InvalidObservation(_("dites ce qui a été fait"), where="action")
    now = clock.now()
    follow_up = FollowUp.objects.create(
        observation=observation, director=actor, at=now, action=action.strip()
    )
    audit_record(
        actor=actor,
        action="police.follow_up",
        subject=observation,
        payload={"action": follow_up.action, "late": now > observation.follow_up_due},
    )
    return follow_up


def follow_ups_overdue(now: dt.datetime | None = None) -> list[Anomaly]:
    """Raise one ``police_follow_up_overdue`` anomaly per observation past its eight days
    without a follow-up (runs on a schedule; raising twice returns the first anomaly)."""
    now = now or clock.now()
    late = Observation.objects.filter(follow_up__isnull=True, follow_up_due__lt=now)
    return [
        anomaly_raise(
            detector="police_follow_up_overdue",
            severity=Severity.WARNING,
            subject=observation,
            # The casino's days, as every page writes them (UTC's day differs after midnight).
            summary=f"no follow-up to the police observation of "
            f"{shown.day(timezone.localdate(observation.visited_at))} "
            f"(due {shown.day(timezone.localdate(observation.follow_up_due))})",
            evidence={
                "observation": observation.pk,
                "visited_at": observation.visited_at.isoformat(),
                "due": observation.follow_up_due.isoformat(),
                "injunctions": observation.injunctions,
            },
            dedup_key=f"police_follow_up:{observation.pk}",
        )
        for observation in late
    ]
