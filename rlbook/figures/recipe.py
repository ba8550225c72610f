"""Chapter 9's figures (chapters/09-modern-recipe.qmd), drawn from its facts (:mod:`rlbook.book.recipe`).

Each function takes plain data from the chapter's facts, one curve per run
and seed, and returns one figure per panel in the house style
(:mod:`rlbook.figures.style`), the legend in a panel of its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter

from rlbook.figures import style

CLIPPED = {"ppo": style.INK, "clip-higher": style.ORANGE, "gspo": style.BLUE}
"""The world of sums' runs of 4 updates per batch: ``ppo`` (the reference, in ink) and its two variants."""
SAMPLED = {"main": style.INK, "dynamic": style.TEAL}
"""``main`` and ``main`` with dynamic sampling."""
WORKED = {"worked": style.INK, "worked-seq-mean": style.PURPLE}
"""The worked world's run, every token alike, and each answer's tokens averaged first."""
TIGHT = {"worked-tight": style.INK, "worked-tight-filter": style.BLUE, "worked-tight-shape": style.ORANGE}
"""The worked world under the tight budget: as it is, filtered, shaped."""

Curves = Mapping[str, Mapping[int, Mapping]]


def _panel(curves: Curves, colours: Mapping[str, str], x: str, y: str, xlabel: str, ylabel: str, title: str):
    """One panel: a line per run and seed through ``(curve[x], curve[y])``, in the run's colour."""
    fig, ax = style.panel()
    for name, colour in colours.items():
        for curve in curves.get(name, {}).values():
            ax.plot(curve[x], curve[y], "o-", color=colour, ms=3, lw=1.1, alpha=0.85)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if y != "length":
        ax.set_ylim(-0.02, 1.02)
    return fig


def _legend(colours: Mapping[str, str], names: Sequence[str]):
    """A panel holding only the legend: the runs' colours, one line per seed."""
    fig, ax = style.panel(style.PANEL[0], 1.2)
    ax.axis("off")
    ax.legend(
        [Line2D([], [], color=colours[n], marker="o", ms=3) for n in names],
        list(names),
        loc="center",
        title="one line per seed",
    )
    return fig


def clipping(curves: Curves) -> list:
    """Held-out accuracy over the RL steps of ``ppo``, ``clip-higher`` and ``gspo``, then the legend."""
    fig = _panel(curves, CLIPPED, "steps", "accuracy", "RL step", "held-out accuracy", "three clipped losses")
    return [fig, _legend(CLIPPED, [n for n in CLIPPED if n in curves])]


def sampling(curves: Curves) -> list:
    """Held-out accuracy of ``main`` and ``dynamic`` against the answers each had sampled, then the legend."""
    fig = _panel(
        curves, SAMPLED, "answers", "accuracy", "answers sampled", "held-out accuracy", "accuracy per answer sampled"
    )
    fig.axes[0].xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:,.0f}"))
    return [fig, _legend(SAMPLED, [n for n in SAMPLED if n in curves])]


def _share_and_accuracy(curves: Curves, colours: Mapping[str, str]) -> list:
    """The share of worked answers and held-out accuracy of the runs of ``colours``, then their legend."""
    return [
        _panel(curves, colours, "steps", "share", "RL step", "share of worked answers", "worked answers"),
        _panel(curves, colours, "steps", "accuracy", "RL step", "held-out accuracy", "held-out accuracy"),
        _legend(colours, [n for n in colours if n in curves]),
    ]


def aggregation(curves: Curves) -> list:
    """``worked`` and ``worked-seq-mean``: the share of worked answers and held-out accuracy, then the legend."""
    return _share_and_accuracy(curves, WORKED)


def budget(curves: Curves) -> list:
    """The three runs under the tight budget: the share of worked answers and held-out accuracy, then the legend."""
    return _share_and_accuracy(curves, TIGHT)
