"""Writes of the floor so far: tables, and opening and closing séances."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from audit.chain import audit_record
from casino import clock
from casino.errors import Conflict
from casino.floor.models import Game, Shift, Table
from casino.people.roles import Role
from casino.people.services import require_role


@transaction.atomic
def table_create(*, actor: Any, number: int, game: Game | str) -> Table:
    require_role(actor, Role.DIRECTEUR, act="creating a table")
    table = Table.objects.create(number=number, game=Game(game))
    audit_record(
        actor=actor,
        action="table.created",
        subject=table,
        payload={"number": number, "game": str(game)},
    )
    return table


@transaction.atomic
def shift_open(*, actor: Any, table: Table) -> Shift:
    require_role(actor, Role.CHEF_DE_PARTIE, act="opening a séance")
    Table.objects.select_for_update().get(pk=table.pk)
    if Shift.objects.filter(table=table, closed_at__isnull=True).exists():
        raise Conflict(f"{table} already has an open séance", where="table")
    shift = Shift.objects.create(table=table, opened_at=clock.now(), opened_by=actor)
    audit_record(actor=actor, action="shift.opened", subject=shift, payload={"table": table.number})
    return shift


@transaction.atomic
def shift_close(*, actor: Any, shift: Shift) -> Shift:
    require_role(actor, Role.CHEF_DE_PARTIE, act="closing a séance")
    shift = Shift.objects.select_for_update().get(pk=shift.pk)
    if shift.closed_at is not None:
        raise Conflict(f"séance {shift.pk} is already closed", where="shift")
    shift.closed_at = clock.now()
    shift.save(update_fields=["closed_at"])
    audit_record(actor=actor, action="shift.closed", subject=shift, payload={})
    return shift
