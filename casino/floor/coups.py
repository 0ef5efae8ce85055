"""Trente-et-Quarante's acts at their path before the floor served several games: they are
``casino/floor/play/trente_et_quarante/coups.py``."""

from casino.floor.play.trente_et_quarante.coups import *  # noqa: F403
