"""The unit of every audit of chapters 5 and 6: a batch of rollouts as the verifier judged it (:class:`AuditBatch`).

A batch comes either from fresh samples (:func:`from_rollouts`) or from the
per-step rollouts a run stored (:func:`from_stored`), so the same definitions
apply to both.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlbook.core import rewards as rw
from rlbook.core.sampling import Rollouts
from rlbook.core.world import decode


@dataclass
class AuditBatch:
    """One batch of rollouts as the verifier judged it (chapters 5 and 6).

    ``prompts``, ``completions`` and ``statuses`` have one entry per rollout;
    the rows of one prompt form a contiguous group of ``group_size``.
    ``rewards`` are the rewards the statuses came with.
    """

    prompts: list[str]
    completions: list[str]
    statuses: list[str]
    rewards: np.ndarray
    group_size: int
    step: int | None = None

    def __len__(self) -> int:
        return len(self.completions)

    @property
    def tokens(self) -> int:
        """Generated tokens in the batch (the world is character-level: one character, one token)."""
        return sum(len(c) for c in self.completions)

    def rescored(self, verifier) -> AuditBatch:
        """The same rollouts judged by another verifier (e.g. the exact one for a fail-open run)."""
        rewards, statuses = rw.score(verifier, self.prompts, self.completions)
        return AuditBatch(self.prompts, self.completions, statuses, rewards, self.group_size, self.step)


def from_rollouts(rollouts: Rollouts, verifier) -> AuditBatch:
    """An audit batch from freshly sampled :class:`~rlbook.core.sampling.Rollouts`, scored by ``verifier``."""
    completions = rollouts.completions()
    rewards, statuses = rw.score(verifier, rollouts.prompts, completions)
    return AuditBatch(list(rollouts.prompts), completions, statuses, rewards, rollouts.group_size)


def from_stored(stored: dict, verifier=None) -> AuditBatch:
    """An audit batch from one step of a run's stored rollouts (``run.rollouts[i]``).

    The statuses are those the run's own verifier gave, unless ``verifier`` is
    given, in which case the completions are judged again by it.
    """
    group_size = len(stored["tokens"]) // len(stored["prompts"])
    prompts = [p for p in stored["prompts"] for _ in range(group_size)]
    completions = [decode(row[:n]) for row, n in zip(stored["tokens"].tolist(), stored["lengths"].tolist())]
    statuses = [rw.STATUSES[i] for i in stored["statuses"].tolist()]
    batch = AuditBatch(
        prompts, completions, statuses, stored["rewards"].numpy().astype(float), group_size, stored["step"]
    )
    return batch.rescored(verifier) if verifier is not None else batch
