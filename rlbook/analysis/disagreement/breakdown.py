"""The single-step verdict breakdown: how each checkpoint's samples were judged, and the right sums rejected (ch2)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlbook.core import rewards as rw
from rlbook.core.evaluate import EvalResult, evaluate
from rlbook.core.world import BUDGET, Task

if TYPE_CHECKING:
    from rlbook.runs import Run


def first_number(text: str) -> str:
    """The first run of ASCII digits anywhere in ``text`` ('' when there is none)."""
    digits = ""
    for ch in text:
        if ch in rw.ASCII_DIGITS:
            digits += ch
        elif digits:
            break
    return digits


def right_number_rejected(result: EvalResult) -> int:
    """How many rejected single-step samples still contain the right sum as their first number (ch2).

    The pretrained policy continues a prompt for 3+4 as ``' =7\n'``: the
    sum is there, written as the end of an equation, but there is no
    end-of-turn mark, so the verifier says *incomplete*. Such a sample is a
    failure of format, not of arithmetic.
    """
    count = 0
    for task, row, statuses in zip(result.tasks, result.completions, result.statuses):
        for completion, status in zip(row, statuses):
            if status != "accepted" and first_number(completion) == str(task.answer):
                count += 1
    return count


def breakdown(result: EvalResult) -> dict[str, float | int]:
    """A verdict breakdown of one evaluation: expected reward, count per status, right-but-rejected (ch2)."""
    counts = result.status_counts()
    row: dict[str, float | int] = {"samples": int(result.rewards.size), "expected_reward": result.expected_reward}
    row.update({s: counts.get(s, 0) for s in rw.STATUSES})
    row["right_number_rejected"] = right_number_rejected(result)
    return row


def format_share(row: dict[str, float | int]) -> float:
    """Share of a breakdown's rejected samples that failed on format: malformed or incomplete (ch2)."""
    rejected = row["samples"] - row["accepted"]
    return (row["malformed"] + row["incomplete"]) / rejected if rejected else 0.0


def checkpoint_breakdowns(
    run: Run, tasks: list[Task], n: int = 32, budget: int = BUDGET, seed: int = 0
) -> tuple[dict[str, EvalResult], dict[str, dict[str, float | int]]]:
    """Evaluate a base run's checkpoints (0: pretrained, 1: after SFT) and break each down by verdict (ch2).

    Returns the evaluations and their :func:`breakdown` rows, both keyed by
    "pretrained" and "after SFT".
    """
    results = {
        label: evaluate(run.policy(step), tasks, n=n, budget=budget, seed=seed)
        for label, step in (("pretrained", 0), ("after SFT", 1))
    }
    return results, {label: breakdown(result) for label, result in results.items()}
