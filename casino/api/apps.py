from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ApiConfig(AppConfig):
    name = "casino.api"
    label = "api"
    verbose_name = _("API")

    def ready(self) -> None:
        # The path converters (ref, table, day, code) every package's routes use.
        from casino.api import converters  # noqa: F401
