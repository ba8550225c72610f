"""Chapter 3's figures (rlbook.figures.gradient): drawn from plain data, text no smaller than the house minimum,
at most five named series a panel, legends that cover no data."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from rlbook.figures import gradient, style


@pytest.fixture(autouse=True)
def house_style():
    with matplotlib.rc_context():
        style.style()
        yield
    plt.close("all")


def test_loop_curves_draw_three_runs_per_seed(check_readable):
    curves = [
        {"steps": [0, 10, 20], "loop": [0.3, 0.4, 0.5], "main": [0.3, 0.41, 0.5], "pg_steps": [0, 10], "pg": [0.3, 0.4]}
        for _ in range(3)
    ]
    fig = gradient.loop_curves(curves)
    check_readable(fig)
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["main", "pg", "the loop above"]
    assert len(fig.axes[0].lines) == 9


def test_shifted_rewards_draw_each_series_as_a_mean_and_a_band(check_readable):
    curves = [
        {
            "steps": [0, 10, 20],
            "loop": [0.3, 0.4, 0.5 + d],
            "baseline": [0.3, 0.41, 0.5],
            "shift": [0.3, 0.38, 0.45],
            "large_shift": [0.3, 0.32, 0.33 - d],
        }
        for d in (0.0, 0.02, 0.04)
    ]
    fig = gradient.shifted_rewards(curves, 1.0, 3.0)
    check_readable(fig)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["the loop, rewards as they are", "+1, group baseline", "+1, no baseline", "+3, no baseline"]
    assert np.allclose(ax.lines[0].get_ydata(), [0.3, 0.4, 0.52])  # the unshifted loop's mean over the seeds
    assert len(ax.collections) == 4  # one shaded range per series


def test_gradient_variance_is_a_parabola_and_a_line(check_readable):
    offsets = np.linspace(-1, 2, 31)
    fig = gradient.gradient_variance(offsets, 1 + offsets**2, 1.5)
    check_readable(fig)
    assert fig.axes[0].get_yscale() == "log"


def test_zero_variance_is_two_panels(check_readable):
    series = {
        "steps": [1, 2, 3],
        "all_right": [0.1, 0.2, 0.3],
        "all_wrong": [0.1, 0.05, 0.05],
        "reward": [0.6, 0.7, 0.8],
    }
    figures = gradient.zero_variance(series)
    assert len(figures) == 2
    for fig in figures:
        check_readable(fig)


def test_token_credit_prints_every_characters_advantage(check_readable):
    rows = [
        {
            "prompt": "U:3+4?|A:",
            "tokens": list("7#"),
            "advantages": [0.5, 0.5],
            "reward": 1.0,
            "copies": 2,
            "group_size": 4,
        },
        {
            "prompt": "U:3+4?|A:",
            "tokens": list("8#"),
            "advantages": [-0.5, -0.5],
            "reward": 0.0,
            "copies": 2,
            "group_size": 4,
        },
    ]
    fig = gradient.token_credit(rows)
    check_readable(fig)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert texts.count("+0.50") == 2 and texts.count("-0.50") == 2 and "reward 1\n2 of 4" in texts
    assert fig.get_figwidth() <= style.PANEL[0]


def test_token_credit_draws_advantages_in_the_book_s_colours_on_tiles_read_in_both_schemes(check_tiles):
    # Positive teal and negative orange, as chapter 1's update and chapter 4's ratios draw them; each
    # character and its advantage on a tile that follows the page (Fig. 3.5 had near-white text on pale
    # lavender and orange tiles in the dark scheme, issue 57).
    rows = [
        {
            "prompt": "U:1+1?|A:",
            "tokens": list("2#"),
            "advantages": [0.9, 0.9],
            "reward": 1.0,
            "copies": 1,
            "group_size": 10,
        },
        {
            "prompt": "U:1+1?|A:",
            "tokens": list("3#"),
            "advantages": [-0.1, -0.1],
            "reward": 0.0,
            "copies": 9,
            "group_size": 10,
        },
    ]
    fig = gradient.token_credit(rows)
    from matplotlib.colors import to_hex

    tiles = [(to_hex(p.get_facecolor(), keep_alpha=False), p.get_alpha()) for p in fig.axes[0].patches]
    assert [c for c, _ in tiles] == [style.TEAL] * 2 + [style.ORANGE] * 2
    assert tiles[0][1] == pytest.approx(style.TILE_ALPHA) and 0 < tiles[2][1] < tiles[0][1]  # stronger for more
    assert sorted(check_tiles(fig)) == sorted(["2", "#", "+0.90", "+0.90", "3", "#", "-0.10", "-0.10"])


def test_the_tile_check_refuses_white_text_on_a_solid_tile(check_tiles):
    fig, ax = style.panel(2, 1)
    ax.add_patch(plt.Rectangle((0, 0), 1, 1, color=style.ORANGE))
    ax.text(0.5, 0.5, "verifier", ha="center", va="center", color="white")
    with pytest.raises(AssertionError, match="not the ink that follows the page"):
        check_tiles(fig)
