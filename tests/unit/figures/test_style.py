"""The house style for figures (rlbook.figures.style)."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import is_color_like  # noqa: E402

from rlbook.core.rewards import STATUSES  # noqa: E402
from rlbook.figures import style  # noqa: E402


@pytest.fixture
def saved_rc():
    """Run a test with the rcParams restored afterwards, so the style does not leak into other tests."""
    with matplotlib.rc_context():
        yield
    plt.close("all")


def test_style_sets_the_house_rcparams(saved_rc):
    plt.rcdefaults()
    assert plt.rcParams["axes.spines.top"] is True
    style.style()
    rc = plt.rcParams
    assert tuple(rc["figure.figsize"]) == style.PANEL
    assert rc["axes.spines.top"] is False and rc["axes.spines.right"] is False
    assert rc["axes.grid"] is True and rc["legend.frameon"] is False
    assert min(rc["xtick.labelsize"], rc["ytick.labelsize"], rc["legend.fontsize"], rc["font.size"]) >= style.MIN_FONT


def test_status_colours_cover_every_verifier_status():
    assert set(STATUSES) <= set(style.STATUS_COLOURS)
    assert style.STATUS_COLOURS["accepted"] == style.TEAL and style.STATUS_COLOURS["incorrect"] == style.ORANGE
    used = [style.STATUS_COLOURS[s] for s in STATUSES]
    assert len(set(used)) == len(used)  # every status has its own colour


def test_palette_is_valid_and_distinct():
    palette = [style.BLUE, style.TEAL, style.ORANGE, style.PURPLE, style.GREY, style.RED]
    assert all(is_color_like(c) for c in palette) and len(set(palette)) == 6


def test_panel_and_figure_sizes(saved_rc):
    fig, ax = style.panel()
    assert tuple(fig.get_size_inches()) == pytest.approx(style.PANEL) and hasattr(ax, "plot")
    fig, axes = style.figure(width=8, height=3, ncols=2, sharey=True)
    assert tuple(fig.get_size_inches()) == pytest.approx((8, 3)) and len(axes) == 2
