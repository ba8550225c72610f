"""Chapter 11's figure (chapters/11-process-reward-model.qmd), drawn from its facts (:mod:`rlbook.book.process`).

Three judges of the same answers, as pickers and as rewards: best-of-n
accuracy against n for each judge, the held-out accuracy of the three RL
runs over their steps, and ``prm``'s reward beside its accuracy on the same
training prompts. One line per seed, the legend in a panel of its own, in
the house style (:mod:`rlbook.figures.style`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from matplotlib.lines import Line2D

from rlbook.figures import style

JUDGE_COLOURS = {
    "outcome": style.INK,
    "process-exact": style.TEAL,
    "prm-min": style.ORANGE,
    "prm-product": style.PURPLE,
}
"""The pickers: the outcome verifier (the reference, in ink), the exact process rule, the scorer's two aggregates."""
RUN_COLOURS = {"worked": style.INK, "process-exact": style.TEAL, "prm": style.ORANGE}
"""The RL runs by reward, in the judges' colours."""
JUDGE_WORDS = {
    "outcome": "outcome verifier",
    "process-exact": "exact process rule",
    "prm-min": "scorer, smallest step (prm-min)",
    "prm-product": "scorer, product of steps (prm-product)",
}
"""How the legend names each picker."""
RUN_WORDS = {
    "worked": "worked (outcome verifier)",
    "process-exact": "process-exact (exact process rule)",
    "prm": "prm (scorer, smallest step)",
}
"""How the legend names each run, by its reward."""


def _dot(colour: str) -> Line2D:
    """A legend's line with a dot, in ``colour``."""
    return Line2D([], [], color=colour, marker="o", ms=3)


def judges(best_of_n: Mapping[int, Mapping[str, Sequence[float]]], ns: Sequence[int], runs: Mapping) -> list:
    """Three panels and a legend: best-of-n per judge, held-out accuracy of each run, and ``prm``'s reward
    beside its accuracy on the training prompts.

    ``best_of_n`` maps a seed to each judge's accuracies at ``ns``; ``runs``
    maps a run (``worked``, ``process-exact``, ``prm``) to a seed's curve
    (``steps``, ``accuracy``, ``reward``, ``train_accuracy``).
    """
    picking, ax = style.panel()
    for by_judge in best_of_n.values():
        for judge, colour in JUDGE_COLOURS.items():
            ax.plot(ns, by_judge[judge], "o-", color=colour, ms=3, lw=1.1, alpha=0.85)
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(ns), [str(n) for n in ns])
    ax.set_xlabel("answers per prompt (n)")
    ax.set_ylabel("held-out accuracy of the pick")
    ax.set_title("best-of-n, picked by each judge")
    ax.set_ylim(-0.02, 1.02)
    training, bx = style.panel()
    for run, colour in RUN_COLOURS.items():
        for curve in runs[run].values():
            bx.plot(curve["steps"], curve["accuracy"], "o-", color=colour, ms=3, lw=1.1, alpha=0.85)
    bx.set_xlabel("RL step")
    bx.set_ylabel("held-out accuracy")
    bx.set_title("RL with each judge as reward")
    bx.set_ylim(-0.02, 1.02)
    hacked, cx = style.panel()
    for curve in runs["prm"].values():
        cx.plot(curve["steps"], curve["reward"], "^-", color=style.ORANGE, ms=4, lw=1.1, alpha=0.85)
        cx.plot(curve["steps"], curve["train_accuracy"], "s--", color=style.ORANGE, ms=3, lw=1.1, alpha=0.85)
    cx.set_xlabel("RL step")
    cx.set_ylabel("reward or accuracy, training prompts")
    cx.set_title("prm: its reward and its accuracy")
    cx.set_ylim(-0.02, 1.02)
    legend, lx = style.panel(style.PANEL[0], 3.4)
    lx.axis("off")
    groups = (
        ("Picking (first panel):", [(JUDGE_WORDS[j], _dot(c)) for j, c in JUDGE_COLOURS.items()]),
        ("RL runs (second panel):", [(RUN_WORDS[r], _dot(c)) for r, c in RUN_COLOURS.items()]),
        (
            "prm (third panel):",
            [
                ("its reward: the scorer's score", Line2D([], [], color=style.ORANGE, marker="^", ms=4)),
                ("its accuracy: the verifier's", Line2D([], [], color=style.ORANGE, marker="s", ms=3, ls="--")),
            ],
        ),
    )
    handles, labels = [], []
    for title, entries in groups:
        handles.append(Line2D([], [], ls="none"))  # a group's heading: text, no line
        labels.append(title)
        handles += [line for _, line in entries]
        labels += [words for words, _ in entries]
    lx.legend(handles, labels, loc="center", title="One line per seed.")
    return [picking, training, hacked, legend]
