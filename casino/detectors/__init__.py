"""The statistical detectors (issue 16; docs/detectors.md): what watches the results, the cards and
the people over time, beside the hard rules the acts check themselves (a late stake, a foreign
card, a cash variance).

- ``frame``: a detector's ``Finding`` (the rule, the figures, the threshold, the evidence as
  tables, a chart and links) and the one way it becomes an anomaly in the review queue; the
  registers of what runs when a séance closes and when a gaming day ends.
- ``stats``: exact tails (binomial, Poisson, normal), pure Python, no database.
- ``thresholds``: the false-alarm rates the règlement posts.
- ``tasks``: the worker's runs, asked through the outbox after commit.
- one module per family of detectors: ``hold``, ``cards``, ``staff``, ``patrons`` (the cercle's
  collusion watch is Alliance's own, ``casino.floor.play.alliance.collusion``, and feeds the same
  queue).
"""
