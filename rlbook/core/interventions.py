"""The interventions a run injects around the RL step: chapter 5's planned faults and the guard of chapters 5 and 8.

:class:`Interventions` is the :class:`rlbook.core.rl.Hooks` of every book
run. Before scoring it plays the faults the run's configuration plans for
the step (:func:`rlbook.core.guard.faults_at`): a burst of malformed
answers, a verifier that fails or hangs, a loss made NaN. After scoring it
applies the response policy (:func:`rlbook.core.guard.guard_batch`): a batch
scored by a failing verifier or with too many malformed answers is not learnt
from, nor is one whose loss is not finite, and every such decision is
written to the run log. Too many excluded batches in a row abort the run
(:meth:`Interventions.aborts`).
"""

from __future__ import annotations

import time
from dataclasses import replace

import torch

from .config import RLConfig
from .events import aborted_update
from .guard import MALFORMED_BURST, FaultyVerifier, corrupt, faults_at, guard_batch, intervene, trailing_exclusions
from .runlog import Batch
from .sampling import Rollouts


def faulty(verifier, cfg: RLConfig, faults: set[str]):
    """The run's verifier, wrapped in a :class:`FaultyVerifier` when the step plans a verifier fault."""
    fault = next((f for f in faults if f.startswith("verifier")), None)
    return verifier if fault is None else FaultyVerifier(verifier, fault, cfg.guard.verifier_timeout_s)


class Interventions:
    """The faults and the guard of a run with configuration ``cfg``, writing what they do to the run ``log``.

    ``consecutive`` counts the excluded or paused batches in a row, from the
    log's own steps when a run resumes.
    """

    scored_at: float
    """When the last batch was scored (:meth:`keep`)."""

    def __init__(self, cfg: RLConfig, log: dict):
        self.cfg, self.log = cfg, log
        self.consecutive = trailing_exclusions(log)
        self.poisoned = self.kept = False
        self.scored_at = time.perf_counter()

    def before_scoring(self, step: int, rollouts: Rollouts, verifier, gen: torch.Generator) -> tuple[Rollouts, object]:
        """The step's planned faults: a malformed burst corrupts the batch, a verifier fault wraps the verifier."""
        faults = faults_at(self.cfg, step)
        self.poisoned = "nan_loss" in faults
        if "malformed_burst" in faults:
            rollouts = corrupt(rollouts, MALFORMED_BURST, gen)
        return rollouts, faulty(verifier, self.cfg, faults)

    def keep(self, batch: Batch, error: str | None) -> bool:
        """The response policy on the scored batch; its exclusions and pauses are logged.

        The time it is called at, :attr:`scored_at`, ends a step's sampling and
        scoring and starts its update: the run log times both (BENCHMARKS.md).
        """
        self.scored_at = time.perf_counter()
        self.kept = guard_batch(self.cfg, self.log, batch.step, batch.statuses, error)
        return self.kept

    def learnt(self, batch: Batch) -> Batch:
        """The batch to learn from, its advantages made NaN when the step plans a ``nan_loss`` fault."""
        return replace(batch, advantages=batch.advantages * float("nan")) if self.poisoned else batch

    def after(self, batch: Batch, stats: dict) -> None:
        """Exclude a batch whose loss was not finite (its update was not applied), and count the exclusions."""
        ok = self.kept
        if ok and not stats["finite"]:
            ok = False
            self.log["aborted_updates"].append(aborted_update(batch.step, "non-finite loss", str(stats["loss"])))
            intervene(
                self.log,
                batch.step,
                "batch excluded",
                "non-finite loss",
                "loss_is_finite",
                0.0,
                1.0,
                len(batch.statuses),
            )
        self.consecutive = 0 if ok else self.consecutive + 1
        if not ok:
            batch.used = torch.zeros_like(batch.used)
        stats["excluded"] = not ok

    def aborts(self, step: int) -> bool:
        """Whether the run stops at ``step``: too many excluded or paused batches in a row (then logged)."""
        if self.consecutive < self.cfg.guard.abort_after:
            return False
        self.log["status"] = "aborted"
        self.log["abort"] = {
            "step": step,
            "reason": f"{self.consecutive} consecutive batches excluded or paused",
            "threshold": self.cfg.guard.abort_after,
        }
        return True
