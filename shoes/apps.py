from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ShoesConfig(AppConfig):
    name = "shoes"
    verbose_name = _("Jeux de cartes scellés")
