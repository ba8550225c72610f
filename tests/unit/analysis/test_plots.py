"""The house style for figures (rlbook.analysis.plots)."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import is_color_like  # noqa: E402

from rlbook import plots  # noqa: E402
from rlbook.core.rewards import STATUSES  # noqa: E402


@pytest.fixture
def saved_rc():
    """Run a test with the rcParams restored afterwards, so the style does not leak into other tests."""
    with matplotlib.rc_context():
        yield
    plt.close("all")


def test_style_sets_the_house_rcparams(saved_rc):
    plt.rcdefaults()
    assert plt.rcParams["axes.spines.top"] is True
    plots.style()
    rc = plt.rcParams
    assert tuple(rc["figure.figsize"]) == (7, 3.6)
    assert rc["figure.dpi"] == 110
    assert rc["axes.spines.top"] is False and rc["axes.spines.right"] is False
    assert rc["axes.grid"] is True and rc["grid.alpha"] == 0.3
    assert rc["font.size"] == 10 and rc["legend.frameon"] is False
    assert rc["savefig.bbox"] == "tight"


def test_status_colours_cover_every_verifier_status():
    assert set(STATUSES) <= set(plots.STATUS_COLOURS)
    assert plots.STATUS_COLOURS["accepted"] == plots.TEAL and plots.STATUS_COLOURS["incorrect"] == plots.ORANGE
    used = [plots.STATUS_COLOURS[s] for s in STATUSES]
    assert len(set(used)) == len(used)  # every status has its own colour


def test_palette_is_valid_and_distinct():
    palette = [plots.BLUE, plots.TEAL, plots.ORANGE, plots.PURPLE, plots.GREY, plots.RED]
    assert all(is_color_like(c) for c in palette) and len(set(palette)) == 6
    assert all(is_color_like(c) for c in plots.STATUS_COLOURS.values())


def test_figure_gives_side_by_side_axes(saved_rc):
    fig, axes = plots.figure(width=8, height=3, ncols=2, sharey=True)
    assert tuple(fig.get_size_inches()) == pytest.approx((8, 3))
    assert len(axes) == 2
    fig, ax = plots.figure()
    assert tuple(fig.get_size_inches()) == pytest.approx((7, 3.6))
    assert hasattr(ax, "plot")


def test_every_named_run_has_a_colour_of_its_own():
    from rlbook.runs import RUNS
    assert set(plots.RUN_COLOURS) == set(RUNS)
    assert len(set(plots.RUN_COLOURS.values())) == len(RUNS)
