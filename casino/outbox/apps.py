from django.apps import AppConfig


class OutboxConfig(AppConfig):
    name = "casino.outbox"
    label = "outbox"
    verbose_name = "File d'attente des tâches / Task outbox"
