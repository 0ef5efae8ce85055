from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class DisputesConfig(AppConfig):
    name = "casino.disputes"
    label = "disputes"
    verbose_name = _("Contestations")
