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
    tiles_follow_the_page(fig)
    for ax in fig.axes:
        legend = ax.get_legend()
        named = [h for h in ax.get_legend_handles_labels()[1] if not h.startswith("_")]
        assert len(named) <= 5
        if legend is not None and ax.has_data():
            box, area = legend.get_window_extent(), ax.get_window_extent()
            assert box.y1 <= area.y0 or box.x0 >= area.x1, "the legend overlaps the plotting area"


def text_on_tiles(fig) -> list[tuple[str, str, float, str]]:
    """Every visible text of ``fig`` drawn on a filled patch of one of its axes (half of the text's box or more
    on it; a label beside a bar only touches it): (text, the patch's colour, its opacity, the text's colour)."""
    from matplotlib.colors import to_hex, to_rgba
    from matplotlib.transforms import Bbox

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    found = []
    for ax in fig.axes:
        for text in ax.texts:
            if not (text.get_visible() and text.get_text().strip()):
                continue
            box = text.get_window_extent(renderer)
            for patch in ax.patches:
                face = to_rgba(patch.get_facecolor())
                common = Bbox.intersection(box, patch.get_window_extent(renderer))
                if face[3] == 0 or common is None or common.width * common.height < box.width * box.height / 2:
                    continue
                found.append((text.get_text(), to_hex(face, keep_alpha=False), face[3], to_hex(text.get_color())))
    return found


def tiles_follow_the_page(fig) -> list[str]:
    """Text on a filled patch of ``fig`` is in the default ink, on a tile of a colour at most
    :data:`style.TILE_ALPHA` opaque, which keeps :data:`style.MIN_CONTRAST` with that ink on a light page and on
    a dark one (a solid tile keeps its colour on a dark page while the ink turns light: chapter 3's credit
    figure, issue 57). Returns the texts it found on tiles."""
    found = text_on_tiles(fig)
    for text, colour, alpha, ink in found:
        assert ink == style.INK, f"{text!r} is drawn in {ink}, not the ink that follows the page"
        assert alpha <= style.TILE_ALPHA + 1e-9, f"{text!r} lies on a solid tile of {colour} (opacity {alpha:g})"
        seen = style.tile_contrast(colour, alpha)
        assert min(seen.values()) >= style.MIN_CONTRAST, f"{text!r} on {colour} at {alpha:g}: contrast {seen}"
    return [text for text, *_ in found]


@pytest.fixture
def check_tiles():
    """:func:`tiles_follow_the_page`, for the figures that draw text on tiles."""
    return tiles_follow_the_page


@pytest.fixture
def check_readable():
    """:func:`readable`, for the figure tests of every chapter."""
    return readable
