from django.apps import AppConfig


class ReportsConfig(AppConfig):
    name = "casino.reports"
    label = "reports"
    verbose_name = "Rapports signés / Signed reports"

    def ready(self) -> None:
        from casino.reports import tasks  # noqa: F401  registers the outbox tasks in every process
