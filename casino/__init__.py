"""The casino project: settings, URLs, the Celery app (``casino.celery``), and the gaming floor.

Kept empty on purpose: ``casino.games`` (the pure engines) and ``casino.runtime`` must import
without Django or Celery.
"""
