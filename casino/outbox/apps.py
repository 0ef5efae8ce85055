from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class OutboxConfig(AppConfig):
    name = "casino.outbox"
    label = "outbox"
    verbose_name = _("File d'attente des tâches")
