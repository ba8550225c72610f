"""DAPO's dynamic sampling: a batch of groups that all carry a learning signal, and what filling it cost (chapter 9).

A group whose answers all got the same reward has advantage 0 on every
answer: it costs its samples and teaches nothing. DAPO (Yu et al. 2025)
drops such groups and samples groups for more prompts until the batch is
full again. :func:`refilled` does that for at most ``cfg.refill_rounds``
rounds, each round sampling one new group for every missing one, on
prompts drawn (with replacement) from the training prompts by the run's
prompt stream. What it did not fill after its rounds stays empty, so the
batch may be smaller than asked (and when no group at all carried a
signal, the first batch is kept as sampled, every advantage 0). Every sampled answer is counted, dropped
or not, because that is the price the run pays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from . import advantages as adv_lib
from . import overlong
from .config import RLConfig
from .guard import score_guarded
from .policy import Policy
from .sampling import Rollouts, sample
from .world import Task


@dataclass
class Scored:
    """Sampled answers with their rewards and statuses, and how many answers were sampled to get them."""

    rollouts: Rollouts
    rewards: np.ndarray
    statuses: list[str]
    sampled: int


def informative(rewards: np.ndarray, group_size: int) -> torch.Tensor:
    """One bool per row: True where the row's group holds at least two different rewards."""
    silent = adv_lib.zero_variance_mask(torch.tensor(rewards, dtype=torch.float64).view(-1, group_size))
    return (~silent).repeat_interleave(group_size)


def joined(parts: list[Rollouts]) -> Rollouts:
    """The rows of ``parts`` one after another, as one batch (the first part's version and settings)."""
    first = parts[0]
    return Rollouts(
        [p for part in parts for p in part.prompts],
        torch.cat([part.prompt_ids for part in parts]),
        torch.cat([part.tokens for part in parts]),
        torch.cat([part.logprobs for part in parts]),
        torch.cat([part.mask for part in parts]),
        first.policy_version,
        dict(first.settings),
    )


def refilled(
    policy: Policy, cfg: RLConfig, picker, gen: torch.Generator, tasks: list[Task], verifier, first: Scored
) -> Scored:
    """``first`` without its silent groups, refilled with informative groups for new prompts (chapter 9).

    ``picker`` (a ``random.Random``) draws the new prompts and ``gen`` samples
    their answers: the run's own streams, so a run repeats itself. Returns
    ``first`` unchanged when ``cfg.refill_rounds`` is 0.
    """
    if not cfg.refill_rounds:
        return first
    size = cfg.group_size
    wanted = len(first.rollouts) // size
    keep = informative(first.rewards, size)
    parts = [_rows(first, keep)]
    have, sampled = int(keep.sum()) // size, first.sampled
    for _ in range(cfg.refill_rounds):
        if have >= wanted:
            break
        prompts = [t.prompt for t in picker.choices(tasks, k=wanted - have)]
        more = sample(policy, prompts, n=size, temperature=cfg.temperature, budget=cfg.budget, generator=gen)
        rewards, statuses, _ = score_guarded(verifier, more, cfg.guard.verifier_timeout_s)
        fresh = Scored(more, overlong.shaped(cfg, rewards, more), statuses, len(more))
        sampled += len(more)
        keep = informative(fresh.rewards, size)
        take = min(int(keep.sum()) // size, wanted - have)
        rows = keep.nonzero().flatten()[: take * size]
        parts.append(_rows(fresh, rows))
        have += take
    if not have:  # no group carried a signal: learn from the first batch as sampled (every advantage 0)
        return Scored(first.rollouts, first.rewards, first.statuses, sampled)
    return Scored(
        joined([p.rollouts for p in parts]),
        np.concatenate([p.rewards for p in parts]),
        [s for p in parts for s in p.statuses],
        sampled,
    )


def _rows(scored: Scored, rows: torch.Tensor) -> Scored:
    """The given rows of ``scored`` (a bool mask or indices)."""
    index = rows.nonzero().flatten() if rows.dtype == torch.bool else rows
    picked = index.tolist()
    return Scored(scored.rollouts.select(index), scored.rewards[picked], [scored.statuses[i] for i in picked], 0)
