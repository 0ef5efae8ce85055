from django.apps import AppConfig


class SimulationConfig(AppConfig):
    """The simulator: séances played through the services of each game (``manage.py simulate``).
    It knows every game, which the floor's core must not: its command lives here, not there."""

    name = "casino.simulation"
    label = "simulation"
