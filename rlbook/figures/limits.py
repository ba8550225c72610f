"""Chapter 5's figures (chapters/05-reward-limits.qmd), drawn from its facts (:mod:`rlbook.book.limits`).

Each function takes plain data from the chapter's facts and returns one
figure per panel (a list for several), in the house style
(:mod:`rlbook.figures.style`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
from matplotlib.patches import Patch

from rlbook.figures import style

TASK, LOOPHOLE, HELDOUT = style.SERIES[2], style.SERIES[1], style.SERIES[0]
"""The three things the reward-hack panels draw: reward the exact verifier agrees with, reward only the loophole
pays, and accuracy on the held-out sums."""
RUN, PENALISED = style.SERIES[1], style.SERIES[2]
"""``rm`` and ``rm-kl`` in the judge figures."""
SEED_STYLES = ("-", "--", ":")
CAUSES = {
    "verifier_error_rate": "verifier down",
    "malformed_rate": "malformed burst",
    "loss_is_finite": "non-finite loss",
}
"""What each intervention of the ``faults`` run answered, by the metric that triggered it."""
"""Line styles that tell the seeds of one run apart where a panel draws several runs."""


def _legend_panel(handles: list, labels: list[str], height: float = 1.1):
    """A panel that holds only a legend, so that no legend covers data."""
    fig, ax = style.panel(style.PANEL[0], height)
    ax.axis("off")
    ax.legend(handles, labels, loc="center", ncol=1)
    return fig


def reward_hack(by_seed: Mapping[int, Mapping]) -> list:
    """The reward hack, one panel per seed: the batch reward split into its task and loophole parts (stacked), and
    held-out accuracy under the exact verifier at each checkpoint (markers); a dotted line marks the takeover.

    ``by_seed`` maps each seed to ``steps``, ``task``, ``loophole``, ``eval_steps``, ``heldout`` and ``takeover``.
    """
    figures = []
    for seed, p in by_seed.items():
        fig, ax = style.panel()
        ax.stackplot(p["steps"], p["task"], p["loophole"], colors=[TASK, LOOPHOLE], alpha=0.85, lw=0)
        ax.plot(p["eval_steps"], p["heldout"], "o-", color=HELDOUT, ms=4, lw=1.4)
        if p["takeover"] is not None:
            ax.axvline(p["takeover"], color=style.GREY, lw=1, ls=":")
        ax.set_xlim(min(p["steps"][0], p["eval_steps"][0]), p["steps"][-1])
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("RL step")
        ax.set_ylabel("reward or accuracy")
        ax.set_title(f"exploit, seed {seed}")
        figures.append(fig)
    handles = [
        Patch(color=TASK),
        Patch(color=LOOPHOLE),
        plt.Line2D([], [], color=HELDOUT, marker="o", ms=4),
        plt.Line2D([], [], color=style.GREY, ls=":"),
    ]
    labels = [
        "batch reward the exact verifier also pays",
        "batch reward paid only through the loophole",
        "held-out accuracy (exact verifier)",
        "takeover: the loophole pays for over half",
    ]
    return [*figures, _legend_panel(handles, labels, 1.3)]


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
