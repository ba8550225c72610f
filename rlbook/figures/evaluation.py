"""Chapter 8's figures (chapters/08-checkpoints-evaluation-record.qmd), drawn from its facts (:mod:`rlbook.book.evaluation`).

Each function takes plain data from the chapter's facts and returns one
figure per panel, in the house style (:mod:`rlbook.figures.style`): held-out
task accuracy is always the first series colour, the training reward the
second, so a reader can follow them from figure to figure.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.transforms import offset_copy

from rlbook.figures import style

TASK, REWARD, TEST, OTHER = style.SERIES[0], style.SERIES[1], style.SERIES[2], style.SERIES[3]
"""Held-out (or validation) accuracy, training reward, test accuracy, and a second group of prompts."""


def _band(ax, x, triples, colour, label, marker="s") -> None:
    """A line through the values of (value, lo, hi) triples with their interval as a band."""
    values = np.asarray(triples, dtype=float)
    ax.plot(x, values[:, 0], color=colour, marker=marker, ms=4, lw=1.5, label=label)
    ax.fill_between(x, values[:, 1], values[:, 2], color=colour, alpha=0.15, lw=0)


def divergence(panels: Sequence[Mapping]) -> list:
    """Training reward against held-out task accuracy over each run's checkpoints, one panel per run.

    Thin line: each training batch's mean reward. Markers with bars: the
    training reward at each checkpoint. Line and band: held-out accuracy under
    the exact verifier, with its 95 % interval over prompts.
    """
    figures = []
    for p in panels:
        fig, ax = style.panel()
        ax.plot(p["steps"], p["batch"], color=REWARD, alpha=0.5, lw=0.8, label="training batch")
        train = np.asarray(p["train"], dtype=float)
        ax.errorbar(
            p["checkpoints"],
            train[:, 0],
            yerr=[train[:, 0] - train[:, 1], train[:, 2] - train[:, 0]],
            color=REWARD,
            marker="o",
            ms=4,
            capsize=2,
            lw=1.5,
            label=f"training reward ({p['verifier']})",
        )
        _band(ax, p["checkpoints"], p["heldout"], TASK, "held-out accuracy (exact 1.0)")
        ax.set(
            title=f"{p['name']}: trained on {p['verifier']}",
            xlabel="RL step",
            ylabel="reward or accuracy",
            ylim=(-0.03, 1.03),
        )
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2))
        figures.append(fig)
    return figures


def selection(main: Mapping, exploit: Mapping, main_pick: int, exploit_picks: Mapping[str, int]) -> list:
    """What the selection rules see: main's validation and test accuracy, exploit's reward and validation accuracy.

    ``main_pick`` is the step the validation rule picks from main;
    ``exploit_picks`` maps "training reward" and "validation accuracy" to the
    steps those rules pick from exploit. Each pick is ringed on the curve it
    was chosen from.
    """
    fig_main, ax = style.panel()
    _band(ax, main["checkpoints"], main["validation"], TASK, "validation prompts")
    _band(ax, main["checkpoints"], main["test"], TEST, "test prompts", marker="^")
    i = main["checkpoints"].index(main_pick)
    ax.plot(
        main_pick,
        main["validation"][i][0],
        "o",
        ms=12,
        mfc="none",
        mec=style.GREY,
        mew=1.5,
        label="validation rule's pick",
    )
    ax.set(title="main: accuracy by checkpoint", xlabel="RL step", ylabel="accuracy (exact 1.0)", ylim=(0, 1))
    ax.legend(loc="lower right")
    fig_exploit, ax = style.panel()
    train = np.asarray(exploit["train"], dtype=float)
    ax.plot(exploit["checkpoints"], train[:, 0], color=REWARD, marker="o", ms=4, lw=1.5, label="training reward")
    _band(ax, exploit["checkpoints"], exploit["validation"], TASK, "validation accuracy")
    labels = {
        "training reward": ("training-reward rule's pick", (0.97, 0.62), "right"),
        "validation accuracy": ("validation rule's pick", (0.3, 0.05), "left"),
    }
    for rule, values, colour in (
        ("training reward", train[:, 0], REWARD),
        ("validation accuracy", np.asarray(exploit["validation"])[:, 0], TASK),
    ):
        step = exploit_picks[rule]
        point = (step, values[exploit["checkpoints"].index(step)])
        ax.plot(*point, "o", ms=12, mfc="none", mec=colour, mew=1.5)
        text, where, align = labels[rule]
        ax.annotate(
            text,
            point,
            xytext=where,
            textcoords="axes fraction",
            ha=align,
            fontsize=9,
            color=colour,
            arrowprops={"arrowstyle": "->", "color": colour, "lw": 1},
        )
    ax.set(title="exploit: what each rule reads", xlabel="RL step", ylabel="reward or accuracy", ylim=(0, 1.05))
    ax.legend(loc="upper left")
    return [fig_main, fig_exploit]


def comparisons(rows: Sequence[Mapping]):
    """After-RL minus before-RL accuracy under matched (first colour) and unmatched (second colour) settings."""
    fig, ax = style.panel(4.6, 0.45 * len(rows) + 1.4)
    for i, row in enumerate(rows):
        colour = TASK if row["matched"] else OTHER
        ax.errorbar(
            row["value"],
            i,
            xerr=[[row["value"] - row["lo"]], [row["hi"] - row["value"]]],
            fmt="o",
            color=colour,
            capsize=3,
            ms=5,
        )
    ax.axvline(0, color=style.GREY, lw=1)
    ax.set_yticks(range(len(rows)), [r["label"].replace("; ", "\n") for r in rows])
    ax.invert_yaxis()
    ax.set_xlabel("after minus before (test accuracy)")
    handles = [ax.plot([], [], "o", color=c)[0] for c in (TASK, OTHER)]
    ax.legend(handles, ["matched", "unmatched"], loc="lower right")
    return style.fit(fig)


def slices(
    rows: Sequence[Mapping],
    before: Sequence[float] | np.ndarray,
    after: Sequence[float] | np.ndarray,
    carry: Sequence[bool] | np.ndarray,
    step: int,
) -> list:
    """Accuracy by slice before and after RL (one panel), and every held-out sum's before and after (another).

    ``rows`` are the facts' slice rows (``slice``, ``prompts``, ``before``,
    ``after``); ``before``, ``after`` and ``carry`` are per held-out prompt.
    """
    fig_slices, ax = style.panel(4.6, 0.5 * len(rows) + 1.4)
    for i, row in enumerate(rows):
        for offset, key, colour in ((-0.15, "before", style.GREY), (0.15, "after", TASK)):
            e = row[key]
            ax.errorbar(
                e["value"],
                i + offset,
                xerr=[[e["value"] - e["lo"]], [e["hi"] - e["value"]]],
                fmt="o",
                color=colour,
                capsize=2,
                ms=4,
            )
    ax.set_yticks(range(len(rows)), [f"{r['slice']} ({r['prompts']})" for r in rows])
    ax.invert_yaxis()
    ax.set(xlabel="held-out accuracy", xlim=(0, 1))
    handles = [ax.plot([], [], "o", color=c)[0] for c in (style.GREY, TASK)]
    # under the axis label, where it covers no slice's markers: an offset in inches, whatever the panel's height
    below = offset_copy(ax.transAxes, fig=fig_slices, y=-0.48, units="inches")
    ax.legend(
        handles, ["step 0", f"step {step}"], loc="upper center", bbox_to_anchor=(0.5, 0), bbox_transform=below, ncol=2
    )
    style.fit(fig_slices)
    fig_prompts, ax = style.panel(4.6, 3.6)
    before, after, carry = np.asarray(before), np.asarray(after), np.asarray(carry, dtype=bool)
    for mask, colour, label, marker in ((~carry, TASK, "no carry", "o"), (carry, OTHER, "carry", "s")):
        ax.plot(before[mask], after[mask], marker, color=colour, ms=5, alpha=0.75, label=label)
    ax.plot([0, 1], [0, 1], color=style.GREY, lw=1, ls=":")
    wrong = int(((before == 0) & (after == 0)).sum())
    if wrong:
        ax.annotate(
            f"{wrong} sum{'' if wrong == 1 else 's'} wrong at both ends",
            (0, 0),
            xytext=(0.42, 0.12),
            fontsize=9,
            color=style.GREY,
            arrowprops={"arrowstyle": "->", "color": style.GREY, "lw": 1},
        )
    ax.set(xlabel="accuracy at step 0", ylabel=f"accuracy at step {step}", xlim=(-0.04, 1.04), ylim=(-0.04, 1.04))
    ax.set_aspect("equal")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
    return [fig_slices, fig_prompts]


def retained(curves: Sequence[Mapping], by_seed: Mapping[int, Mapping], most_lost: float, finding: str) -> list:
    """Plain-format accuracy (retained capability) and held-out chat accuracy by checkpoint, one panel per seed
    (chapter 8), with the checkpoint each selection rule keeps and the constraint's floor; a last panel holds the
    legend and ``finding``.

    ``curves`` hold, per seed, ``seed``, ``steps``, ``plain`` (greedy plain
    ``a+b=`` accuracy) and ``heldout`` (sampled chat accuracy on held-out
    prompts). ``by_seed`` maps each seed to its facts: ``selected`` (the
    checkpoint validation alone keeps) and ``retained``, with that pick's
    test accuracy ``selected_test`` and the checkpoint kept under the
    retained-capability constraint, ``constrained``, with its
    ``constrained_test``. ``most_lost`` is the most plain-format accuracy,
    in points, the constraint lets a checkpoint lose from step 0; ``finding``
    is the facts' sentence on which seeds the constraint cost test accuracy.
    """
    figures = []
    below = 0.04  # where the picks' labels sit, in axes coordinates: the empty bottom of the panel
    for c in curves:
        facts = by_seed[c["seed"]]
        picks = (
            (facts["retained"]["constrained"], facts["retained"]["constrained_test"], style.INK, ":", below + 0.1),
            (facts["selected"], facts["retained"]["selected_test"], style.GREY, "--", below),
        )
        fig, ax = style.panel(style.PANEL[0], 3.0)
        ax.axhline(c["plain"][0] - most_lost / 100, color=TEST, lw=1, ls="-.", alpha=0.7)
        ax.plot(c["steps"], c["plain"], color=TEST, marker="^", ms=4, lw=1.4)
        ax.plot(c["steps"], c["heldout"], color=TASK, marker="s", ms=3.5, lw=1.2, ls="--")
        for step, test, colour, ls, height in picks:
            ax.axvline(step, color=colour, lw=1.2, ls=ls)
            ax.text(
                step,
                height,
                f"test {test:.2f}",
                transform=ax.get_xaxis_transform(),
                ha="center",
                va="bottom",
                color=colour,
                fontsize=style.MIN_FONT,
                bbox={"facecolor": style.PAPER, "edgecolor": "none", "pad": 1},
            )
        ax.set(xlabel="RL step", ylabel="accuracy", ylim=(0, 1.03), title=f"seed {c['seed']}")
        figures.append(fig)
    handles = [
        plt.Line2D([], [], color=TEST, marker="^", ms=4, lw=1.4),
        plt.Line2D([], [], color=TASK, marker="s", ms=3.5, lw=1.2, ls="--"),
        plt.Line2D([], [], color=TEST, lw=1, ls="-.", alpha=0.7),
        plt.Line2D([], [], color=style.INK, lw=1.2, ls=":"),
        plt.Line2D([], [], color=style.GREY, lw=1.2, ls="--"),
    ]
    labels = [
        "plain a+b= (retained)",
        "held-out chat prompts",
        f"the constraint's floor: {most_lost:g} points under step 0",
        "kept under the constraint, its test accuracy",
        "kept by validation alone, its test accuracy",
    ]
    fig, ax = style.panel(style.PANEL[0], 1.8)
    ax.axis("off")
    ax.legend(handles, labels, loc="upper center", ncol=1)
    ax.text(0.5, 0.0, textwrap.fill(finding, 52), ha="center", va="bottom", transform=ax.transAxes)
    return [*figures, fig]
