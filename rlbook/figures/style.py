"""The book's house style for figures: one palette, one look, panels sized to be read on any screen.

Verdict colours are the same everywhere (accepted is always teal, incorrect
always orange...), so a reader learns them once. A figure is made of panels
of :data:`PANEL` size: on a wide screen the panels of one figure sit side by
side across the text column and its margin; on a phone they stack, each as
wide as the screen, so no text is ever drawn smaller than :data:`MIN_FONT`
points at the size it is shown (the site's browser tests measure it).
"""
from __future__ import annotations

import matplotlib.pyplot as plt

BLUE, TEAL, ORANGE, PURPLE, GREY, RED = "#24527a", "#3a9188", "#d97745", "#7655a6", "#5f6b76", "#b8403a"
LIGHT_GREY = "#b9c0c7"
"""For what a figure groups rather than shows one by one (the rarest answers of a sum)."""
STATUS_COLOURS = {"accepted": TEAL, "incorrect": ORANGE, "malformed": PURPLE, "incomplete": GREY,
                  "unverifiable": RED, "duplicate": BLUE}
"""Colour of each verifier status (and of duplicates in the exploration audit)."""
VERDICT_WORDS = {"accepted": "accepted", "incorrect": "wrong value", "malformed": "malformed",
                 "incomplete": "stopped by the budget", "unverifiable": "unverifiable", "duplicate": "duplicate"}
"""What figures, tables and the workshop call each verifier status: one vocabulary for the whole book."""

SERIES = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9")
"""Colours for the series of one panel, in order (Okabe and Ito's palette, told apart with any colour vision):
a panel draws at most five or six series; past that, split it or label the lines directly."""

PANEL = (4.6, 3.2)
"""Width and height of one panel in inches: 442 px wide as an SVG, two side by side fill about 900 px."""
MIN_FONT = 9
"""The smallest text of any figure, in points: tick labels. Labels and titles are larger."""


def style() -> None:
    """Apply the house style to every later figure (called by each chapter's first cell)."""
    plt.rcParams.update({
        "figure.figsize": PANEL, "figure.dpi": 110, "axes.spines.top": False, "axes.spines.right": False,
        "axes.grid": True, "grid.alpha": 0.3, "font.size": 10, "axes.titlesize": 10.5, "axes.labelsize": 10,
        "xtick.labelsize": MIN_FONT, "ytick.labelsize": MIN_FONT, "legend.fontsize": MIN_FONT,
        "legend.frameon": False, "savefig.bbox": "tight",
    })


def panel(width: float = PANEL[0], height: float = PANEL[1], **kwargs):
    """One new panel (a figure with one axes) in the house style: ``(fig, ax)``."""
    return plt.subplots(1, 1, figsize=(width, height), **kwargs)


def figure(width: float = 7, height: float = 3.6, ncols: int = 1, **kwargs):
    """A new figure with ``ncols`` axes side by side, in the house style (figures not yet split into panels)."""
    return plt.subplots(1, ncols, figsize=(width, height), **kwargs)
