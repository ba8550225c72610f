"""Chapter 8's figures (rlbook.figures.evaluation): panels of the house size, readable text, few series each."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
from matplotlib.text import Text

from rlbook.figures import evaluation as figures
from rlbook.figures import style

STEPS = [0, 10, 20, 30]
TRIPLES = [[0.3, 0.2, 0.4], [0.4, 0.3, 0.5], [0.5, 0.4, 0.6], [0.45, 0.35, 0.55]]
PANEL = {
    "name": "main",
    "verifier": "exact 1.0",
    "steps": [1, 2, 3],
    "batch": [0.5, 0.6, 0.7],
    "checkpoints": STEPS,
    "train": TRIPLES,
    "heldout": TRIPLES,
    "validation": TRIPLES,
    "test": TRIPLES,
}
SLICE = {"value": 0.4, "lo": 0.3, "hi": 0.5}
SEEDS = (0, 1, 2)
PICKS = {
    s: {"selected": 30, "retained": {"constrained": 10, "constrained_test": 0.4, "selected_test": 0.45}} for s in SEEDS
}
"""Each seed's facts as the retained-capability figure reads them: the two rules' picks and their test accuracy."""


@pytest.fixture(autouse=True)
def house_style():
    with matplotlib.rc_context():
        style.style()
        yield
    plt.close("all")


def _drawn() -> list:
    rows = [
        {"label": "both: 1 sample", "matched": True, **SLICE},
        {"label": "after: best of 4", "matched": False, **SLICE},
    ]
    slices = [{"slice": name, "prompts": 3, "before": SLICE, "after": SLICE} for name in ("all", "carry")]
    curves = [
        {"seed": s, "steps": STEPS, "plain": [0.9, 0.8, 0.7, 0.6], "heldout": [0.3, 0.4, 0.5, 0.5]} for s in SEEDS
    ]
    return [
        *figures.divergence([PANEL, dict(PANEL, name="exploit")]),
        *figures.selection(PANEL, PANEL, 20, {"training reward": 30, "validation accuracy": 0}),
        figures.comparisons(rows),
        *figures.slices(slices, [0.0, 0.5, 0.0], [0.0, 0.9, 0.2], [True, False, True], 30),
        *figures.retained(curves, PICKS, 10, "On every seed the constraint costs test accuracy."),
    ]


def test_every_figure_is_one_panel_at_most_the_house_width():
    for fig in _drawn():
        assert len(fig.axes) == 1
        assert fig.get_size_inches()[0] <= style.PANEL[0] + 1e-9  # narrowed by style.fit where labels are long


def test_no_text_is_smaller_than_the_house_minimum():
    for fig in _drawn():
        fig.canvas.draw()
        sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_text().strip()]
        assert sizes and min(sizes) >= style.MIN_FONT


def test_each_panel_names_at_most_five_series():
    for fig in _drawn():
        legend = fig.axes[0].get_legend()
        if legend is not None:
            assert len(legend.get_texts()) <= 5


def test_the_scatter_points_at_the_sums_wrong_at_both_ends():
    scatter = figures.slices(
        [{"slice": "all", "prompts": 3, "before": SLICE, "after": SLICE}],
        [0.0, 0.5, 0.0],
        [0.0, 0.9, 0.2],
        [True, False, True],
        30,
    )[1]
    assert any(t.get_text() == "1 sum wrong at both ends" for t in scatter.axes[0].texts)


@pytest.mark.parametrize("slices", [2, 5, 9])
def test_the_slices_legend_lies_under_the_axis_and_its_label_whatever_the_number_of_slices(slices):
    # Fig. 8.4's legend sat in the panel's lower right, on the last slice's markers (issue 57).
    rows = [{"slice": f"slice {i}", "prompts": 3, "before": SLICE, "after": SLICE} for i in range(slices)]
    fig = figures.slices(rows, [0.0, 0.5, 0.0], [0.0, 0.9, 0.2], [True, False, True], 100)[0]
    fig.canvas.draw()
    ax = fig.axes[0]
    legend = ax.get_legend().get_window_extent()
    label = ax.xaxis.label.get_window_extent()
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["step 0", "step 100"]
    assert legend.y1 <= label.y0 and label.y1 <= ax.get_window_extent().y0
    assert legend.y1 > label.y0 - 0.2 * fig.dpi  # close under it, not far below


def test_retained_capability_has_a_panel_per_seed_with_both_picks_and_the_finding_under_the_legend():
    curves = [
        {"seed": s, "steps": STEPS, "plain": [0.9, 0.8, 0.7, 0.6], "heldout": [0.3, 0.4, 0.5, 0.5]} for s in SEEDS
    ]
    finding = "On seeds 0 and 2 the constraint costs test accuracy; on seed 1 the earlier checkpoint does as well."
    *panels, legend = figures.retained(curves, PICKS, 10, finding)
    assert [p.axes[0].get_title() for p in panels] == [f"seed {s}" for s in SEEDS]
    for panel in panels:
        ax = panel.axes[0]
        assert sorted(t.get_text() for t in ax.texts) == ["test 0.40", "test 0.45"]
        rules = [line.get_xdata()[0] for line in ax.lines if list(line.get_ydata()) == [0, 1]]  # vertical lines
        floors = [line.get_ydata()[0] for line in ax.lines if list(line.get_xdata()) == [0, 1]]  # horizontal ones
        assert sorted(rules) == [10, 30] and floors == [pytest.approx(0.8)]  # 10 points under step 0's 0.9
    texts = [t.get_text().replace("\n", " ") for t in legend.axes[0].texts]
    assert texts == [finding]
    assert "the constraint's floor: 10 points under step 0" in [
        t.get_text() for t in legend.axes[0].get_legend().get_texts()
    ]
