"""Pharao at the table: tailles of 26 draws act by act (``tailles.py``), stakes on ranks, marks and
the banker's approvals, their records, reads and API; ``module.py`` answers what the floor core asks
of the game."""
