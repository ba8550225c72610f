"""A finished run as the chapters read it: :class:`Run`, and :class:`RunLike`, what every kind of run offers.

The type sits below the code that makes it (:mod:`rlbook.runs.training`) and
the code that describes it (:mod:`rlbook.runs.records`), so neither imports
the other for it. The TRL bridge's runs (:class:`rlbook.trl.spec.TRLRun`)
offer the same reading, so the book's audit and figures take either.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from rlbook.core.policy import Policy


class RunLike(Protocol):
    """What a run offers its readers: its steps' metrics, its rollouts and evaluations, one metric over the steps."""

    @property
    def metrics(self) -> list[dict]: ...

    @property
    def rollouts(self) -> list[dict]: ...

    @property
    def evals(self) -> list[dict]: ...

    def metric(self, key: str) -> list: ...


def metric_over_steps(metrics: list[dict], key: str) -> list:
    """One metric over every logged step, None where a step did not log it (so positions stay steps)."""
    return [m.get(key) for m in metrics]


@dataclass
class Run:
    """A finished run: its record, per-step log, checkpoints and rollouts."""

    name: str
    seed: int
    threads: int
    record: dict
    log: dict
    path: Path
    cached: bool = False
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)

    @property
    def metrics(self) -> list[dict]:
        return self.log["metrics"]

    @property
    def evals(self) -> list[dict]:
        return self.log["evals"]

    @property
    def rollouts(self) -> list[dict]:
        return self.log["rollouts"]

    @property
    def steps(self) -> list[int]:
        """The steps that have a checkpoint."""
        return [c["step"] for c in self.log["checkpoints"]]

    def policy(self, step: int | None = None) -> Policy:
        """The policy saved at checkpoint ``step`` (default: the last)."""
        if step is None:
            return self.log["checkpoints"][-1]["checkpoint"].load()
        for c in self.log["checkpoints"]:
            if c["step"] == step:
                return c["checkpoint"].load()
        raise ValueError(f"run {self.name!r} has no checkpoint at step {step}; it has {self.steps}")

    def metric(self, key: str) -> list:
        """One metric over the run's steps, None where a step did not log it (:func:`metric_over_steps`)."""
        return metric_over_steps(self.metrics, key)

    def eval_at(self, step: int | None = None) -> dict:
        """The independent evaluation at checkpoint ``step`` (default: the last)."""
        return self.evals[-1] if step is None else next(e for e in self.evals if e["step"] == step)
