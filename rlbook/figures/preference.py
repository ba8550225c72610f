"""Chapter 10's figure (chapters/10-preferences-dpo.qmd), drawn from its facts (:mod:`rlbook.book.preference`).

Held-out accuracy of ``main`` against the answers it had sampled, with
``dpo``'s after training at the answers its pairs were made from, and
``dpo``'s over its own steps: one line per seed, the legend in a panel of
its own, in the house style (:mod:`rlbook.figures.style`).
"""

from __future__ import annotations

from collections.abc import Mapping

from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter

from rlbook.figures import style

COLOURS = {"main": style.INK, "dpo": style.ORANGE}
"""Online RL (``main``, the reference, in ink) and DPO."""

Curves = Mapping[int, Mapping]


def versus_online(main: Curves, dpo: Curves, sampled: int) -> list:
    """Two panels and a legend: accuracy per answer sampled (``main``'s curve, ``dpo``'s end), and ``dpo``'s curve.

    ``main`` and ``dpo`` map a seed to its curve (``answers`` or ``steps``,
    and ``accuracy``); ``sampled`` is the number of answers DPO's pairs were
    made from, sampled before it trains.
    """
    online, ax = style.panel()
    for curve in main.values():
        ax.plot(curve["answers"], curve["accuracy"], "o-", color=COLOURS["main"], ms=3, lw=1.1, alpha=0.85)
    for curve in dpo.values():
        ax.plot([sampled], [curve["end"]], "D", color=COLOURS["dpo"], ms=6, alpha=0.9)
    ax.set_xlabel("answers sampled")
    ax.set_ylabel("held-out accuracy")
    ax.set_title("at the same answers sampled")
    ax.set_ylim(-0.02, 1.02)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:,.0f}"))
    offline, bx = style.panel()
    for curve in dpo.values():
        bx.plot(curve["steps"], curve["accuracy"], "o-", color=COLOURS["dpo"], ms=3, lw=1.1, alpha=0.85)
    bx.set_xlabel("DPO step")
    bx.set_ylabel("held-out accuracy")
    bx.set_title("dpo over its steps")
    bx.set_ylim(-0.02, 1.02)
    legend, lx = style.panel(style.PANEL[0], 1.2)
    lx.axis("off")
    lx.legend(
        [
            Line2D([], [], color=COLOURS["main"], marker="o", ms=3),
            Line2D([], [], color=COLOURS["dpo"], marker="D", ms=5, ls="none"),
            Line2D([], [], color=COLOURS["dpo"], marker="o", ms=3),
        ],
        ["main, one line per seed", "dpo after training, one per seed", "dpo over its steps, one line per seed"],
        loc="center",
    )
    return [online, offline, legend]
