from django.apps import AppConfig


class FloorConfig(AppConfig):
    name = "casino.floor"
    label = "floor"
    verbose_name = "Salle de jeux / Gaming floor"
