"""Chapter 5's figures (rlbook.figures.limits) from made-up facts: panels of the house size, readable text, few
series per panel, and labels no line crosses."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
from matplotlib.colors import to_hex
from matplotlib.text import Text

from rlbook.figures import limits, style

SEEDS = (0, 1, 2)


def check_panels(figures):
    """Every panel is at most the house panel's width, its text at least MIN_FONT, at most five line colours."""
    figures = figures if isinstance(figures, list) else [figures]
    for fig in figures:
        assert fig.get_size_inches()[0] <= style.PANEL[0] + 1e-9
        sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_text().strip() and t.get_visible()]
        assert min(sizes) >= style.MIN_FONT
        for ax in fig.axes:
            colours = {to_hex(line.get_color()) for line in ax.get_lines() if len(line.get_xdata()) > 1}
            assert len(colours) <= 5
    plt.close("all")


def test_the_reward_hack_draws_exploit_beside_exploit_slow_with_every_seed_on_a_log_step_axis():
    data = {
        s: {
            "steps": [1, 2, 3, 4],
            "task": [0.6, 0.2, 0.1, 0.0],
            "loophole": [0.0, 0.3, 0.9, 1.0],
            "eval_steps": [0, 2, 4],
            "heldout": [0.3, 0.1, 0.0],
            "takeover": 3,
            "slow": {
                "steps": list(range(1, 11)),
                "task": [0.6] * 10,
                "loophole": [0.0] * 5 + [0.1] * 5,
                "eval_steps": [0, 5, 10],
                "heldout": [0.3, 0.35, 0.4],
            },
        }
        for s in SEEDS
    }
    figures = limits.reward_hack(data)
    assert len(figures) == 3 and [f.axes[0].get_title() for f in figures[:2]] == ["exploit", "exploit-slow"]
    fast, slow = (f.axes[0] for f in figures[:2])
    assert fast.get_xscale() == slow.get_xscale() == "symlog" and fast.get_xlim() == slow.get_xlim() == (0, 10)
    assert len(fast.lines) == len(slow.lines) == 3 * 3 + 1
    assert list(slow.lines[2].get_xdata()) == [0, 5, 10]  # held-out accuracy at the run's own checkpoints
    assert {line.get_linestyle() for line in slow.lines[:-1]} == {"-", "--", ":"}  # one style per seed
    labels = [t.get_text() for t in figures[2].axes[0].get_legend().get_texts()]
    assert labels[-3:] == [f"seed {s}" for s in SEEDS]
    check_panels(figures)


def test_best_of_n_and_the_judge_runs():
    bon = {s: {"ns": [1, 4, 16], "proxy": [0.6, 0.7, 0.8], "gold": [0.6, 0.7, 0.5]} for s in SEEDS}
    check_panels(limits.best_of_n(bon))
    curve = {"steps": [0, 5, 10], "proxy": [0.6, 0.7, 0.8], "gold": [0.6, 0.5, 0.4]}
    figures = limits.judge_runs({s: {"rm": curve, "kl": curve} for s in SEEDS})
    assert len(figures) == 3
    check_panels(figures)


def test_the_faults_labels_sit_above_the_panel_where_no_line_can_cross_them():
    runs = {s: {"steps": list(range(1, 41)), "reward": [0.0 if i == 8 else 0.6 for i in range(1, 41)]} for s in SEEDS}
    events = [
        {"step": 8, "kind": "updates paused", "metric": "verifier_error_rate"},
        {"step": 15, "kind": "batch excluded", "metric": "malformed_rate"},
    ]
    fig = limits.faults(runs, events)
    labels = [t for t in fig.axes[0].texts]
    assert [t.get_text() for t in labels] == ["verifier down", "malformed burst"]
    assert all(t.get_position()[1] > 1 for t in labels)  # in axes coordinates: above the plotting area
    fig.canvas.draw()
    first, second = (t.get_window_extent() for t in labels)
    assert not first.overlaps(second)  # neighbours on two rows
    check_panels(fig)


@pytest.mark.parametrize("name", ["TASK", "LOOPHOLE", "HELDOUT", "RUN", "PENALISED"])
def test_the_series_colours_come_from_the_house_palette(name):
    assert getattr(limits, name) in style.SERIES
