"""The TRL appendix's figures (chapters/appendix-trl.qmd), drawn from its facts (:mod:`rlbook.book.bridge`).

Each function takes plain data from the appendix's facts and returns one
figure per panel, in the house style (:mod:`rlbook.figures.style`): the book's
own trainer in blue, TRL's ``GRPOTrainer`` in orange, verdicts in their house
colours and words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.ticker import MaxNLocator

from rlbook.core.rewards import STATUSES
from rlbook.core.verdicts import VERDICT_WORDS
from rlbook.figures import style

TRAINERS = {"rlbook": style.BLUE, "TRL": style.ORANGE}
"""Each trainer's colour, the same in every panel."""


def _steps_axis(ax) -> None:
    """Steps are whole numbers: ticks on integers only."""
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def _legend_below(ax, ncol: int = 2) -> None:
    """A legend under the axes, where it covers nothing."""
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=ncol)


def trainers(seed: Mapping, gains: Mapping) -> list:
    """The book's ``main`` configuration trained by rlbook and by TRL, as three panels.

    ``seed``: the shown seed's ``steps`` with each trainer's batch reward
    (``rlbook`` and ``TRL``, one value a step) and its checkpoints
    (``checkpoints``: each trainer's ``[step, held-out expected reward]``
    pairs). ``gains``: ``seeds`` and each trainer's held-out gain over the
    run on each of them.
    """
    batch, ax = style.panel()
    for name, colour in TRAINERS.items():
        ax.plot(seed["steps"], seed[name], color=colour, label=name)
    ax.set(xlabel="step", ylabel="batch reward (training sums)", title=f"Each step's batch, seed {seed['seed']}")
    _steps_axis(ax)
    _legend_below(ax)

    heldout, ax = style.panel()
    for name, colour in TRAINERS.items():
        steps, values = zip(*seed["checkpoints"][name])
        ax.plot(steps, values, "o-", color=colour, label=name)
    ax.set(xlabel="step", ylabel="held-out expected reward", title=f"Checkpoints, seed {seed['seed']}")
    ax.set_xticks(sorted({s for pairs in seed["checkpoints"].values() for s, _ in pairs}))
    _legend_below(ax)

    gained, ax = style.panel()
    where = np.arange(len(gains["seeds"]))
    width = 0.36
    for offset, (name, colour) in zip((-width / 2, width / 2), TRAINERS.items()):
        ax.bar(where + offset, gains[name], width, color=colour, label=name)
    ax.axhline(0, color=style.INK, linewidth=0.8)
    ax.set_xticks(where, [f"seed {s}" for s in gains["seeds"]])
    ax.set(ylabel="held-out gain over the run", title="Gain on each seed")
    ax.grid(axis="x", visible=False)
    _legend_below(ax)
    return [batch, heldout, gained]


def audit(steps: Sequence[int], shares: Mapping[str, Sequence[float]], silent: Mapping) -> list:
    """The audit of a TRL run from its captured rollouts, as two panels.

    ``shares``: each verifier status's share of each step's batch (statuses
    that never occur are left out of the stack and its legend). ``silent``:
    each step's share of groups whose rewards are all equal, split into
    ``all_right`` and ``all_wrong``, with ``logged``, TRL's own
    ``frac_reward_zero_std`` at the same steps.
    """
    composition, ax = style.panel()
    seen = [s for s in STATUSES if any(shares.get(s, ()))]
    ax.stackplot(
        steps,
        [shares[s] for s in seen],
        colors=[style.STATUS_COLOURS[s] for s in seen],
        labels=[VERDICT_WORDS[s] for s in seen],
    )
    ax.set(
        xlabel="step",
        ylabel="share of the batch",
        ylim=(0, 1),
        xlim=(min(steps), max(steps)),
        title="Each batch by verdict",
    )
    _steps_axis(ax)
    _legend_below(ax)

    groups, ax = style.panel()
    ax.stackplot(
        steps,
        silent["all_right"],
        silent["all_wrong"],
        colors=[style.TEAL, style.ORANGE],
        labels=["all right", "all wrong"],
        alpha=0.8,
    )
    ax.plot(steps, silent["logged"], "o", color=style.INK, markersize=4, label="TRL's frac_reward_zero_std")
    top = max(max(silent["logged"]), max(np.add(silent["all_right"], silent["all_wrong"])))
    ax.set(
        xlabel="step",
        ylabel="share of the groups",
        ylim=(0, max(0.5, 1.25 * top)),
        xlim=(min(steps), max(steps)),
        title="Groups without a signal",
    )
    _steps_axis(ax)
    _legend_below(ax, ncol=2)
    return [composition, groups]
