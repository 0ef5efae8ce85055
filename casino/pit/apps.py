from django.apps import AppConfig


class PitConfig(AppConfig):
    name = "casino.pit"
    label = "pit"
    verbose_name = "Salle de jeu"
