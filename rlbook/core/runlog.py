"""What an RL run carries between steps and keeps: a step's batch, the run log, and the point a run resumes from.

The loop itself is :func:`rlbook.core.loop.train_rl`; the runs' cache
(:mod:`rlbook.runs.training`) saves an :class:`RLState` at every checkpoint
and loads it to resume a run exactly where it stopped (chapter 5).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from . import rewards as rw
from .packing import ReferenceMemo
from .sampling import Rollouts


@dataclass
class Batch:
    """One step's rollouts together with the credit derived from them (kept apart from the record)."""

    step: int
    rollouts: Rollouts
    rewards: np.ndarray
    statuses: list[str]
    advantages: torch.Tensor
    used: torch.Tensor
    sampled: int | None = None
    """How many answers the step sampled to get these rows (DAPO's dropped groups included); None: as many as it holds."""


@dataclass
class RLState:
    """Everything needed to continue a run exactly where it stopped."""

    step: int
    policy: dict
    optimizer: dict
    generator: torch.Tensor
    pool: list
    log: dict
    picker: tuple | None = None
    reference: ReferenceMemo | None = None

    def save(self, path) -> None:
        """Write the state to ``path`` as plain data (tensors, numbers, strings): :meth:`load` reads it without pickle.

        Not through ``dataclasses.asdict``: it would first deep-copy the whole
        log, which cost more than writing it.
        """
        torch.save(
            {
                "step": self.step,
                "policy": self.policy,
                "optimizer": self.optimizer,
                "generator": self.generator,
                "pool": [_batch_data(b) for b in self.pool],
                "log": self.log,
                "picker": self.picker,
                "reference": None
                if self.reference is None
                else {"index": self.reference.index, "values": self.reference.values},
            },
            path,
        )

    @classmethod
    def load(cls, path) -> RLState:
        """The state :meth:`save` wrote; loading runs no code from the file (``weights_only=True``)."""
        raw = torch.load(path, weights_only=True)
        expected = {"step", "policy", "optimizer", "generator", "pool", "log", "picker", "reference"}
        if not isinstance(raw, dict) or set(raw) != expected:
            raise ValueError(f"a resume state has the fields {sorted(expected)}")
        memo = raw["reference"]
        return cls(
            raw["step"],
            raw["policy"],
            raw["optimizer"],
            raw["generator"],
            [_batch_from_data(b) for b in raw["pool"]],
            raw["log"],
            raw["picker"],
            None if memo is None else ReferenceMemo(memo["index"], memo["values"]),
        )


def _batch_data(batch: Batch) -> dict:
    """A batch as plain data, for :meth:`RLState.save`."""
    r = batch.rollouts
    return {
        "step": batch.step,
        "rewards": torch.from_numpy(np.asarray(batch.rewards, dtype=np.float64)),
        "statuses": list(batch.statuses),
        "advantages": batch.advantages,
        "used": batch.used,
        "rollouts": {
            "prompts": list(r.prompts),
            "prompt_ids": r.prompt_ids,
            "tokens": r.tokens,
            "logprobs": r.logprobs,
            "mask": r.mask,
            "policy_version": r.policy_version,
            "settings": dict(r.settings),
        },
    }


def _batch_from_data(data: dict) -> Batch:
    """The batch :func:`_batch_data` wrote."""
    return Batch(
        data["step"],
        Rollouts(**data["rollouts"]),
        data["rewards"].numpy(),
        data["statuses"],
        data["advantages"],
        data["used"],
    )


def new_log() -> dict:
    """The run's growing log: metrics per step, evaluations, checkpoints, rollouts and events."""
    return {
        "metrics": [],
        "evals": [],
        "checkpoints": [],
        "rollouts": [],
        "interventions": [],
        "aborted_updates": [],
        "status": "running",
        "wall_seconds": 0.0,
    }


def store(batch: Batch) -> dict:
    """The compact per-step rollout record kept in the run's cache."""
    r = batch.rollouts
    return {
        "step": batch.step,
        "prompts": r.prompts[:: r.group_size],
        "tokens": r.tokens.to(torch.uint8),
        "lengths": r.lengths.to(torch.uint8),
        "logprobs": r.logprobs.clone(),
        "rewards": torch.tensor(batch.rewards, dtype=torch.float32),
        "statuses": torch.tensor([rw.STATUSES.index(s) for s in batch.statuses], dtype=torch.uint8),
        "policy_version": r.policy_version,
        "used": batch.used.clone(),
    }
