from django.apps import AppConfig


class PoliceConfig(AppConfig):
    name = "casino.police"
    label = "police"
    verbose_name = "Registre de police / Police register"

    def ready(self) -> None:
        from casino.police import tasks  # noqa: F401  registers the outbox tasks in every process
