"""Chapter 1's figures (chapters/01-rl-loop.qmd), drawn from its facts (:mod:`rlbook.book.loop`).

Each function takes plain data from the chapter's facts and returns one
figure per panel, in the house style (:mod:`rlbook.figures.style`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch
from matplotlib.ticker import FuncFormatter

from rlbook.core.rewards import STATUSES
from rlbook.core.verdicts import VERDICT_WORDS
from rlbook.figures import style

KIND_COLOURS = {"confidently right": style.TEAL, "never right": style.ORANGE, "uncertain": style.PURPLE}


def shown(completion: str) -> str:
    """A completion as the figures print it: a newline as "⏎", a space as "␣", the end mark as the ``#`` it is."""
    return completion.replace("\n", "\u23ce").replace(" ", "\u2423")


def rl_loop(group_size: int):
    """The RL loop as a cycle of four boxes: policy, rollouts, verifier, update signal.

    Each box is a tile (:data:`rlbook.figures.style.TILE_ALPHA`) whose label keeps the page's ink, read in
    both colour schemes."""
    fig, ax = style.panel(4.6, 3.0)
    ax.axis("off")
    ax.set_xlim(0, 4.6)
    ax.set_ylim(0, 3.0)
    boxes = [
        ((0.15, 1.7), "policy\nwrites answers", style.BLUE),
        ((2.55, 1.7), f"rollouts\n{group_size} answers\nper prompt", style.TEAL),
        ((2.55, 0.2), "verifier\nreward 1 if\nright, else 0", style.ORANGE),
        ((0.15, 0.2), "update signal\nreward minus\ngroup mean", style.PURPLE),
    ]
    width, height = 1.9, 1.05
    for (x, y), label, colour in boxes:
        ax.add_patch(
            FancyBboxPatch(
                (x, y),
                width,
                height,
                boxstyle="round,pad=0.04",
                facecolor=colour,
                edgecolor="none",
                alpha=style.TILE_ALPHA,
            )
        )
        ax.text(x + width / 2, y + height / 2, label, ha="center", va="center", fontsize=10)
    arrows = [
        ((2.1, 2.22), (2.5, 2.22)),
        ((3.5, 1.65), (3.5, 1.3)),
        ((2.5, 0.72), (2.1, 0.72)),
        ((1.1, 1.3), (1.1, 1.65)),
    ]
    for start, end in arrows:
        ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=14, color=style.GREY, lw=1.5))
    ax.text(1.2, 1.47, "gradient step", ha="left", va="center", color=style.GREY, fontsize=9)
    return fig


SHOWN_ANSWERS = 7
"""The most answers a workshop panel lists one by one; the rarer ones share a last bar."""


def _top_answers(answers: Sequence[Sequence]) -> list[list]:
    """The commonest :data:`SHOWN_ANSWERS` answers, then one bar "others (k)" for the rest, coloured grey."""
    if len(answers) <= SHOWN_ANSWERS:
        return [list(a) for a in answers]
    rest = answers[SHOWN_ANSWERS - 1 :]
    return [list(a) for a in answers[: SHOWN_ANSWERS - 1]] + [[f"{len(rest)} others", sum(a[1] for a in rest), None]]


def answers(panels: Sequence[Mapping], samples: int) -> list:
    """The workshop: one panel per sum, its commonest answers with their counts, coloured by verdict; a last panel
    holds the legend, of the verdicts that a bar shows (an answer counted only among the grey "others" is not
    drawn in its verdict's colour, so its verdict is not named)."""
    shown_rows = [_top_answers(p["answers"]) for p in panels]
    rows = max(len(r) for r in shown_rows)
    figures = []
    for p, top in zip(panels, shown_rows):
        fig, ax = style.panel(3.4, 0.32 * max(rows, 3) + 1.3)
        ax.barh(
            range(len(top)),
            [a[1] for a in top],
            height=0.7,
            color=[style.STATUS_COLOURS[a[2]] if a[2] else style.LIGHT_GREY for a in top],
        )
        ax.set_yticks(range(len(top)), [shown(a[0]) if a[2] else a[0] for a in top], family="monospace")
        ax.set_ylim(max(rows, 3) - 0.5, -0.5)
        ax.set_xlim(0, samples)
        ax.set_xlabel("samples")
        ax.set_title(f"{p['name']}: {p['kind']}\nshare right {p['rate']:.2f}")
        figures.append(fig)
    seen = {a[2] for top in shown_rows for a in top}
    fig, ax = style.panel(3.4, 0.9)
    ax.axis("off")
    labels = [s for s in STATUSES if s in seen]
    handles = [plt.Rectangle((0, 0), 1, 1, color=style.STATUS_COLOURS[s]) for s in labels]
    ax.legend(handles, [VERDICT_WORDS.get(s, s) for s in labels], loc="center", ncol=1)
    return [*figures, fig]


def temperature(data: Mapping, names: Mapping[str, str], heldout_label: str, samples: int):
    """Expected reward against temperature: sampled (markers) and exact (lines) for each workshop sum."""
    fig, ax = style.panel(4.6, 3.4)
    temps = list(data["temperatures"])
    for (kind, name), row, exact in zip(names.items(), data["sampled"], data["exact"]):
        colour = KIND_COLOURS[kind]
        ax.plot(data["fine"], exact, color=colour, lw=1.5, label=name)
        ax.plot(temps, row, "o", color=colour, ms=4)
    ax.plot(temps, data["heldout"], "s--", color=style.BLUE, ms=4, lw=1, label=heldout_label)
    ax.axvline(1.0, color=style.GREY, lw=0.8, ls=":")
    ax.set_xlabel("sampling temperature T")
    ax.set_ylabel("expected reward")
    ax.set_ylim(-0.03, 1.03)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
    return fig


