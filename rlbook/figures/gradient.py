"""Chapter 3's figures (chapters/03-reward-to-gradient.qmd), drawn from its facts (:mod:`rlbook.book.gradient`).

Each function takes plain data from the chapter's facts and returns one
figure per panel, in the house style (:mod:`rlbook.figures.style`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np

from rlbook.figures import style

LOOP_COLOUR = style.SERIES[1]
"""The minimal loop's colour beside ``main``'s blue."""


def _legend_below(ax, ncol: int = 2) -> None:
    """A legend under the axes, where it covers nothing."""
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=ncol)


def loop_curves(curves: Sequence[Mapping]):
    """The minimal loop's held-out expected reward on each seed, beside ``main``'s and ``pg``'s at the same checkpoints."""
    fig, ax = style.panel(4.6, 3.4)
    for k, c in enumerate(curves):
        first = k == 0
        ax.plot(c["steps"], c["main"], "-", color=style.BLUE, lw=3.4, zorder=1, label="main" if first else None)
        ax.plot(
            c["pg_steps"],
            c["pg"],
            "s",
            color=style.SERIES[2],
            ms=7,
            mfc="none",
            mew=1.4,
            zorder=2,
            label="pg" if first else None,
        )
        ax.plot(
            c["steps"],
            c["loop"],
            "^--",
            color=LOOP_COLOUR,
            lw=1.3,
            ms=4,
            zorder=3,
            label="the loop above" if first else None,
        )
    ax.set_xlabel("RL step")
    ax.set_ylabel("held-out expected reward")
    _legend_below(ax, ncol=3)
    return fig


def shifted_rewards(curves: Sequence[Mapping], shift: float, large: float):
    """The loop trained on rewards moved up, with and without the group baseline, beside the unshifted loop.

    Each curve of ``curves`` (one per seed) holds the checkpoints' ``steps``
    and the held-out expected reward of the unshifted loop (``loop``), of the loop with every
    reward moved up by ``shift`` with the baseline (``baseline``) and without
    it (``shift``), and moved up by ``large`` without it (``large_shift``).
    Each series is drawn as its mean over the seeds, the seeds' range shaded.
    """
    fig, ax = style.panel(4.6, 3.4)
    series = (
        ("loop", "the loop, rewards as they are", {"color": style.BLUE, "lw": 3.4}),
        ("baseline", f"+{shift:g}, group baseline", {"color": style.TEAL, "lw": 1.3, "marker": "^", "ms": 4}),
        ("shift", f"+{shift:g}, no baseline", {"color": style.ORANGE, "lw": 1.8, "ls": "--"}),
        ("large_shift", f"+{large:g}, no baseline", {"color": style.PURPLE, "lw": 1.8, "ls": "-."}),
    )
    steps = curves[0]["steps"]
    for key, label, line in series:
        values = np.array([c[key] for c in curves])
        ax.plot(steps, values.mean(0), label=label, **line)
        ax.fill_between(steps, values.min(0), values.max(0), color=line["color"], alpha=0.12, lw=0)
    ax.set_xlabel("RL step")
    ax.set_ylabel("held-out expected reward")
    _legend_below(ax)
    return fig


def gradient_variance(offsets: Sequence[float], no_baseline: Sequence[float], group_baseline: float):
    """Variance of the gradient estimate against the reward offset, without and with the group baseline."""
    fig, ax = style.panel(4.6, 3.4)
    ax.plot(offsets, no_baseline, color=style.ORANGE, lw=2, label="no baseline: weight r + c")
    ax.axhline(group_baseline, color=style.TEAL, lw=2, label="group baseline: weight r − group mean")
    ax.axvline(0, color=style.GREY, lw=0.8, ls=":")
    ax.set_xlabel("offset c added to every reward")
    ax.set_ylabel("total variance of the estimate")
    ax.set_yscale("log")
    style.plain_log_ticks(ax)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=1)
    return fig


def zero_variance(series: Mapping) -> list:
    """Groups with no signal per step (all right, all wrong, stacked), and the mean training reward: two panels."""
    steps = series["steps"]
    share, ax = style.panel(4.6, 3.2)
    ax.stackplot(
        steps,
        series["all_right"],
        series["all_wrong"],
        colors=(style.TEAL, style.ORANGE),
        alpha=0.85,
        labels=("all right", "all wrong"),
    )
    ax.set_ylim(0, 1)
    ax.set_xlabel("training step")
    ax.set_ylabel("share of groups with no signal")
    _legend_below(ax)
    reward, ax = style.panel(4.6, 3.2)
    ax.plot(steps, series["reward"], color=style.BLUE)
    ax.set_ylim(0, 1)
    ax.set_xlabel("training step")
    ax.set_ylabel("mean training reward")
    return [share, reward]


ADVANTAGE_COLOURS = {True: style.TEAL, False: style.ORANGE}
"""A positive advantage and a negative one, in the colours chapter 1's update and chapter 4's ratios give them."""


def token_credit(rows: Sequence[Mapping]):
    """One group's answers, character by character: the prompt in grey, each generated character on its advantage.

    Each generated character carries, beneath it, the advantage its
    log-probability is weighted by, on a tile teal for a positive advantage
    and orange for a negative one (:data:`ADVANTAGE_COLOURS`), the stronger
    the larger the advantage, and none for an advantage of 0; the prompt
    conditions the policy but is not its action, so it carries none. At the
    right: the answer's reward and how many answers of the group were the
    same text. Positions are in inches, across a figure as wide as the
    longest answer needs. A tile is its colour at most
    :data:`rlbook.figures.style.TILE_ALPHA` opaque over the page, so the text
    on it keeps the page's ink and is read in both colour schemes.
    """
    cell, first = 0.56, 1.2  # inches: one character's cell, the first cell
    width = first + max(len(r["tokens"]) for r in rows) * cell + 1.0  # and the reward's note at the right
    largest = max(abs(a) for r in rows for a in r["advantages"]) or 1.0
    height = 0.62 * len(rows) + 0.2
    fig = plt.figure(figsize=(width, height))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(-height + 0.4, 0.4)
    ax.axis("off")
    longest = max(len(r["tokens"]) for r in rows)
    for k, r in enumerate(rows):
        y = -0.62 * k
        ax.text(
            first - 0.08, y, r["prompt"], ha="right", va="center", family="monospace", color=style.GREY, fontsize=10
        )
        for t, (ch, value) in enumerate(zip(r["tokens"], r["advantages"])):
            x = first + t * cell
            if value:
                strength = 0.3 + 0.7 * abs(value) / largest  # a small advantage still shows its sign
                colour = ADVANTAGE_COLOURS[value > 0]
                ax.add_patch(
                    plt.Rectangle(
                        (x, y - 0.27), cell - 0.05, 0.54, color=colour, lw=0, alpha=style.TILE_ALPHA * strength
                    )
                )
            ax.text(x + cell / 2, y + 0.1, ch, ha="center", va="center", family="monospace", weight="bold", fontsize=10)
            ax.text(x + cell / 2, y - 0.14, f"{value:+.2f}", ha="center", va="center", fontsize=9)
        ax.text(
            first + longest * cell + 0.05,
            y,
            f"reward {r['reward']:g}\n{r['copies']} of {r['group_size']}",
            va="center",
            fontsize=9,
        )
    return fig
