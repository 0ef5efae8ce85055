"""The rules engines: pure Python, no Django, no database, no clock; fully typed.

Everything recorded on the floor is checked and settled here, and so is every regulator's replay:
``python -m casino.games replay`` and ``python -m casino.games odds`` (see REPLAY.md).
"""
