"""Chapter 9's figures (rlbook.figures.recipe) from made-up facts: a line per run and seed in the run's colour,
the axes each panel names, and a legend panel for each group of runs."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from matplotlib.colors import to_hex

from rlbook.figures import recipe, style

SEEDS = (0, 1, 2)


def curve(end: float) -> dict:
    return {
        "steps": [0, 30, 60],
        "answers": [0, 30_000, 62_000],
        "accuracy": [0.3, 0.4, end],
        "share": [0.5, 0.7, end],
        "length": [10.0, 13.0, 16.0],
    }


def runs(colours: dict) -> dict:
    return {name: {s: curve(0.4 + 0.05 * s) for s in SEEDS} for name in colours}


def _lines_and_legend(figures: list, colours: dict) -> None:
    ax = figures[0].axes[0]
    assert len(ax.get_lines()) == len(colours) * len(SEEDS)
    assert {to_hex(line.get_color()) for line in ax.get_lines()} == {to_hex(c) for c in colours.values()}
    assert [t.get_text() for t in figures[-1].axes[0].get_legend().get_texts()] == list(colours)


def test_clipping_draws_accuracy_over_the_steps_of_the_three_losses(check_readable):
    figures = recipe.clipping(runs(recipe.CLIPPED))
    assert len(figures) == 2 and figures[0].axes[0].get_xlabel() == "RL step"
    _lines_and_legend(figures, recipe.CLIPPED)
    for fig in figures:
        assert fig.get_size_inches()[0] <= style.PANEL[0] + 1e-9
        check_readable(fig)
    plt.close("all")


def test_sampling_draws_accuracy_against_the_answers_sampled(check_readable):
    figures = recipe.sampling(runs(recipe.SAMPLED))
    ax = figures[0].axes[0]
    assert ax.get_xlabel() == "answers sampled"
    assert list(ax.get_lines()[0].get_xdata()) == [0, 30_000, 62_000]
    _lines_and_legend(figures, recipe.SAMPLED)
    for fig in figures:
        check_readable(fig)
    plt.close("all")


def test_aggregation_and_budget_draw_share_and_accuracy_of_their_runs(check_readable):
    for draw, colours in ((recipe.aggregation, recipe.WORKED), (recipe.budget, recipe.TIGHT)):
        figures = draw({**runs(recipe.WORKED), **runs(recipe.TIGHT)})
        assert len(figures) == 3
        _lines_and_legend(figures, colours)
        assert [f.axes[0].get_ylabel() for f in figures[:2]] == ["share of worked answers", "held-out accuracy"]
        assert len(figures[1].axes[0].get_lines()) == len(colours) * len(SEEDS)
        for fig in figures:
            check_readable(fig)
    plt.close("all")


def test_the_answers_axis_reads_with_thousands_separators():
    ax = recipe.sampling(runs(recipe.SAMPLED))[0].axes[0]
    assert ax.xaxis.get_major_formatter()(60_000, 0) == "60,000"
    plt.close("all")
