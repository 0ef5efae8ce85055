"""Every family of detectors, imported once so that each registers its runs (``frame``): the
cards of a sixain, hold against expectation, staff against the room's rate, patrons and seats."""

from casino.detectors import cards, hold, patrons, staff  # noqa: F401
