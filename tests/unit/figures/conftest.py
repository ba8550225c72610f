"""Shared checks of the chapters' figures: readable text, few series a panel, legends that cover nothing.

Every panel that a figure test leaves open is also saved as the site saves it
and checked with :func:`rlbook.figures.style.unreadable`: its text must be
drawn at 9 CSS px or more even in the narrowest box the site shrinks a panel
into, so a figure too wide, or with math text's small scripts, fails here
before the site's browser tests find it.
"""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
from matplotlib.text import Text

from rlbook.figures import style

UNCHECKED = {"test_style.py"}
"""Test files that draw figures outside the house style on purpose (to show what it prevents)."""


def saved_svg(fig) -> str:
    """``fig`` saved as the book saves it: an SVG in the house style (trimmed, text as text)."""
    out = io.StringIO()
    with matplotlib.rc_context(style.rc()):
        fig.savefig(out, format="svg")
    return out.getvalue()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """After each figure test, every panel it left open is drawn at 9 px or more in the narrowest box.

    Only the figures the test opened: a test elsewhere in the suite (an
    analysis that draws its own figure) may have left others open before it.
    """
    before = set(plt.get_fignums())
    result = yield
    if item.path.name not in UNCHECKED:
        problems = [
            f"figure {number}: {problem}"
            for number in plt.get_fignums()
            if number not in before and (problem := style.unreadable(saved_svg(plt.figure(number))))
        ]
        assert not problems, "\n".join(problems)
    return result


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
    assert style.unreadable(saved_svg(fig)) is None, style.unreadable(saved_svg(fig))
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
