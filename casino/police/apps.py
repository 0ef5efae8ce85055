from django.apps import AppConfig


class PoliceConfig(AppConfig):
    name = "casino.police"
    label = "police"
    verbose_name = "Registre de police / Police register"
