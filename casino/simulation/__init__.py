"""Séances played through the services as a real room plays them, on a clock that can run a
day in seconds: the ``simulate`` command and the demo's day (``demo_seed``).

``pace``: how long each act takes at a table; ``seance``: one séance, act by act; ``timeline``:
several of them at once on one clock; ``day``: the demo's day of the house.
"""
