"""Shared checks of the chapters' figures: readable text, few series a panel, legends that cover nothing."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest
from matplotlib.text import Text

from rlbook.figures import style


def readable(fig) -> None:
    """Every visible text of ``fig`` is at least :data:`style.MIN_FONT` points, and each axes names at most five
    series in a legend that lies outside it (so it covers nothing)."""
    fig.canvas.draw()
    small = [
        t.get_text()
        for t in fig.findobj(Text)
        if t.get_visible() and t.get_text() and t.get_fontsize() < style.MIN_FONT
    ]
    assert not small, f"text under {style.MIN_FONT} pt: {small[:5]}"
    for ax in fig.axes:
        legend = ax.get_legend()
        named = [h for h in ax.get_legend_handles_labels()[1] if not h.startswith("_")]
        assert len(named) <= 5
        if legend is not None and ax.has_data():
            box, area = legend.get_window_extent(), ax.get_window_extent()
            assert box.y1 <= area.y0 or box.x0 >= area.x1, "the legend overlaps the plotting area"


@pytest.fixture
def check_readable():
    """:func:`readable`, for the figure tests of every chapter."""
    return readable
