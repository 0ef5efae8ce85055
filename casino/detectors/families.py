"""Every family of detectors, imported once so that each registers its runs (``frame``)."""

from casino.detectors import patrons, staff  # noqa: F401
