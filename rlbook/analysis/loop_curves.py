"""Chapter 3's REINFORCE loop trained from ``base`` on one seed, four ways: the costly part of chapter 3's facts.

The loop of :mod:`rlbook.analysis.reinforce` as the chapter sets it beside
``main`` ("A loop you can read whole"), and trained again with every reward
moved up, with and without its baseline ("Why subtract a baseline"). Each
training returns its held-out curve at ``main``'s checkpoints.
:func:`measure` is one seed's part of the chapter's facts, which
:func:`rlbook.book.gradient.seed_part` keeps in the facts cache keyed on this
module: the audit reads a seed in several groups (all ten, its triple, the
seed alone) and the prefetch computes each seed as a task of its own, so each
seed's loops train once.
"""

from __future__ import annotations

from rlbook.analysis import reinforce
from rlbook.runs import MAIN, load

SHIFT, LARGE_SHIFT = 1.0, 3.0
"""The offsets chapter 3 adds to every reward when it trains the loop without a baseline."""
VARIANTS = {
    "loop": (0.0, True),
    "baseline": (SHIFT, True),
    "shift": (SHIFT, False),
    "large_shift": (LARGE_SHIFT, False),
}
"""The four trainings, by name: (offset added to every reward, whether the group baseline is subtracted)."""


def measure(seed: int) -> dict[str, dict[str, list]]:
    """The held-out curve (``{"steps", "heldout"}``) of each of :data:`VARIANTS`, from ``base`` of ``seed`` with
    ``main``'s settings (chapter 3)."""
    return {
        name: reinforce.train_and_evaluate(load("base", seed).policy(), seed, MAIN, offset=offset, baseline=baseline)
        for name, (offset, baseline) in VARIANTS.items()
    }
