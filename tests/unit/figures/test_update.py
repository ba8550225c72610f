"""Chapter 4's figures (rlbook.figures.update): drawn from plain data, text no smaller than the house minimum,
at most five series a panel in the house colours, legends that cover no data."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.colors import to_hex

from rlbook.figures import style, update


@pytest.fixture(autouse=True)
def house_style():
    with matplotlib.rc_context():
        style.style()
        yield
    plt.close("all")


def test_ratio_histograms_one_panel_per_step_count_and_a_legend(check_readable):
    bins = np.linspace(-1.5, 1.5, 31)
    hist = [{"steps": k, "clipped": 0.05 * k, "positive": [k] * 30, "negative": [1] * 30} for k in (1, 4, 8)]
    figures = update.ratio_histograms(bins, hist, 0.2, 4.0)
    assert len(figures) == 4
    for fig in figures:
        check_readable(fig)
    assert figures[1].axes[0].get_title() == "after 4 steps: PPO clips 20%"


def test_update_curves_main_blue_others_in_series_order(check_readable):
    steps = np.array([0, 10, 20])
    series = [
        {
            "run": name,
            "steps": steps,
            "mean": [0.3, 0.4, 0.5],
            "low": [0.3, 0.35, 0.45],
            "high": [0.3, 0.45, 0.55],
            "disguise": name == "pg",
        }
        for name in ("main", "pg", "ppo")
    ]
    kl = [{"run": name, "steps": np.arange(1, 21), "median": np.linspace(0.01, 0.2, 20)} for name in ("main", "ppo")]
    figures = update.update_curves(
        [
            {"title": "a question", "kind": "heldout", "series": series},
            {"title": "KL to the base", "kind": "kl", "series": kl},
        ]
    )
    for fig in figures:
        check_readable(fig)
    lines = figures[0].axes[0].lines
    assert [to_hex(line.get_color()) for line in lines] == [
        style.BLUE,
        style.SERIES[1].lower(),
        style.SERIES[2].lower(),
    ]
    assert lines[1].get_linestyle() == "--" and lines[2].get_linestyle() == "-"
    assert figures[1].axes[0].get_yscale() == "log"


def test_a_run_keeps_its_colour_across_panels_and_differs_from_its_neighbours():
    def panel(*names):
        return {
            "title": "",
            "kind": "kl",
            "series": [{"run": n, "steps": [1, 2], "median": [0.1, 0.2]} for n in ("main", *names)],
        }

    figures = update.update_curves([panel("ppo", "cispo"), panel("ppo", "ppo-kl"), panel("ppo", "cispo", "ppo-kl")])
    colours = [{line.get_label(): to_hex(line.get_color()) for line in fig.axes[0].lines} for fig in figures]
    assert colours[0]["ppo"] == colours[1]["ppo"] == colours[2]["ppo"]
    assert len(set(colours[2].values())) == 4 and colours[2]["main"] == style.BLUE
