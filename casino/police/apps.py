from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PoliceConfig(AppConfig):
    name = "casino.police"
    label = "police"
    verbose_name = _("Registre de police")

    def ready(self) -> None:
        from casino.police import tasks  # noqa: F401  registers the outbox tasks in every process
