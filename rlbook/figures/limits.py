"""Chapter 5's figures (chapters/05-reward-limits.qmd), drawn from its facts (:mod:`rlbook.book.limits`).

Each function takes plain data from the chapter's facts and returns one
figure per panel (a list for several), in the house style
(:mod:`rlbook.figures.style`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
from matplotlib.ticker import NullLocator

from rlbook.figures import style

TASK, LOOPHOLE, HELDOUT = style.SERIES[2], style.SERIES[1], style.SERIES[0]
"""The three things the reward-hack panels draw: reward the exact verifier agrees with, reward only the loophole
pays, and accuracy on the held-out sums."""
RUN, PENALISED = style.SERIES[1], style.SERIES[2]
"""``rm`` and ``rm-kl`` in the judge figures."""
SEED_STYLES = ("-", "--", ":")
"""Line styles that tell the seeds of one run apart where a panel draws several runs."""
SEED_MARKERS = ("o", "s", "^")
"""The markers of those seeds' checkpoints, one each, with their line styles (:data:`SEED_STYLES`)."""
CAUSES = {
    "verifier_error_rate": "verifier down",
    "malformed_rate": "malformed burst",
    "loss_is_finite": "non-finite loss",
}
"""What each intervention of the ``faults`` run answered, by the metric that triggered it."""


def _legend_panel(handles: list, labels: list[str], height: float = 1.1):
    """A panel that holds only a legend, so that no legend covers data."""
    fig, ax = style.panel(style.PANEL[0], height)
    ax.axis("off")
    ax.legend(handles, labels, loc="center", ncol=1)
    return fig


def _steps_axis(ax, last: int) -> None:
    """A step axis from 0 to ``last`` that is linear up to step 1 and logarithmic beyond it (chapter 5's reward
    hack): the first steps take as much room as the rest, and step 0, the checkpoint before training, keeps
    its place."""
    ax.set_xscale("symlog", linthresh=1, linscale=0.5)
    ticks = [t for t in (0, 1, 2, 5, 10, 20, 50, 100, 200) if t < last / 1.3] + [last]
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlim(0, last)


def reward_hack(by_seed: Mapping[int, Mapping]) -> list:
    """The reward hack (chapter 5): ``exploit`` beside ``exploit-slow``, one panel each with every seed in it,
    then a legend panel.

    Each panel draws, per seed (a line style and marker each), the share of
    each step's batch paid only through the loophole, the share the exact
    verifier pays as well, and held-out accuracy under the exact verifier at
    each checkpoint (markers), on a step axis that is logarithmic past step
    1 (:func:`_steps_axis`); a dotted line marks one half, past which the
    loophole has taken over. ``by_seed`` maps each seed to the ``exploit``
    run's ``steps``, ``task``, ``loophole``, ``eval_steps`` and ``heldout``,
    and under ``slow`` the same of ``exploit-slow``.
    """
    keys = ("steps", "task", "loophole", "eval_steps", "heldout")
    runs: dict[str, dict] = {"exploit": {}, "exploit-slow": {}}
    for seed, p in by_seed.items():
        runs["exploit"][seed] = tuple(p[k] for k in keys)
        runs["exploit-slow"][seed] = tuple(p["slow"][k] for k in keys)
    end = max(curve[0][-1] for run in runs.values() for curve in run.values())
    figures = []
    for name, curves in runs.items():
        fig, ax = style.panel()
        for (steps, task, loophole, eval_steps, heldout), ls, marker in zip(curves.values(), SEED_STYLES, SEED_MARKERS):
            ax.plot(steps, task, color=TASK, lw=1.1, ls=ls)
            ax.plot(steps, loophole, color=LOOPHOLE, lw=1.3, ls=ls)
            ax.plot(eval_steps, heldout, color=HELDOUT, lw=1.2, ls=ls, marker=marker, ms=4)
        ax.axhline(0.5, color=style.GREY, lw=1, ls=":")
        _steps_axis(ax, end)
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("RL step (log scale past step 1)")
        ax.set_ylabel("share of the batch, or accuracy")
        ax.set_title(name)
        figures.append(fig)
    handles = [
        plt.Line2D([], [], color=TASK, lw=1.1),
        plt.Line2D([], [], color=LOOPHOLE, lw=1.3),
        plt.Line2D([], [], color=HELDOUT, marker="o", ms=4, lw=1.2),
        plt.Line2D([], [], color=style.GREY, ls=":"),
        *[
            plt.Line2D([], [], color=style.INK, ls=ls, marker=marker, ms=4)
            for ls, marker in zip(SEED_STYLES, SEED_MARKERS[: len(by_seed)])
        ],
    ]
    labels = [
        "share of the batch the exact verifier also pays",
        "share of the batch paid only through the loophole",
        "held-out accuracy (exact verifier)",
        "one half: past it, the loophole has taken over",
        *[f"seed {s}" for s in by_seed],
    ]
    return [*figures, _legend_panel(handles, labels, 1.7)]


