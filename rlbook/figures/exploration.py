"""Chapter 6's figures (chapters/06-exploration-rollouts.qmd), drawn from its facts (:mod:`rlbook.book.exploration`).

Each function takes plain data from the chapter's facts and returns one
figure per panel (a list for several), in the house style
(:mod:`rlbook.figures.style`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.patches import Patch

from rlbook.figures import style

CATEGORIES = (
    ("accepted", "a new right answer", style.STATUS_COLOURS["accepted"]),
    ("duplicate_accepted", "a right answer repeated", style.SERIES[0]),
    ("incorrect", "a new wrong value", style.STATUS_COLOURS["incorrect"]),
    ("duplicate_incorrect", "a wrong value repeated", style.LIGHT_GREY),
    ("unusable", "malformed or stopped by the budget", style.STATUS_COLOURS["malformed"]),
)
"""What the exploration audit's figures stack: key, label and colour (malformed and budget-stopped answers, the
two the verifier cannot judge, share one band)."""
BASE, MAIN = style.GREY, style.BLUE
"""``base`` and ``main`` in the before-and-after figure: the book's colours for them."""
RUNS = {"main": style.BLUE, "stale": style.SERIES[1]}
"""The on-policy and the stale run in the stale-rollout figure."""


def _log_k(ax, ks: Sequence[int]) -> None:
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(ks), [str(k) for k in ks])
    ax.minorticks_off()


def pass_at_k(rows: Sequence[Mapping]) -> list:
    """pass@k against k, and the share of mixed groups against the group size, one line per temperature.

    ``rows`` are one seed's, per temperature: ``temperature``, ``ks``, ``pass_at_k`` and ``mixed``.
    """
    figures = []
    for key, label, xlabel in (
        ("pass_at_k", "pass@k", "samples k"),
        ("mixed", "share of groups with some right and some wrong", "group size G"),
    ):
        fig, ax = style.panel()
        for colour, row in zip(style.SERIES, rows):
            ax.plot(row["ks"], row[key], "o-", color=colour, ms=4, label=f"T = {row['temperature']:g}")
        _log_k(ax, rows[0]["ks"])
        ax.set_xlabel(xlabel)
        ax.set_ylabel(label if key == "pass_at_k" else "mixed groups")
        ax.set_ylim(0, 1.02)
        ax.set_title(label)
        ax.legend(loc="lower right")
        figures.append(fig)
    return figures


BAND_ALPHA = 0.75
"""The opacity of the stacked shares: at full strength a panel filled with colour was as bright in the dark scheme
as in the light one."""


def _stack(row: Mapping) -> list[float]:
    return [row["malformed"] + row["budget-stopped"] if key == "unusable" else row[key] for key, _, _ in CATEGORIES]


def _legend_panel(height: float = 1.5):
    fig, ax = style.panel(style.PANEL[0], height)
    ax.axis("off")
    ax.legend(
        [Patch(color=c, alpha=BAND_ALPHA) for _, _, c in CATEGORIES],
        [label for _, label, _ in CATEGORIES],
        loc="center",
    )
    return fig


def coverage(rows: Sequence[Mapping]) -> list:
    """The exploration audit of fresh samples per temperature: what the answers are (stacked), and how many of a
    second round's answers are new, labelled with the tokens a rollout costs."""
    labels = [f"{row['temperature']:g}" for row in rows]
    fig, ax = style.panel()
    bottom = np.zeros(len(rows))
    for k, (_, _, colour) in enumerate(CATEGORIES):
        values = np.array([_stack(row)[k] for row in rows])
        ax.bar(labels, values, bottom=bottom, color=colour, width=0.7, alpha=BAND_ALPHA)
        bottom += values
    ax.set_xlabel("sampling temperature T")
    ax.set_ylabel("share of the rollouts")
    ax.set_ylim(0, 1)
    ax.set_title("what a batch holds")
    fig2, ax2 = style.panel()
    bars = ax2.bar(labels, [row["novel_share"] for row in rows], color=style.SERIES[2], width=0.7)
    ax2.bar_label(bars, [f"{row['tokens_per_rollout']:.1f} tokens" for row in rows], fontsize=style.MIN_FONT)
    ax2.set_xlabel("sampling temperature T")
    ax2.set_ylabel("new answers in round 2")
    ax2.set_ylim(0, 1.1)
    ax2.set_title("novel share, and cost per rollout")
    return [fig, fig2, _legend_panel()]


