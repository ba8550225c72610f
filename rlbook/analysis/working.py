"""Written working under an outcome-only reward (chapter 7): what the worked world's runs show, seed by seed.

The worked world (:class:`rlbook.core.world.WorkedTask`) lets the policy
answer ``#47+38=`` directly (``85#``) or with its working
(``7+8=15,4+3+1=8;85#``), and its verifier reads only the final number. Its
runs: ``worked`` (RL from ``worked-base``, which SFT showed both styles),
``worked-direct`` (the control: SFT showed direct answers only and the
budget of 4 characters leaves no room for working) and ``worked-rediscover``
(the same direct-only SFT, with room for the working). This module reads
from their logs:

- per checkpoint, on the held-out prompts sampled at T = 1
  (:func:`checkpoint_curve`): accuracy, the share of worked answers, the
  mean answer length, the accuracy of each style, and the entropy of the
  first answer character and of the style choice
  (:mod:`rlbook.core.styles`);
- per RL step, on the step's own training batch (:func:`step_curve`): the
  share of worked answers, the mean length and the reward;
- before and after RL (:func:`before_after`), and how much of the gain in
  accuracy came from writing the working more often and how much from
  writing it better (:func:`gain_split`).

Chapter 7 draws its figures from these through :mod:`rlbook.book.working`
and :mod:`rlbook.figures.working`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from rlbook.core.styles import worked_rows
from rlbook.runs import Run

WORKED_RUNS = ("worked", "worked-direct", "worked-rediscover")
"""Chapter 7's RL runs: the worked world, the direct-only control, and direct-only SFT with room for the working."""


@dataclass(frozen=True)
class Point:
    """The held-out measurements of one checkpoint of a worked-world run (T = 1, the run's ``eval_n`` samples per prompt).

    ``accuracy_worked`` and ``accuracy_direct`` are None when no answer
    was written in that style. Entropies are in nats.
    """

    step: int
    accuracy: float
    share: float
    length: float
    accuracy_worked: float | None
    accuracy_direct: float | None
    first_char_entropy: float
    style_entropy: float
    p_worked: float
    samples: int


def point(entry: dict) -> Point:
    """The :class:`Point` of one checkpoint evaluation of a worked-world run's log (``heldout_styles`` and ``heldout_choice``)."""
    styles, choice = entry["heldout_styles"], entry["heldout_choice"]
    samples = styles["worked"] + styles["direct"]
    if samples == 0:
        raise ValueError(f"the evaluation at step {entry['step']} holds no answers")

    def rate(style: str) -> float | None:
        return styles[f"{style}_accepted"] / styles[style] if styles[style] else None

    return Point(
        entry["step"],
        entry["heldout_expected_reward"],
        styles["worked"] / samples,
        styles["mean_length"],
        rate("worked"),
        rate("direct"),
        choice["first_char"],
        choice["style"],
        choice["p_worked"],
        samples,
    )


def checkpoint_curve(run: Run) -> list[Point]:
    """The held-out :class:`Point` of every checkpoint of a worked-world run, in step order."""
    if not run.evals or "heldout_styles" not in run.evals[0]:
        raise ValueError(f"run {run.name!r} is not a worked-world run: its evaluations have no answer styles")
    return [point(e) for e in run.evals]


@dataclass(frozen=True)
class StepCurve:
    """Per RL step, over that step's training batch (its prompts, sampled at T = 1): worked share, mean length, reward."""

    steps: np.ndarray
    share: np.ndarray
    length: np.ndarray
    reward: np.ndarray


def step_curve(run: Run) -> StepCurve:
    """A worked-world run's training batches, step by step, read from the rollouts its log stores."""
    rows = run.rollouts
    if not rows:
        raise ValueError(f"run {run.name!r} stores no rollouts")
    return StepCurve(
        np.array([r["step"] for r in rows]),
        np.array([float(worked_rows(r["tokens"], r["lengths"]).float().mean()) for r in rows]),
        np.array([float(r["lengths"].float().mean()) for r in rows]),
        np.array([float(r["rewards"].mean()) for r in rows]),
    )


def before_after(run: Run) -> tuple[Point, Point]:
    """The held-out measurements at the first checkpoint (the policy RL starts from) and at the last."""
    curve = checkpoint_curve(run)
    return curve[0], curve[-1]


@dataclass(frozen=True)
class GainSplit:
    """A change in accuracy split in two: ``switch``, from the change in how often each style is written
    (at the first policy's accuracy in each style), and ``execution``, from the change in each style's accuracy
    (at the second policy's shares). They add up to ``total``."""

    total: float
    switch: float
    execution: float


def gain_split(before: Point, after: Point) -> GainSplit:
    """Split ``after.accuracy - before.accuracy`` into the style switch and better execution (:class:`GainSplit`).

    With shares s and per-style accuracies a, accuracy is the sum over
    styles of s a, so its change is the sum of (s' - s) a plus the sum of
    s' (a' - a). A style never written after contributes nothing to the
    second sum; a style never written before, but written after, leaves its
    accuracy before unknown, and the split undefined (ValueError).
    """
    switch = execution = 0.0
    for style, share_before, share_after in (
        ("worked", before.share, after.share),
        ("direct", 1 - before.share, 1 - after.share),
    ):
        was, now = getattr(before, f"accuracy_{style}"), getattr(after, f"accuracy_{style}")
        if was is None:
            if share_after > 0:
                raise ValueError(f"no {style} answer before, so the accuracy of that style before is unknown")
            continue
        switch += (share_after - share_before) * was
        if share_after > 0:
            execution += share_after * (now - was)
    # Shares are counts over the same number of samples, so the parts add up to the change (up to rounding).
    return GainSplit(after.accuracy - before.accuracy, switch, execution)


def seed_rows(runs: Iterable[Run]) -> list[dict]:
    """One row per run and seed, with every figure chapter 7 states: before and after RL, and the gain's split.

    ``gain_from_switch`` and ``gain_from_execution`` are None where the split
    is undefined (:func:`gain_split`). ``working_pays_before`` is how much
    more often a worked answer than a direct one was right before RL (None
    when a style was never written): what an outcome-only reward can see of
    the working. Where it was small, ``worked-rediscover`` barely raised its
    share of worked answers on the draws measured while the world was built.
    """
    rows = []
    for run in runs:
        first, last = before_after(run)
        parts: tuple[float | None, float | None]
        try:
            split = gain_split(first, last)
            parts = (split.switch, split.execution)
        except ValueError:
            parts = (None, None)
        rows.append(
            {
                "run": run.name,
                "seed": run.seed,
                "steps": last.step,
                "share_before": first.share,
                "share_after": last.share,
                "length_before": first.length,
                "length_after": last.length,
                "accuracy_before": first.accuracy,
                "accuracy_after": last.accuracy,
                "accuracy_worked_before": first.accuracy_worked,
                "accuracy_worked_after": last.accuracy_worked,
                "accuracy_direct_before": first.accuracy_direct,
                "accuracy_direct_after": last.accuracy_direct,
                "first_char_entropy_before": first.first_char_entropy,
                "first_char_entropy_after": last.first_char_entropy,
                "style_entropy_before": first.style_entropy,
                "style_entropy_after": last.style_entropy,
                "p_worked_before": first.p_worked,
                "p_worked_after": last.p_worked,
                "gain_from_switch": parts[0],
                "gain_from_execution": parts[1],
                "working_pays_before": None
                if first.accuracy_worked is None or first.accuracy_direct is None
                else first.accuracy_worked - first.accuracy_direct,
            }
        )
    return rows
