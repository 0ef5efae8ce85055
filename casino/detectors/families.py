"""Every family of detectors, imported once so that each registers its runs (``frame``): the
cards of a sixain, hold against expectation."""

from casino.detectors import cards, hold  # noqa: F401
