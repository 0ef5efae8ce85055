from django.apps import AppConfig


class DisputesConfig(AppConfig):
    name = "casino.disputes"
    label = "disputes"
    verbose_name = "Contestations / Disputes"