def composition(flow: Mapping, novel: Mapping[int, Sequence[float]], steps: Sequence[int]) -> list:
    """What ``main``'s batches are made of, step by step (stacked, one seed), and the share of each batch that was
    never sampled for its prompt before (every seed, from the second step on)."""
    fig, ax = style.panel()
    rows = [dict(zip(flow, values)) for values in zip(*flow.values())]
    ax.stackplot(
        flow["step"],
        *np.array([_stack(r) for r in rows]).T,
        colors=[c for _, _, c in CATEGORIES],
        lw=0,
        alpha=BAND_ALPHA,
    )
    ax.set_xlim(flow["step"][0], flow["step"][-1])
    ax.set_ylim(0, 1)
    ax.set_xlabel("RL step")
    ax.set_ylabel("share of the rollouts")
    ax.set_title("what main's batches hold")
    fig2, ax2 = style.panel()
    for k, (seed, shares) in enumerate(novel.items()):
        ax2.plot(
            steps[1:],
            shares[1:],
            color=style.SERIES[2],
            lw=1,
            alpha=0.85,
            label="one line per seed" if k == 0 else None,
        )
    ax2.set_yscale("log")
    style.plain_log_ticks(ax2)
    ax2.set_xlabel("RL step")
    ax2.set_ylabel("novel share of the batch")
    ax2.set_title("answers never sampled before")
    ax2.legend(loc="upper right")
    return [fig, fig2, _legend_panel()]


def before_after(by_seed: Mapping[int, Mapping], ks: Sequence[int]) -> list:
    """pass@k of ``base`` and ``main`` at equal budgets (one line per seed each), and ``main`` minus ``base``."""
    fig, ax = style.panel()
    for k, p in enumerate(by_seed.values()):
        ax.plot(ks, p["before"], "o--", color=BASE, ms=3.5, label="base, before RL" if k == 0 else None)
        ax.plot(ks, p["after"], "o-", color=MAIN, ms=3.5, label="main, after RL" if k == 0 else None)
    _log_k(ax, ks)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("samples k")
    ax.set_ylabel("pass@k, held-out sums")
    ax.set_title("pass@k at equal budgets")
    ax.legend(loc="lower right")
    fig2, ax2 = style.panel()
    for k, p in enumerate(by_seed.values()):
        ax2.plot(ks, p["gap"], "o-", color=MAIN, ms=3.5, label="one line per seed" if k == 0 else None)
    ax2.axhline(0, color=style.GREY, lw=0.8)
    _log_k(ax2, ks)
    ax2.set_xlabel("samples k")
    ax2.set_ylabel("pass@k, main minus base")
    ax2.set_title("main's lead over base")
    ax2.legend(loc="upper right")
    return [fig, fig2]


def stale(by_seed: Mapping[int, Mapping]) -> list:
    """``main`` against ``stale`` on every seed: held-out reward at each checkpoint, and the clipped share per step."""
    figures = []
    for key, ylabel, title in (
        ("heldout", "held-out expected reward", "held-out sums"),
        ("clip", "share of tokens clipped", "clipped importance ratios"),
    ):
        fig, ax = style.panel()
        for k, runs in enumerate(by_seed.values()):
            for name, colour in RUNS.items():
                run = runs[name]
                if key == "heldout":
                    ax.plot(
                        run["eval_steps"],
                        run["heldout"],
                        "o-",
                        color=colour,
                        ms=3,
                        lw=1,
                        label=name if k == 0 else None,
                    )
                else:
                    clip = [np.nan if c is None else c for c in run["clip"]]
                    ax.plot(range(1, len(clip) + 1), clip, color=colour, lw=0.9, label=name if k == 0 else None)
        ax.set_xlabel("RL step")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.legend(loc="lower right" if key == "heldout" else "upper right")
        figures.append(fig)
    return figures
