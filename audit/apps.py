from typing import Any

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AuditConfig(AppConfig):
    name = "audit"
    verbose_name = _("Audit")

    def ready(self) -> None:
        from django.db.models.signals import post_migrate

        from audit import tasks  # noqa: F401  registers the outbox tasks in every process

        # Migrations that install triggers write pgtrigger's ignore switch back; close it again.
        post_migrate.connect(_close_pgtrigger_ignore, sender=self)


def _close_pgtrigger_ignore(using: str = "default", **_: Any) -> None:
    from django.db import connections

    from audit.database_role import close_pgtrigger_ignore

    close_pgtrigger_ignore(connections[using])
