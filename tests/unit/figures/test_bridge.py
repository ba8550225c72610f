"""The TRL appendix's figures (rlbook.figures.bridge): panels of the house size, readable text, the trainers and the
verdicts in their own colours, from plain data."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest

from rlbook.core.verdicts import VERDICT_WORDS
from rlbook.figures import bridge as figures
from rlbook.figures import style

STEPS = [1, 2, 3, 4]
SEED = {
    "seed": 0,
    "steps": STEPS,
    "TRL": [0.6, 0.62, 0.65, 0.7],
    "rlbook": [0.6, 0.64, 0.63, 0.71],
    "checkpoints": {"rlbook": [[0, 0.34], [2, 0.35], [4, 0.38]], "TRL": [[0, 0.34], [2, 0.34], [4, 0.37]]},
}
GAINS = {"seeds": [0, 1, 2], "TRL": [0.03, 0.14, 0.09], "rlbook": [0.05, 0.14, 0.08]}
SHARES = {
    "accepted": [0.6, 0.62, 0.65, 0.7],
    "incorrect": [0.3, 0.3, 0.28, 0.25],
    "malformed": [0.05, 0.04, 0.03, 0.02],
    "incomplete": [0.05, 0.04, 0.04, 0.03],
    "unverifiable": [0.0] * 4,
}
SILENT = {"all_right": [0.1, 0.1, 0.15, 0.2], "all_wrong": [0.12, 0.1, 0.1, 0.1], "logged": [0.22, 0.2, 0.25, 0.3]}


@pytest.fixture(autouse=True)
def house_style():
    with matplotlib.rc_context():
        style.style()
        yield
    plt.close("all")


def _drawn() -> list:
    return [*figures.trainers(SEED, GAINS), *figures.audit(STEPS, SHARES, SILENT)]


def test_every_figure_is_one_panel_of_the_house_size(check_readable):
    for fig in _drawn():
        assert len(fig.axes) == 1
        assert tuple(fig.get_size_inches()) == pytest.approx(style.PANEL)
        check_readable(fig)


def _colour(handle):
    """A legend handle's colour: a line's, or the first bar's of a bar container."""
    return handle.get_color() if hasattr(handle, "get_color") else handle.patches[0].get_facecolor()


def test_each_trainer_keeps_its_colour_in_every_panel():
    for fig in figures.trainers(SEED, GAINS):
        ax = fig.axes[0]
        handles, labels = ax.get_legend_handles_labels()
        colours = {label: matplotlib.colors.to_hex(_colour(h)) for h, label in zip(handles, labels)}
        assert colours == {"rlbook": style.BLUE, "TRL": style.ORANGE}


def test_the_verdicts_use_the_books_words_and_leave_out_what_never_happened():
    composition = figures.audit(STEPS, SHARES, SILENT)[0]
    labels = composition.axes[0].get_legend_handles_labels()[1]
    assert labels == [VERDICT_WORDS[s] for s in ("accepted", "incorrect", "malformed", "incomplete")]


def test_steps_are_ticked_as_whole_numbers():
    for fig in [figures.trainers(SEED, GAINS)[0], *figures.audit(STEPS, SHARES, SILENT)]:
        fig.canvas.draw()
        ticks = [t.get_text() for t in fig.axes[0].get_xticklabels() if t.get_text()]
        assert ticks and all("." not in t for t in ticks)


def test_the_logged_share_is_drawn_over_the_split_it_sums():
    groups = figures.audit(STEPS, SHARES, SILENT)[1].axes[0]
    dots = [line for line in groups.get_lines() if line.get_label() == "TRL's frac_reward_zero_std"]
    assert len(dots) == 1 and list(dots[0].get_ydata()) == SILENT["logged"]
    assert groups.get_ylim()[1] >= max(SILENT["logged"])
