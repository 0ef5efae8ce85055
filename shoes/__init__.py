"""Sealed card packs: receipt, the commissioner's seal verification, opening, play, retirement."""
