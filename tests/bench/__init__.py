"""Benchmarks (``make bench``): figures, not assertions. Each runs on a database of its own."""
