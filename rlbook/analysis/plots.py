"""The house style re-exported from :mod:`rlbook.figures.style`, for the analyses that still draw figures.

The analyses that still draw their own figures read the style from here;
the chapters moved onto :mod:`rlbook.book` draw with :mod:`rlbook.figures`.
"""

from __future__ import annotations

import matplotlib.pyplot as plt

from rlbook.figures.style import BLUE, GREY, ORANGE, PURPLE, RED, STATUS_COLOURS, TEAL, figure, style

__all__ = ["BLUE", "GREY", "ORANGE", "PURPLE", "RED", "STATUS_COLOURS", "TEAL", "figure", "plt", "style"]
