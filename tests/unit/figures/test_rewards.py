"""Chapter 2's figures, drawn from plain data as its facts hold it (rlbook.figures.rewards)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest

from rlbook.figures import rewards as fr
from rlbook.figures import style

AGREE = {
    "prompt": "U:3+4+5?|A:",
    "completion": "7,12#",
    "status": "accepted",
    "reward": 1.0,
    "process": 1.0,
    "kind": "agree",
    "notes": [["7", True, "step 1 7 = 3+4 valid"], ["12", True, "step 2 12 = 7+5 valid"]],
}
DISAGREE = {
    **AGREE,
    "completion": "6,12#",
    "process": 0.0,
    "kind": "right answer through an invalid step",
    "notes": [["6", False, "step 1 6 \u2260 3+4 invalid"], ["12", False, "step 2 12 \u2260 6+5 invalid"]],
}
CUT = {
    **AGREE,
    "completion": "7,1",
    "status": "incomplete",
    "reward": 0.0,
    "process": 0.5,
    "kind": "wrong answer with partial step credit",
    "notes": [["7", True, "step 1 7 = 3+4 valid"], ["1", False, "step 2 1 \u2260 7+5 invalid"]],
}


def texts(fig) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts]


def smallest_font(fig) -> float:
    fig.canvas.draw()
    found = [t.get_fontsize() for t in fig.findobj(matplotlib.text.Text) if t.get_text() and t.get_visible()]
    return min(found)


@pytest.fixture(autouse=True)
def house_style():
    with matplotlib.rc_context():
        style.style()
        yield
    plt.close("all")


def test_each_rollout_is_a_panel_of_labelled_rows():
    agree, disagree = fr.rollouts([AGREE, DISAGREE])
    assert tuple(agree.get_size_inches()) == pytest.approx(style.PANEL)
    shown = texts(disagree)
    assert shown[0] == "they disagree: right answer through an invalid step" and texts(agree)[0] == "the judges agree"
    for part in (
        "prompt",
        "step 1",
        "step 2",
        "end",
        "outcome",
        "U:3+4+5?|A:",
        "6",
        "6 \u2260 3+4 invalid",
        "accepted, reward 1",
        "process score 0.0",
        "#",
    ):
        assert part in shown
    assert len(disagree.axes[0].patches) == 5  # prompt, two steps, end mark, outcome
    assert min(smallest_font(agree), smallest_font(disagree)) >= style.MIN_FONT


def test_each_box_is_a_tile_whose_text_is_read_in_both_colour_schemes(check_tiles):
    # White text on teal and orange-red boxes was faint on a light page and turned dark on a dark one (issue 57).
    for fig in fr.rollouts([AGREE, DISAGREE, CUT]):
        assert len(check_tiles(fig)) == len(fig.axes[0].patches)  # every box holds its text


def test_a_budget_stopped_rollout_shows_the_budget_and_the_book_s_verdict_words():
    (cut,) = fr.rollouts([CUT])
    assert "(budget)" in texts(cut) and "stopped by the budget, reward 0" in texts(cut)


def curves(steps_b=(4, 8)):
    seed = {
        "eval_steps": [0, 10],
        "accuracy": [0.4, 0.5],
        "validity": [0.5, 0.6],
        "batch_steps": list(steps_b),
        "invalid_share": [0.1, 0.2],
    }
    return {
        "process-outcome": [{**seed, "seed": 0}, {**seed, "seed": 1, "accuracy": [0.4, 0.7]}],
        "process-shaped": [{**seed, "seed": 0}, {**seed, "seed": 1}],
    }


def test_comparison_draws_three_panels_of_each_seed_and_the_mean():
    labels = {"process-outcome": "outcome only", "process-shaped": "shaped"}
    panels = fr.comparison(curves(), labels)
    assert len(panels) == 3 and all(tuple(f.get_size_inches()) == pytest.approx(style.PANEL) for f in panels)
    lines = panels[0].axes[0].get_lines()
    assert len(lines) == 6  # two seeds and a mean, per run
    assert lines[2].get_ydata().tolist() == pytest.approx([0.4, 0.6]) and lines[2].get_color() == style.ORANGE
    assert [t.get_text() for t in panels[0].axes[0].get_legend().get_texts()] == [
        "outcome only (mean of 2 seeds)",
        "shaped (mean of 2 seeds)",
    ]
    assert min(smallest_font(f) for f in panels) >= style.MIN_FONT
    bad = curves()
    bad["process-shaped"][1] = {**bad["process-shaped"][1], "batch_steps": [4, 12]}
    with pytest.raises(ValueError, match="share their steps"):
        fr.comparison(bad, labels)
