from django.apps import AppConfig


class DetectorsConfig(AppConfig):
    """The statistical detectors: no models of their own; they read the floor and raise anomalies
    (``audit``)."""

    name = "casino.detectors"
    label = "detectors"

    def ready(self) -> None:
        # Each family registers its runs on import; the tasks in every process (outbox).
        from casino.detectors import families, tasks  # noqa: F401
