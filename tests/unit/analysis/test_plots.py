"""The colours of the book's named runs (rlbook.analysis.plots)."""

from __future__ import annotations

from rlbook import plots


def test_every_named_run_has_a_colour_of_its_own():
    from rlbook.runs import RUNS

    assert set(plots.RUN_COLOURS) == set(RUNS)
    assert len(set(plots.RUN_COLOURS.values())) == len(RUNS)
