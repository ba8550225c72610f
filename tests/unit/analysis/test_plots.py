"""The house style as the analyses that still draw figures read it (rlbook.analysis.plots)."""

from __future__ import annotations

from rlbook.analysis import plots
from rlbook.figures import style


def test_the_analyses_draw_in_the_book_s_one_style():
    assert (plots.BLUE, plots.TEAL, plots.ORANGE) == (style.BLUE, style.TEAL, style.ORANGE)
    assert plots.STATUS_COLOURS is style.STATUS_COLOURS and plots.figure is style.figure
