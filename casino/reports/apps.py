from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ReportsConfig(AppConfig):
    name = "casino.reports"
    label = "reports"
    verbose_name = _("Rapports signés")

    def ready(self) -> None:
        from casino.reports import tasks  # noqa: F401  registers the outbox tasks in every process
