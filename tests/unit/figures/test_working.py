"""Chapter 7's figures (rlbook.figures.working) from made-up facts: panels of the house size, readable text, one
colour per run and a legend that covers nothing."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from matplotlib.colors import to_hex

from rlbook.figures import style, working

SEEDS = (0, 1, 2)


def curve(rise: float) -> dict:
    steps = [0, 10, 20]
    return {
        "step": steps,
        "share": [0.5, 0.5 + rise / 2, 0.5 + rise],
        "length": [10.0, 14.0, 17.5],
        "accuracy": [0.6, 0.7, 0.6 + rise / 2],
        "style_entropy": [0.6, 0.3, 0.05],
        "p_worked": [0.5, 0.8, 0.99],
    }


BY_RUN = {name: {s: curve(0.1 * (s + 1)) for s in SEEDS} for name in working.RUNS}


def test_curves_draw_three_panels_and_a_legend(check_readable):
    figures = working.curves(BY_RUN)
    assert len(figures) == 4
    for fig, (field, _, title) in zip(figures, working.PANELS):
        ax = fig.axes[0]
        assert ax.get_title() == title
        assert len(ax.get_lines()) == len(working.RUNS) * len(SEEDS)
        assert {to_hex(line.get_color()) for line in ax.get_lines()} == {to_hex(c) for c in working.RUNS.values()}
        assert list(ax.get_lines()[0].get_ydata()) == BY_RUN["worked"][0][field]
    legend = figures[-1].axes[0].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == list(working.RUNS)
    for fig in figures:
        assert fig.get_size_inches()[0] <= style.PANEL[0] + 1e-9
        check_readable(fig)
    plt.close("all")


def test_choice_draws_the_style_entropy_of_the_runs_it_is_given(check_readable):
    figures = working.choice({"worked": BY_RUN["worked"]})
    ax = figures[0].axes[0]
    assert len(ax.get_lines()) == len(SEEDS) and ax.get_ylim()[0] == 0
    assert [t.get_text() for t in figures[1].axes[0].get_legend().get_texts()] == ["worked"]
    for fig in figures:
        check_readable(fig)
    plt.close("all")
