"""A report is rendered with the cyclic garbage collector paused (its full passes grew with the
séance), and the collector is on again after, whether the render succeeded or failed."""

from __future__ import annotations

import gc

import pytest

from casino.reports.services import _collector_paused


def test_the_collector_is_paused_for_a_render_and_on_again_after():
    assert gc.isenabled()
    with _collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_the_collector_is_on_again_after_a_render_that_failed():
    with pytest.raises(RuntimeError), _collector_paused():
        raise RuntimeError("the render failed")
    assert gc.isenabled()


def test_a_collector_already_off_stays_off():
    gc.disable()
    try:
        with _collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
