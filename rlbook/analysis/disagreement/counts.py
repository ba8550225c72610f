"""Counting judged rollouts: the disagreement matrix, its named cells, bounded samples and summaries (ch2)."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, cast

import numpy as np

from rlbook.core import rewards as rw
from rlbook.core.world import parse_prompt

from .verdicts import (
    AGREE,
    DISAGREEMENTS,
    OUTCOME_ROWS,
    PARTIAL_CREDIT,
    RIGHT_INVALID,
    VALID_INCOMPLETE,
    VALID_MALFORMED,
    Judged,
    judge,
    logged_rollouts,
)

if TYPE_CHECKING:
    from rlbook.core.world import Task
    from rlbook.runs import Run


def process_columns(judged: list[Judged]) -> list[float]:
    """The distinct process scores that occur, highest first (for two steps: 1.0, 0.5, 0.0)."""
    n_steps = max((len(j.steps) for j in judged), default=2)
    return [k / n_steps for k in range(n_steps, -1, -1)]


def matrix(judged: list[Judged]) -> tuple[np.ndarray, list[str], list[float]]:
    """Counts of outcome status (rows, :data:`OUTCOME_ROWS`) against process score (columns).

    Returns ``(counts, rows, columns)``; ``counts[i, j]`` is how many rollouts
    got status ``rows[i]`` and process score ``columns[j]`` (ch2).
    """
    columns = process_columns(judged)
    counts = np.zeros((len(OUTCOME_ROWS), len(columns)), dtype=int)
    for j in judged:
        counts[OUTCOME_ROWS.index(j.status), columns.index(j.process)] += 1
    return counts, list(OUTCOME_ROWS), columns


def kind_counts(judged: list[Judged]) -> dict[str, int]:
    """How many rollouts fall in each named cell: the disagreements, partial credit and agreement (ch2)."""
    counts = {name: 0 for name in (*DISAGREEMENTS, PARTIAL_CREDIT, AGREE)}
    for j in judged:
        counts[j.kind] += 1
    return counts


def bounded_sample(judged: list[Judged], kind: str, k: int = 3, seed: int = 0) -> list[Judged]:
    """At most ``k`` distinct rollouts of one named cell, drawn at random with ``seed`` (ch2).

    Distinct means a different (prompt, completion) pair: a common mistake
    repeated many times is shown once. The draw keeps the sample's order.
    """
    seen, unique = set(), []
    for j in judged:
        if j.kind == kind and (j.prompt, j.completion) not in seen:
            seen.add((j.prompt, j.completion))
            unique.append(j)
    if len(unique) <= k:
        return unique
    picked = sorted(random.Random(seed).sample(range(len(unique)), k))
    return [unique[i] for i in picked]


def rate(judged: list[Judged], kind: str) -> float:
    """Share of the rollouts that fall in the named cell ``kind`` (ch2)."""
    return sum(j.kind == kind for j in judged) / len(judged) if judged else 0.0


def kind_rate_over_training(run: Run, kind: str = RIGHT_INVALID, every: int = 1) -> tuple[list[int], list[float]]:
    """At every ``every``-th training step, the share of the run's own rollouts in cell ``kind`` (ch2).

    Read from the rollout log (``run.rollouts``), so it costs no sampling.
    """
    steps, rates = [], []
    for step_log in run.rollouts[every - 1 :: every]:
        prompts, completions = logged_rollouts(step_log)
        steps.append(step_log["step"])
        rates.append(rate(judge(prompts, completions), kind))
    return steps, rates


def right_invalid_summary(judged: list[Judged]) -> dict[str, int]:
    """What the rollouts with a right answer through an invalid step wrote as their first sum (ch2).

    ``total`` such rollouts; ``off_by_one``: the first sum is a + b +- 1. An accepted
    answer has a well-formed first sum, and it cannot be a + b (the second
    step would then be valid too), so every one of them has a wrong first sum.
    """
    cases = [j for j in judged if j.kind == RIGHT_INVALID]
    # an accepted answer's prompt is a task's: parse_prompt returns its Task, never None
    firsts = [(int(j.completion.split(",")[0]), cast("Task", parse_prompt(j.prompt))) for j in cases]
    return {"total": len(cases), "off_by_one": sum(abs(s1 - task.steps[0]) == 1 for s1, task in firsts)}


def partial_credit_summary(judged: list[Judged]) -> dict[str, int]:
    """Which step earned the half credit of the rejected rollouts with process score 0.5 (ch2).

    ``first_valid``: a right first sum followed by a slip; ``second_valid``:
    a wrong first sum carried forward consistently.
    """
    cases = [j for j in judged if j.kind == PARTIAL_CREDIT and len(j.steps) == 2]
    return {
        "total": len(cases),
        "first_valid": sum(j.steps == (True, False) for j in cases),
        "second_valid": sum(j.steps == (False, True) for j in cases),
    }


def valid_end_summary(judged: list[Judged]) -> dict[str, int]:
    """How the rollouts with every step valid but no reward ended (ch2).

    ``malformed`` and ``incomplete`` count the two cells; ``extra_number``
    those that went on to write a third number after the two steps.
    """
    cases = [j for j in judged if j.kind in (VALID_MALFORMED, VALID_INCOMPLETE)]
    return {
        "malformed": sum(j.status == "malformed" for j in cases),
        "incomplete": sum(j.status == "incomplete" for j in cases),
        "extra_number": sum(len(j.completion.split(rw.EOT)[0].split(",")) > len(j.steps) for j in cases),
    }