def spread(data: Mapping):
    """The spread of a sampled estimate against the number of samples, with the binomial prediction."""
    fig, ax = style.panel(4.6, 3.2)
    ax.plot(data["ns"], data["binomial"], color=style.GREY, lw=1.2, label="√(p(1 − p)/n)")
    ax.plot(data["ns"], data["sd"], "o", color=style.PURPLE, label=f"spread of {data['repeats']} estimates")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    style.plain_log_ticks(ax, "x")
    style.plain_log_ticks(ax, "y")
    ax.set_xlabel("samples per estimate n")
    ax.set_ylabel("spread of the estimate")
    ax.legend()
    return fig


def _advantage_colour(advantage: float | None) -> str:
    """An answer's colour in chapter 1's update figure: teal for a positive advantage, orange for a negative one,
    grey for none (an answer the group did not sample, or one whose advantage is 0)."""
    if advantage is None or advantage == 0:
        return style.GREY
    return style.TEAL if advantage > 0 else style.ORANGE


def _percent(change: float) -> str:
    """A relative change in percent with its sign and two significant digits, never rounded to zero: "+33%",
    "−2.9%", "+0.0077%"."""
    digits = max(0, 1 - math.floor(math.log10(abs(change)))) if change else 0
    return f"{change:+.{digits}f}%".replace("-", "\u2212")


def update(rows: Sequence[Sequence]) -> list:
    """One update taken apart (chapter 1), in two panels, each answer coloured by its advantage's sign.

    The first panel draws each answer's probability before (pale) and after
    (solid) the step; the second, how far the step moved it, as a percentage
    of its probability before, each bar labelled with its value, so that an
    answer that moved against its advantage shows whatever its size. ``rows``
    are (answer, count, reward, advantage or None, before, after), most
    probable first.
    """
    y = np.arange(len(rows))
    colours = [_advantage_colour(r[3]) for r in rows]
    height = 0.42 * len(rows) + 1.6
    fig, ax = style.panel(style.PANEL[0], height)
    ax.barh(y - 0.2, [r[4] for r in rows], 0.4, color=colours, alpha=0.4)
    ax.barh(y + 0.2, [r[5] for r in rows], 0.4, color=colours)
    names = [
        f"{shown(r[0])}  ×{r[1]}  A={r[3]:+.2f}" if r[3] is not None else f"{shown(r[0])}  not sampled" for r in rows
    ]
    ax.set_yticks(y, names, family="monospace")
    ax.invert_yaxis()
    ax.set_xlabel("probability of the whole answer")
    ax.set_title("before and after the step")
    patch = plt.Rectangle
    handles = [patch((0, 0), 1, 1, color=style.GREY, alpha=0.4), patch((0, 0), 1, 1, color=style.GREY)]
    ax.legend(handles, ["before", "after"], loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
    changes = [100 * (r[5] / r[4] - 1) for r in rows]
    moved, axis = style.panel(style.PANEL[0], height)
    axis.barh(y, changes, 0.6, color=colours)
    axis.axvline(0, color=style.INK, lw=0.8)
    low, high = min(0.0, *changes), max(0.0, *changes)
    room = 0.45 * (high - low or 1.0)
    axis.set_xlim(low - (room if low < 0 else 0.05 * room), high + (room if high > 0 else 0.05 * room))
    for k, change in enumerate(changes):
        axis.text(
            change,
            k,
            f" {_percent(change)} " if change else " 0% ",
            ha="left" if change >= 0 else "right",
            va="center",
            fontsize=style.MIN_FONT,
        )
    axis.set_yticks(y, [shown(r[0]) for r in rows], family="monospace")
    axis.invert_yaxis()
    axis.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}%".replace("-", "\u2212")))
    axis.set_xlabel("change, in % of its probability before")
    axis.set_title("how far the step moved each answer")
    return [style.fit(fig), style.fit(moved)]


SEED_MARKERS = ("o", "s", "^", "D", "v")
"""The held-out markers that tell the seeds of chapter 1's learning curve apart, with their colours and line styles."""
SEED_LINES = ("-", "--", ":", "-.", (0, (5, 1, 1, 1)))
"""The held-out line styles of those seeds, one each (:data:`SEED_MARKERS`)."""


def learning_curve(curves: Sequence[Mapping]):
    """main's learning curve on each seed (chapter 1): the batch reward (thin) and the held-out expected reward
    (markers), each seed in a colour, marker and line style of its own."""
    fig, ax = style.panel(4.6, 3.6)
    colours = style.series_colours([f"seed {c['seed']}" for c in curves])
    for k, c in enumerate(curves):
        colour = colours[f"seed {c['seed']}"]
        ax.plot(c["steps"], c["batch"], color=colour, lw=0.7, alpha=0.45)
        ax.plot(
            c["eval_steps"],
            c["heldout"],
            color=colour,
            marker=SEED_MARKERS[k],
            ls=SEED_LINES[k],
            ms=4,
            lw=1.4,
            label=f"seed {c['seed']}",
        )
    seeds, names = ax.get_legend_handles_labels()
    kinds = [
        plt.Line2D([], [], color=style.GREY, lw=0.7, alpha=0.6),
        plt.Line2D([], [], color=style.GREY, marker="o", ms=4, lw=1.4),
    ]
    # the legend fills column by column: the seeds along its first row, the two kinds of line below them
    handles = [h for pair in itertools.zip_longest(seeds, kinds) for h in pair if h is not None]
    labels = [n for pair in itertools.zip_longest(names, ["training batch", "held-out sums"]) for n in pair if n]
    ax.set_xlabel("RL step")
    ax.set_ylabel("expected reward")
    ax.set_ylim(0, 1)
    ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=len(curves))
    return fig
