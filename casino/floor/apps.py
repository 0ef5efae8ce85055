from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class FloorConfig(AppConfig):
    name = "casino.floor"
    label = "floor"
    verbose_name = _("Salle de jeux")

    def ready(self) -> None:
        from django.db.backends.signals import connection_created

        from casino.database_rules import install
        from casino.floor import tasks  # noqa: F401  registers the games' outbox tasks

        # The database's "at most one" refusals become Conflicts on every connection.
        connection_created.connect(install, dispatch_uid="casino.database_rules")
