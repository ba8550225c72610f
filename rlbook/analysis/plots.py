"""The book's house style for figures.

One palette and one look for every chapter: verdict colours are the same
everywhere (accepted is always teal, incorrect always orange...), so a reader
learns them once.
"""
from __future__ import annotations

import matplotlib.pyplot as plt

BLUE, TEAL, ORANGE, PURPLE, GREY, RED = "#24527a", "#3a9188", "#d97745", "#7655a6", "#5f6b76", "#b8403a"
STATUS_COLOURS = {"accepted": TEAL, "incorrect": ORANGE, "malformed": PURPLE, "incomplete": GREY,
                  "unverifiable": RED, "duplicate": BLUE}
"""Colour of each verifier status (and of duplicates in the exploration audit)."""

RUN_COLOURS = {
    "base": GREY, "main": BLUE, "pg": "#8fb3d9", "ppo": "#d4589a", "cispo": PURPLE, "ppo-kl": RED,
    "seq-mean": "#17a2b8", "group-std": "#c9a227", "reward-x10": "#2f2f2f", "stale": "#a0522d",
    "accepted-only": "#6b8e23", "exploit": "#8b1e3f", "faults": "#9c6ade", "abort": "#555555",
    "process-base": "#9aa5b1", "process-outcome": ORANGE, "process-shaped": TEAL,
    "rm": "#e07b00", "rm-kl": "#2e8b57", "ppo-kl-ratio": "#f28e2b", "rloo": "#59a14f", "exploit-slow": "#d37295",
    "worked-base": "#7d8b99", "worked-direct-base": "#b5bcc3", "worked": "#1b7f6b", "worked-direct": "#c2571a",
    "worked-rediscover": "#5b3f8c",
}
"""One colour per named run, the same in every figure of the book (runs drawn side by side differ in colour)."""


def style() -> None:
    """Apply the house style to every later figure (called by each chapter's first cell)."""
    plt.rcParams.update({
        "figure.figsize": (7, 3.6), "figure.dpi": 110, "axes.spines.top": False, "axes.spines.right": False,
        "axes.grid": True, "grid.alpha": 0.3, "font.size": 10, "axes.titlesize": 11, "legend.frameon": False,
        "savefig.bbox": "tight",
    })


def figure(width: float = 7, height: float = 3.6, ncols: int = 1, **kwargs):
    """A new figure with ``ncols`` axes side by side, in the house style."""
    return plt.subplots(1, ncols, figsize=(width, height), **kwargs)
