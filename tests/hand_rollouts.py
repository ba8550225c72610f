"""Hand-made rollouts of one multi-step prompt with the cell each lands in (tests of rlbook.analysis.disagreement)."""

from __future__ import annotations

from rlbook.analysis import disagreement as d
from rlbook.core.world import Task

P = Task((3, 4, 5)).prompt  # s1 = 7, s2 = 12
HAND = {
    "7,12#": ("accepted", 1.0, d.AGREE),
    "6,12#": ("accepted", 0.0, d.RIGHT_INVALID),  # right final, s1 wrong, and 12 != 6+5
    "12,12#": ("accepted", 0.0, d.RIGHT_INVALID),
    "7,13#": ("incorrect", 0.5, d.PARTIAL_CREDIT),  # step 1 valid, step 2 not
    "6,11#": ("incorrect", 0.5, d.PARTIAL_CREDIT),  # step 1 wrong, step 2 consistent with it
    "6,13#": ("incorrect", 0.0, d.AGREE),
    "7,12#3": ("malformed", 1.0, d.VALID_MALFORMED),  # text after the end mark
    "7,12,12#": ("malformed", 1.0, d.VALID_MALFORMED),  # a third number
    " 7,12#": ("malformed", 0.0, d.AGREE),  # step 1 unreadable, so step 2 cannot be checked
    "7,12,1": ("incomplete", 1.0, d.VALID_INCOMPLETE),
    "7,1": ("incomplete", 0.5, d.PARTIAL_CREDIT),
}
"""Completion -> (outcome status, process score, cell) for the prompt :data:`P`."""
