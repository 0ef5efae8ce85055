"""Trente-et-Quarante at the table: coups act by act (``coups.py``), their records, reads, API,
and admin pages; ``module.py`` answers what the floor core asks of the game."""
