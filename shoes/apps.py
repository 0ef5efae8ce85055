from django.apps import AppConfig


class ShoesConfig(AppConfig):
    name = "shoes"
    verbose_name = "Jeux de cartes scellés / Sealed packs"
