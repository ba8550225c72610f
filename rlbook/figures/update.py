"""Chapter 4's figures (chapters/04-update-choices.qmd), drawn from its facts (:mod:`rlbook.book.update`).

Each function takes plain data from the chapter's facts and returns one
figure per panel, in the house style (:mod:`rlbook.figures.style`): ``main``
is always the book's blue, drawn thick; every other run keeps one colour of
:data:`~rlbook.figures.style.SERIES` across the panels, and a legend under
the axes names them, so it covers no line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.artist import Artist

from rlbook.figures import style

SIGNS = (("positive", style.TEAL, "advantage > 0"), ("negative", style.ORANGE, "advantage < 0"))
"""The two kinds of token in the ratio histograms: colour and legend by the sign of the advantage."""


def ratio_histograms(bins: Sequence[float], histograms: Sequence[Mapping], eps: float, cap: float) -> list:
    """Histograms of log10 importance ratios after k steps on one batch, one panel per k, and a legend panel.

    Each panel shades PPO's region [1 − ε, 1 + ε] and marks CISPO's cap;
    its title gives the number of steps and the share of tokens PPO clips.
    """
    edges = np.asarray(bins, dtype=float)
    centres, width = (edges[:-1] + edges[1:]) / 2, np.diff(edges)
    top = max(max(h[name]) for h in histograms for name, _, _ in SIGNS)
    figures = []
    for h in histograms:
        fig, ax = style.panel(3.4, 2.8)
        bottom = np.zeros(len(centres))
        for name, colour, _ in SIGNS:
            counts = np.asarray(h[name], dtype=float)
            ax.bar(centres, counts, width, bottom=bottom, color=colour, alpha=0.85)
            bottom += counts
        ax.axvspan(np.log10(1 - eps), np.log10(1 + eps), color=style.BLUE, alpha=0.3)  # 0.15 vanished in the dark
        ax.axvline(np.log10(cap), color=style.PURPLE, ls="--")
        ax.set_yscale("log")
        ax.set_ylim(0.8, top * 3)
        style.plain_log_ticks(ax)
        ax.set_xlabel("log10(new / old probability)")
        ax.set_ylabel("tokens")
        steps = h["steps"]
        ax.set_title(f"after {steps} step{'s' if steps > 1 else ''}: PPO clips {h['clipped']:.0%}")
        figures.append(fig)
    fig, ax = style.panel(3.4, 1.2)
    ax.axis("off")
    handles: list[Artist] = [plt.Rectangle((0, 0), 1, 1, color=colour) for _, colour, _ in SIGNS]
    handles += [
        plt.Rectangle((0, 0), 1, 1, color=style.BLUE, alpha=0.15),
        plt.Line2D([0], [0], color=style.PURPLE, ls="--"),
    ]
    labels = [label for _, _, label in SIGNS] + ["PPO's region 1 ± ε", "CISPO's cap"]
    ax.legend(handles, labels, loc="center", ncol=2)
    return [*figures, fig]


def _colours(panels: Sequence[Mapping]) -> dict[str, str]:
    """One colour per run for the whole figure: ``main`` the book's blue, the others from
    :data:`~rlbook.figures.style.SERIES` (its blue skipped), each run the first colour that no run it shares a
    panel with has taken, so a run keeps its colour from panel to panel."""
    colours = {"main": style.BLUE}
    for p in panels:
        for s in p["series"]:
            if s["run"] in colours:
                continue
            near = {
                colours.get(t["run"])
                for q in panels
                if any(r["run"] == s["run"] for r in q["series"])
                for t in q["series"]
            }
            colours[s["run"]] = next(c for c in style.SERIES[1:] if c not in near)
    return colours


def update_curves(panels: Sequence[Mapping]) -> list:
    """One panel per question of the comparison: held-out expected reward per checkpoint, or KL to the base per step.

    A held-out panel draws each run's mean over seeds, its seed range shaded;
    the runs that only rounding separates from ``main`` are dashed. The KL
    panel draws each run's median over seeds per step, on a log scale.
    """
    figures, colours = [], _colours(panels)
    for p in panels:
        fig, ax = style.panel(4.6, 3.4)
        for s in p["series"]:
            colour = colours[s["run"]]
            line = (
                {"lw": 2.4, "zorder": 3}
                if s["run"] == "main"
                else {"lw": 1.4, "ls": "--" if s.get("disguise") else "-"}
            )
            if p["kind"] == "heldout":
                ax.plot(s["steps"], s["mean"], marker="o", ms=3, color=colour, label=s["run"], **line)
                ax.fill_between(s["steps"], s["low"], s["high"], color=colour, alpha=0.12)
            else:
                ax.plot(s["steps"], s["median"], color=colour, label=s["run"], **line)
        ax.set_title(p["title"])
        ax.set_xlabel("training step")
        if p["kind"] == "heldout":
            ax.set_ylabel("held-out expected reward")
        else:
            ax.set_ylabel("KL (median over seeds)")
            ax.set_yscale("log")
            style.plain_log_ticks(ax)
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=3)
        figures.append(fig)
    return figures