def best_of_n(by_seed: Mapping[int, Mapping]) -> list:
    """Best-of-n against the judge: the judge's score of its pick (proxy) and the pick's exact reward (gold), per n.

    ``by_seed`` maps each seed to ``ns``, ``proxy`` and ``gold``.
    """
    figures = []
    for key, title in (("proxy", "proxy: the judge's score"), ("gold", "gold: the exact verifier")):
        fig, ax = style.panel()
        for colour, (seed, b) in zip(style.SERIES, by_seed.items()):
            ax.plot(b["ns"], b[key], "o-", color=colour, ms=4, label=f"seed {seed}")
        ns = list(next(iter(by_seed.values()))["ns"])
        ax.set_xscale("log", base=4)
        ax.set_xticks(ns, [f"{n:,}" for n in ns])
        ax.set_xlabel("n, samples the judge picks from")
        ax.set_ylabel("mean reward of the pick")
        ax.set_ylim(0, 1.02)
        ax.set_title(title)
        ax.legend(loc="lower left")
        figures.append(fig)
    return figures


def judge_runs(by_seed: Mapping[int, Mapping]) -> list:
    """RL against the judge: proxy and gold at each checkpoint for ``rm`` and ``rm-kl``, seeds by line style.

    ``by_seed`` maps each seed to ``rm`` and ``kl``, each with ``steps``, ``proxy`` and ``gold``.
    """
    figures = []
    for key, title in (("proxy", "proxy: the judge's mean score"), ("gold", "gold: the exact verifier")):
        fig, ax = style.panel()
        for ls, (seed, runs) in zip(SEED_STYLES, by_seed.items()):
            for run, colour in (("rm", RUN), ("kl", PENALISED)):
                ax.plot(runs[run]["steps"], runs[run][key], ls=ls, color=colour, lw=1.6)
        ax.set_xlabel("RL step")
        ax.set_ylabel("mean reward of fresh samples")
        ax.set_ylim(0, 1.02)
        ax.set_title(title)
        figures.append(fig)
    handles = [
        plt.Line2D([], [], color=RUN),
        plt.Line2D([], [], color=PENALISED),
        *[plt.Line2D([], [], color=style.GREY, ls=ls) for ls in SEED_STYLES[: len(by_seed)]],
    ]
    labels = [
        "rm: the judge's probability as reward",
        "rm-kl: the same, with a KL penalty to base",
        *[f"seed {s}" for s in by_seed],
    ]
    return [*figures, _legend_panel(handles, labels, 1.5)]


def faults(by_seed: Mapping[int, Mapping], events: Sequence[Mapping]):
    """The ``faults`` run's batch reward per step on each seed, with the steps where the response policy acted.

    ``by_seed`` maps each seed to ``steps`` and ``reward``; ``events`` are one seed's interventions (``step``,
    ``kind``, ``metric``), the same on every seed. Each intervention is a dotted line, labelled with its cause
    above the panel, where no line can cross the label.
    """
    fig, ax = style.panel(style.PANEL[0], 3.4)
    for k, (seed, run) in enumerate(by_seed.items()):
        ax.plot(
            run["steps"],
            run["reward"],
            color=style.BLUE,
            lw=1,
            alpha=0.8,
            label="batch reward, one line per seed" if k == 0 else None,
        )
    top = ax.get_xaxis_transform()
    for k, e in enumerate(events):  # two rows of labels, so that neighbours never overlap
        ax.axvline(e["step"], color=style.RED, lw=1, ls=":")
        ax.text(
            e["step"],
            1.02 + 0.08 * (k % 2),
            CAUSES.get(e["metric"], e["kind"]),
            transform=top,
            ha="center",
            va="bottom",
            color=style.RED,
            fontsize=style.MIN_FONT,
        )
    ax.set_ylim(0, 1)
    ax.set_xlabel("RL step")
    ax.set_ylabel("batch reward (exact verifier)")
    ax.legend(loc="lower right")
    return fig
