"""Every entry of the admin's own log (additions, changes, deletions made through its forms, by
anyone, superusers included) is also an event of the audit chain, in the same transaction."""

from __future__ import annotations

from typing import Any

from django.contrib.admin.models import ADDITION, CHANGE, DELETION, LogEntry
from django.db import transaction

from audit.chain import audit_record

ACTIONS = {ADDITION: "admin.addition", CHANGE: "admin.change", DELETION: "admin.deletion"}


def audit_admin_log_entry(sender: Any, instance: LogEntry, created: bool, **_: Any) -> None:
    if not created:
        return
    content_type = instance.content_type
    with transaction.atomic():  # the admin's own transaction when there is one
        audit_record(
            actor=instance.user,
            action=ACTIONS.get(instance.action_flag, "admin.other"),
            subject=(
                (f"{content_type.app_label}.{content_type.model}", instance.object_id)
                if content_type is not None
                else None
            ),
            payload={
                "object": instance.object_repr,
                "change": instance.get_change_message(),
            },
        )
