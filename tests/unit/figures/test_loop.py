"""Chapter 1's figures (rlbook.figures.loop) from made-up facts: the loop, the workshop's answers, the update taken
apart and main's learning curve."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest

from rlbook.figures import loop, style

ROWS = [
    ["15#", 6, 1.0, 0.625, 0.56, 0.576],
    ["16#", 5, 0.0, -0.375, 0.27, 0.211],
    ["14#", 4, 0.0, -0.375, 0.13, 0.174],
    ["156#", 1, 0.0, -0.375, 3.0e-4, 3.00002e-4],
    ["17#", 0, 0.0, None, 0.01, 0.009],
]
"""One update as the facts hold it: (answer, count, reward, advantage or None, before, after); two wrong answers
gain, one of them by far too little to see as a bar."""


@pytest.fixture(autouse=True)
def house_style():
    with matplotlib.rc_context():
        style.style()
        yield
    plt.close("all")


def test_the_update_has_a_panel_of_changes_that_labels_every_sign_however_small(check_readable):
    before_after, moved = loop.update(ROWS)
    ax = moved.axes[0]
    assert [t.get_text().strip() for t in ax.texts] == ["+2.9%", "\u221222%", "+34%", "+0.00067%", "\u221210%"]
    widths = [bar.get_width() for bar in ax.patches]
    assert [w > 0 for w in widths] == [True, False, True, True, False]
    colours = [matplotlib.colors.to_hex(bar.get_facecolor()) for bar in ax.patches]
    assert colours == [style.TEAL, style.ORANGE, style.ORANGE, style.ORANGE, style.GREY]
    assert [t.get_text() for t in ax.get_yticklabels()] == [loop.shown(r[0]) for r in ROWS]
    for fig in (before_after, moved):
        check_readable(fig)


@pytest.mark.parametrize(("change", "shown"), [(33.1, "+33%"), (-2.94, "\u22122.9%"), (7.7e-3, "+0.0077%")])
def test_a_change_keeps_two_significant_digits_and_its_sign(change, shown):
    assert loop._percent(change) == shown


def test_the_learning_curve_tells_the_seeds_apart(check_readable):
    curves = [
        {"seed": s, "steps": [1, 2, 3], "batch": [0.5, 0.6, 0.7], "eval_steps": [0, 3], "heldout": [0.3, 0.4 + s / 20]}
        for s in (0, 1, 2)
    ]
    fig = loop.learning_curve(curves)
    check_readable(fig)
    heldout = [line for line in fig.axes[0].lines if list(line.get_xdata()) == [0, 3]]
    assert len({matplotlib.colors.to_hex(line.get_color()) for line in heldout}) == 3
    assert len({line.get_marker() for line in heldout}) == 3
    assert len({line.get_linestyle() for line in heldout}) == 3
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert sorted(labels) == ["held-out sums", "seed 0", "seed 1", "seed 2", "training batch"]


def test_the_loop_s_boxes_are_tiles_whose_labels_are_read_in_both_colour_schemes(check_readable, check_tiles):
    # White labels on orange and purple boxes were faint on a light page, and turned dark on a dark one.
    fig = loop.rl_loop(16)
    check_readable(fig)
    assert sorted(check_tiles(fig)) == sorted(
        [
            "policy\nwrites answers",
            "rollouts\n16 answers\nper prompt",
            "verifier\nreward 1 if\nright, else 0",
            "update signal\nreward minus\ngroup mean",
        ]
    )


def test_the_answers_legend_names_only_the_verdicts_a_bar_shows(check_readable):
    # A malformed answer counted only among the grey "others" put "malformed" in Fig. 1.2's legend (issue 57).
    rare = [[f"{n}#", 1, "incorrect"] for n in range(10, 17)] + [["1+", 1, "malformed"]]
    panels = [
        {"name": "3+6", "kind": "confidently right", "rate": 0.9, "answers": [["9#", 20, "accepted"], *rare]},
        {
            "name": "1+3",
            "kind": "never right",
            "rate": 0.0,
            "answers": [["5#", 9, "incorrect"], ["1+3=", 3, "incomplete"]],
        },
    ]
    *bars, legend = loop.answers(panels, 32)
    assert [t.get_text() for t in bars[0].axes[0].get_yticklabels()][-1] == "3 others"
    assert [t.get_text() for t in legend.axes[0].get_legend().get_texts()] == [
        "accepted",
        "wrong value",
        "stopped by the budget",
    ]
    for fig in bars:
        check_readable(fig)
