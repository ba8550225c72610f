"""Outcome-only against process-shaped RL: both runs' held-out accuracy and step validity over seeds (ch2)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from rlbook.runs import Run


def final_eval(run: Run) -> dict[str, float]:
    """Held-out final accuracy and step validity at a run's first and last checkpoints (ch2).

    Accuracy is the expected exact-verifier reward on the held-out prompts
    (``heldout_expected_reward``, 16 samples per prompt at T = 1); step
    validity is the mean process score of the same samples.
    """
    first, last = run.evals[0], run.evals[-1]
    return {
        "seed": run.seed,
        "start_accuracy": first["heldout_expected_reward"],
        "end_accuracy": last["heldout_expected_reward"],
        "start_validity": first["heldout_step_validity"],
        "end_validity": last["heldout_step_validity"],
        "end_greedy": last["heldout_greedy_accuracy"],
    }


def compare(runs_by_name: dict[str, list[Run]]) -> dict[str, list[dict[str, float]]]:
    """:func:`final_eval` of every seed of every run, keyed by run name (ch2)."""
    return {name: [final_eval(r) for r in runs] for name, runs in runs_by_name.items()}


def spread(values: list[float]) -> tuple[float, float, float]:
    """Mean, minimum and maximum of a metric over seeds."""
    return float(np.mean(values)), float(np.min(values)), float(np.max(values))


def paired(table: dict[str, list[dict[str, float]]], first: str, second: str) -> list[tuple[dict, dict]]:
    """The rows of two runs of a :func:`compare` table, paired by seed; ValueError when their seeds differ (ch2)."""
    a, b = (sorted(table[name], key=lambda r: r["seed"]) for name in (first, second))
    if [r["seed"] for r in a] != [r["seed"] for r in b]:
        raise ValueError(f"runs {first!r} and {second!r} have different seeds")
    return list(zip(a, b))


def wins(table: dict[str, list[dict[str, float]]], better: str, worse: str, key: str) -> int:
    """On how many seeds run ``better`` ends with a strictly higher ``key`` than run ``worse`` (ch2)."""
    return sum(a[key] > b[key] for a, b in paired(table, better, worse))


def comparison_claims(
    table: dict[str, list[dict[str, float]]], shaped: str = "process-shaped", outcome: str = "process-outcome"
) -> dict[str, float | int]:
    """The numbers chapter 2's comparison text is written from: seed counts and means over seeds.

    ``shaped_validity_wins``/``shaped_accuracy_wins``: seeds on which the
    shaped run ends higher; ``outcome_validity_fell``/``shaped_validity_fell``:
    seeds on which a run ends with lower step validity than it started;
    ``<run>_<metric>``: the mean over seeds of a :func:`final_eval` field;
    ``validity_gap``/``accuracy_gap`` (with ``_min``/``_max``): shaped minus
    outcome-only at the end, mean and range over seeds.
    """
    claims: dict[str, float | int] = {
        "seeds": len(table[shaped]),
        "shaped_validity_wins": wins(table, shaped, outcome, "end_validity"),
        "shaped_accuracy_wins": wins(table, shaped, outcome, "end_accuracy"),
    }
    for key in ("validity", "accuracy"):
        gaps = [b[f"end_{key}"] - a[f"end_{key}"] for a, b in paired(table, outcome, shaped)]
        claims[f"{key}_gap"], claims[f"{key}_gap_min"], claims[f"{key}_gap_max"] = spread(gaps)
    for label, name in (("outcome", outcome), ("shaped", shaped)):
        claims[f"{label}_validity_fell"] = sum(r["end_validity"] < r["start_validity"] for r in table[name])
        claims[f"{label}_accuracy_rose"] = sum(r["end_accuracy"] > r["start_accuracy"] for r in table[name])
        for key in ("start_accuracy", "end_accuracy", "start_validity", "end_validity"):
            claims[f"{label}_{key}"] = spread([r[key] for r in table[name]])[0]
    return claims


def eval_curve(run: Run, key: str) -> tuple[list[int], list[float]]:
    """A held-out metric at every checkpoint of a run (``heldout_expected_reward``, ``heldout_step_validity``)."""
    return [e["step"] for e in run.evals], [e[key] for e in run.evals]
