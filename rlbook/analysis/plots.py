"""The colours of the book's named runs, and the house style re-exported from :mod:`rlbook.figures.style`.

The analyses that still draw their own figures read the style from here;
the chapters moved onto :mod:`rlbook.book` draw with :mod:`rlbook.figures`.
"""

from __future__ import annotations

import matplotlib.pyplot as plt

from rlbook.figures.style import BLUE, GREY, ORANGE, PURPLE, RED, STATUS_COLOURS, TEAL, figure, style

RUN_COLOURS = {
    "base": GREY,
    "main": BLUE,
    "pg": "#8fb3d9",
    "ppo": "#d4589a",
    "cispo": PURPLE,
    "ppo-kl": RED,
    "seq-mean": "#17a2b8",
    "group-std": "#c9a227",
    "reward-x10": "#2f2f2f",
    "stale": "#a0522d",
    "accepted-only": "#6b8e23",
    "exploit": "#8b1e3f",
    "faults": "#9c6ade",
    "abort": "#555555",
    "process-base": "#9aa5b1",
    "process-outcome": ORANGE,
    "process-shaped": TEAL,
    "rm": "#e07b00",
    "rm-kl": "#2e8b57",
    "ppo-kl-ratio": "#f28e2b",
    "rloo": "#59a14f",
    "exploit-slow": "#d37295",
    "worked-base": "#7d8b99",
    "worked-direct-base": "#b5bcc3",
    "worked": "#1b7f6b",
    "worked-direct": "#c2571a",
    "worked-rediscover": "#5b3f8c",
}
"""One colour per named run, the same in every figure of the book (runs drawn side by side differ in colour)."""


__all__ = ["BLUE", "GREY", "ORANGE", "PURPLE", "RED", "RUN_COLOURS", "STATUS_COLOURS", "TEAL", "figure", "plt", "style"]
