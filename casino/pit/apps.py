from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PitConfig(AppConfig):
    name = "casino.pit"
    label = "pit"
    verbose_name = _("Salle de jeu")
