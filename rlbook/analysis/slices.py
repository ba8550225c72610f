"""Evaluation by slices: an accuracy reported for each group of prompts, not only on average (chapter 8).

A *slice* is a set of prompts picked by a property of the prompt alone,
declared before the results are seen: here, whether the sum carries into a
second digit and how large its operands are. Reporting each slice with its
own interval shows where a policy is weak and where RL helped, which an
average over all prompts hides (Oakden-Rayner et al. 2020 call a weak
subgroup that an average hides *hidden stratification*).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rlbook.core.stats import difference_ci, mean_with_ci
from rlbook.core.world import Task

SLICES: dict[str, Callable[[Task], bool]] = {
    "no carry": lambda t: t.answer < 10,
    "carry": lambda t: t.answer >= 10,
    "both operands below 5": lambda t: max(t.operands) < 5,
    "an operand 5 or more": lambda t: max(t.operands) >= 5,
}
"""The slices of chapter 8 by name: a carry (the answer has two digits) and the size of the operands."""


def slice_masks(tasks: list[Task]) -> dict[str, np.ndarray]:
    """For each slice of :data:`SLICES`, which of ``tasks`` belong to it (a boolean array in task order)."""
    return {name: np.array([belongs(t) for t in tasks]) for name, belongs in SLICES.items()}


def slice_rows(tasks: list[Task], before, after, seed: int = 0) -> list[dict]:
    """Each slice's accuracy before and after, and the paired gain, each with a 95 % interval over its prompts.

    ``before`` and ``after`` hold one expected reward per task (the same
    tasks, in the same order). Rows: ``slice``, ``prompts`` (how many),
    ``before``, ``after`` and ``gain`` (:class:`~rlbook.core.stats.Estimate`).
    The first row is every task together.
    """
    before, after = np.asarray(before, dtype=float), np.asarray(after, dtype=float)
    if before.shape != (len(tasks),) or after.shape != (len(tasks),):
        raise ValueError(f"one rate per task in each, got {before.shape} and {after.shape} for {len(tasks)} tasks")
    masks = {"all": np.ones(len(tasks), dtype=bool), **slice_masks(tasks)}
    return [
        {
            "slice": name,
            "prompts": int(mask.sum()),
            "before": mean_with_ci(before[mask], seed=seed),
            "after": mean_with_ci(after[mask], seed=seed),
            "gain": difference_ci(after[mask], before[mask], paired=True, seed=seed),
        }
        for name, mask in masks.items()
        if mask.any()
    ]


def never_right(tasks: list[Task], before, after) -> list[Task]:
    """The tasks whose every sample was wrong both before and after: rate 0 at both ends."""
    return [t for t, b, a in zip(tasks, before, after) if b == 0 and a == 0]
