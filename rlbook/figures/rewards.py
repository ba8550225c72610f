"""Chapter 2's figures (chapters/02-outcome-process-rewards.qmd), drawn from its facts (:mod:`rlbook.book.rewards`).

Each function takes plain data from the chapter's facts and returns one
figure per panel, in the house style (:mod:`rlbook.figures.style`): two
judged rollouts, one panel each, and the two multi-step RL runs compared in
three panels.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.patches import FancyBboxPatch

from rlbook.core.verdicts import VERDICT_WORDS
from rlbook.figures import style

RUN_COLOURS = {"process-outcome": style.ORANGE, "process-shaped": style.TEAL}
"""The two multi-step RL runs in the colours they have in every figure of the book."""
STEP_COLOURS = {True: style.TEAL, False: style.RED}
"""A step the process scorer finds valid, and one it finds invalid."""


def _box(ax, x: float, y: float, width: float, text: str, colour: str, mono: bool = True) -> None:
    """A rounded tile at (x, y) (its left edge and vertical centre) with text on it: the colour at
    :data:`rlbook.figures.style.TILE_ALPHA` over the page, the text in the page's ink, read in both colour
    schemes."""
    ax.add_patch(
        FancyBboxPatch(
            (x, y - 0.055),
            width,
            0.11,
            boxstyle="round,pad=0.01",
            facecolor=colour,
            edgecolor="none",
            alpha=style.TILE_ALPHA,
            transform=ax.transAxes,
        )
    )
    ax.text(
        x + width / 2,
        y,
        text,
        ha="center",
        va="center",
        fontsize=10,
        family="monospace" if mono else None,
        transform=ax.transAxes,
    )


def rollout(j: Mapping, title: str):
    """One judged rollout as a column of labelled rows: prompt, each step with its verdict, end, outcome.

    ``j`` is a judged rollout as the facts hold it (prompt, completion,
    status, reward, process and ``notes``, one (text, valid, note) per step).
    """
    fig, ax = style.panel()
    ax.axis("off")
    ax.text(0.0, 0.97, title, ha="left", va="top", fontsize=10.5, transform=ax.transAxes)
    rows = [("prompt", j["prompt"], style.GREY, "")]
    for i, (text, valid, note) in enumerate(j["notes"]):
        verdict = note.split(" ", 2)[-1]  # "step 1 5 = 0+5 valid" -> "5 = 0+5 valid"
        rows.append((f"step {i + 1}", text or "(none)", STEP_COLOURS[bool(valid)], verdict))
    end = j["completion"][len(j["completion"].split("#")[0]) :]
    rows.append(("end", end or "(budget)", style.GREY, ""))
    for k, (label, text, colour, note) in enumerate(rows):
        y = 0.78 - 0.14 * k
        ax.text(0.0, y, label, ha="left", va="center", fontsize=10, color=style.GREY, transform=ax.transAxes)
        width = 0.42 if label == "prompt" else 0.16
        _box(ax, 0.2, y, width, text, colour)
        if note:
            ax.text(0.4, y, note, ha="left", va="center", fontsize=10, color=colour, transform=ax.transAxes)
    y = 0.78 - 0.14 * len(rows)
    ax.text(0.0, y, "outcome", ha="left", va="center", fontsize=10, color=style.GREY, transform=ax.transAxes)
    _box(
        ax,
        0.2,
        y,
        0.42,
        f"{VERDICT_WORDS[j['status']]}, reward {j['reward']:.0f}",
        style.STATUS_COLOURS[j["status"]],
        mono=False,
    )
    ax.text(
        0.66,
        y,
        f"process score {j['process']:.1f}",
        ha="left",
        va="center",
        fontsize=10,
        color=STEP_COLOURS[j["process"] == 1.0],
        transform=ax.transAxes,
    )
    return fig


def rollouts(pair: Sequence[Mapping]) -> list:
    """Chapter 2's two judged rollouts of one prompt, one panel each: the judges agree, then disagree."""
    return [rollout(j, "the judges agree" if j["kind"] == "agree" else f"they disagree: {j['kind']}") for j in pair]


def _seeds_and_mean(ax, xs: Sequence[int], curves: Sequence[Sequence[float]], colour: str, label: str) -> None:
    """One thin line per seed and a thick line for their mean, labelled."""
    for ys in curves:
        ax.plot(xs, ys, color=colour, alpha=0.4, lw=0.9)
    ax.plot(xs, np.mean(curves, axis=0), color=colour, lw=2.2, label=f"{label} (mean of {len(curves)} seeds)")


PANELS = (
    ("accuracy", "eval_steps", "held-out accuracy", "expected reward (exact verifier)"),
    ("validity", "eval_steps", "held-out step validity", "share of valid steps"),
    ("invalid_share", "batch_steps", "right answer, invalid step", "share of the batch's rollouts"),
)
"""The comparison's panels: the curve each draws, its steps, its title and its vertical axis."""


def comparison(curves: Mapping[str, Sequence[Mapping]], labels: Mapping[str, str]) -> list:
    """Outcome-only against shaped RL, three panels: held-out accuracy, step validity, right through invalid.

    ``curves`` maps each run to its seeds' curves (``eval_steps``,
    ``accuracy``, ``validity``, ``batch_steps``, ``invalid_share``), as
    the facts hold them; ``labels`` names each run's reward.
    """
    figures = []
    for key, steps, title, ylabel in PANELS:
        fig, ax = style.panel()
        for name, seeds in curves.items():
            xs = seeds[0][steps]
            if any(list(s[steps]) != list(xs) for s in seeds):
                raise ValueError(f"the seeds of {name!r} must share their steps")
            _seeds_and_mean(ax, xs, [s[key] for s in seeds], RUN_COLOURS[name], labels[name])
        ax.set(title=title, xlabel="RL step", ylabel=ylabel)
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=1)
        figures.append(fig)
    return figures
