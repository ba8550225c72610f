"""Judged rollouts drawn and the seeds' curves (rlbook.analysis.disagreement.figure)."""
from __future__ import annotations

import matplotlib
import pytest

matplotlib.use("Agg")

from hand_rollouts import P

from rlbook.analysis import disagreement as d


def test_step_notes_and_figure_rollouts():
    judged = d.judge([P] * 3, ["7,13#", "6,12#", "7,12#"])
    assert d.step_notes(judged[1]) == [("6", False, "step 1 6 \u2260 3+4 invalid"),
                                       ("12", False, "step 2 12 \u2260 6+5 invalid")]
    (missing,) = d.judge([P], ["7#"])
    assert d.step_notes(missing)[1] == ("", False, "step 2 missing")
    assert [j.completion for j in d.figure_rollouts(judged)] == ["7,12#", "6,12#"]
    assert [j.completion for j in d.figure_rollouts(judged[:1] + judged[2:])] == ["7,12#", "7,13#"]
    # A disagreement whose prompt has an agreeing rollout is preferred to an earlier one whose prompt has none.
    other = d.judge(["U:1+1+1?|A:"], ["3,3#"])
    assert [j.completion for j in d.figure_rollouts(other + judged)] == ["7,12#", "6,12#"]


def test_draw_rollout_puts_one_box_per_part():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    (j,) = d.judge([P], ["6,12#"])
    d.draw_rollout(ax, j, 0.0, title="a disagreement")
    texts = [t.get_text() for t in ax.texts]
    assert texts[:2] == ["a disagreement", P] and "6," in texts and "12" in texts and "accepted, reward 1" in texts
    assert "process score 0.0" in texts
    assert len(ax.patches) == 5  # prompt, two steps, end mark, outcome
    plt.close(fig)


def test_plot_seeds_draws_each_seed_and_the_mean():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    d.plot_seeds(ax, [([0, 10], [0.2, 0.4]), ([0, 10], [0.4, 0.8])], "teal", "shaped")
    lines = ax.get_lines()
    assert len(lines) == 3 and lines[-1].get_ydata().tolist() == pytest.approx([0.3, 0.6])
    assert lines[-1].get_label() == "shaped (mean of 2 seeds)"
    with pytest.raises(ValueError, match="share their steps"):
        d.plot_seeds(ax, [([0, 10], [0.2, 0.4]), ([0, 5], [0.4, 0.8])], "teal", "shaped")
    plt.close(fig)
