"""Chapter 7's figures (chapters/07-written-working.qmd), drawn from its facts (:mod:`rlbook.book.working`).

Each function takes plain data from the chapter's facts, the held-out
measurements of every checkpoint of the worked world's RL runs on every seed,
and returns one figure per panel in the house style (:mod:`rlbook.figures.style`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from matplotlib.lines import Line2D

from rlbook.figures import style

RUNS = {"worked": style.BLUE, "worked-direct": style.GREY, "worked-rediscover": style.ORANGE}
"""The worked world's RL runs and their colours: the run, its direct-only control, and direct-only SFT with room."""
PANELS = (
    ("share", "share of worked answers", "worked answers"),
    ("length", "characters per answer", "mean answer length"),
    ("accuracy", "held-out accuracy", "held-out accuracy"),
)
"""What :func:`curves` draws, one panel each: the field of a checkpoint, the axis label and the title."""
ENTROPY = ("style_entropy", "entropy (nats)", "entropy of the style choice")
"""What :func:`choice` draws: the binary entropy of writing a worked answer, averaged over the held-out sums."""


def _lines(ax, by_run: Mapping[str, Mapping[int, Mapping]], field: str) -> None:
    """One line per run and seed through the run's checkpoints, in the run's colour."""
    for name, colour in RUNS.items():
        for curve in by_run.get(name, {}).values():
            ax.plot(curve["step"], curve[field], "o-", color=colour, ms=3, lw=1.1, alpha=0.85)
    ax.set_xlabel("RL step")


def _legend_panel(names: Sequence[str], height: float = 1.2):
    """A panel holding only the legend: the runs' colours, one line per seed."""
    fig, ax = style.panel(style.PANEL[0], height)
    ax.axis("off")
    ax.legend(
        [Line2D([], [], color=RUNS[n], marker="o", ms=3) for n in names],
        list(names),
        loc="center",
        title="one line per seed",
    )
    return fig


def curves(by_run: Mapping[str, Mapping[int, Mapping]]) -> list:
    """Share of worked answers, mean answer length and held-out accuracy over the RL steps, then the legend.

    ``by_run`` maps each run to its seeds' curves, each with ``step`` and the
    fields of :data:`PANELS`.
    """
    figures = []
    for field, ylabel, title in PANELS:
        fig, ax = style.panel()
        _lines(ax, by_run, field)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        if field != "length":
            ax.set_ylim(-0.02, 1.02)
        figures.append(fig)
    return figures + [_legend_panel([n for n in RUNS if n in by_run])]


def choice(by_run: Mapping[str, Mapping[int, Mapping]]) -> list:
    """The entropy of the style choice over the RL steps, one line per run and seed, with its legend."""
    field, ylabel, title = ENTROPY
    fig, ax = style.panel()
    _lines(ax, by_run, field)
    ax.set_ylim(bottom=0)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    return [fig, _legend_panel([n for n in RUNS if n in by_run])]
