"""One step of the book's RL: sample a group of answers per prompt, score them, turn rewards into advantages, update.

:func:`rl_step` is the whole algorithm of every run, in the order chapter 1
runs it by hand and chapter 3 derives it; :func:`update` is its token loss
and optimiser step, which chapter 3 dissects and chapter 4 varies. What a
run injects around the algorithm (chapter 5's planned faults before scoring,
the guard's keep, exclude or abort after a batch) comes in through
:class:`Hooks` (:mod:`rlbook.core.interventions`), and the loop that calls the
step, checkpoints and logs it is :mod:`rlbook.core.loop`. Every choice is a
field of :class:`RLConfig`, and the run record names each one.
"""

from __future__ import annotations

import copy
import random
from collections import deque
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import torch

from . import advantages as adv_lib
from . import losses, overlong
from . import rewards as rw
from .adamw import AdamW
from .config import RLConfig
from .guard import score_guarded
from .packing import ReferenceMemo, generated_logprobs
from .policy import Policy
from .refill import Scored, refilled
from .runlog import Batch, RLState, new_log
from .sampling import Rollouts, sample
from .train import adamw
from .world import Task

__all__ = [
    "Batch",
    "Hooks",
    "NoHooks",
    "RLConfig",
    "RLState",
    "StepState",
    "adamw",
    "credit",
    "generated_logprobs",
    "make_verifier",
    "new_log",
    "rl_step",
    "sample_groups",
    "update",
    "warmup_lr",
]


def make_verifier(cfg: RLConfig):
    """The verifier the run trains against."""
    return rw.get_verifier(cfg.verifier, cfg.verifier_version)


def credit(cfg: RLConfig, rewards: np.ndarray, statuses: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-rollout advantages and the rows the update uses, under the run's selection rule."""
    grouped = torch.tensor(rewards, dtype=torch.float32).view(-1, cfg.group_size) * cfg.reward_scale
    if cfg.selection == "accepted":
        # no baseline: the kept rows get their (scaled) reward as advantage, the rest leave the loss's mask
        used = torch.tensor([s == "accepted" for s in statuses])
        return used.float() * cfg.reward_scale, used
    advantages = adv_lib.compute_advantages(grouped, cfg.advantage).flatten()
    return advantages, torch.ones(len(statuses), dtype=torch.bool)


def update(
    policy: Policy,
    opt: AdamW | torch.optim.Optimizer,
    batch: Batch,
    cfg: RLConfig,
    ref_logp: torch.Tensor | None = None,
) -> dict:
    """One gradient step on a batch; returns the loss statistics.

    ``ref_logp`` (from :func:`reference_logprobs`) gives the KL to the
    reference: its k3 estimate is logged, and with ``cfg.kl_beta > 0`` the
    penalty by ``cfg.kl_estimator`` is added to the loss.
    A non-finite loss is not applied: the step is skipped and reported in
    ``stats["finite"] = False`` so the loop can record an intervention.
    """
    rollouts = batch.rollouts
    mask = rollouts.mask & batch.used[:, None]
    logp, entropy = generated_logprobs(policy, rollouts)
    loss, stats = losses.token_loss(
        cfg.loss,
        logp,
        rollouts.logprobs,
        batch.advantages,
        mask,
        how=cfg.aggregation,
        max_tokens=cfg.budget,
        **cfg.loss_params(),
    )
    kl = torch.zeros(())
    if ref_logp is not None:
        kl = losses.aggregate(losses.kl_k3(logp, ref_logp), mask, cfg.aggregation, cfg.budget)
        if cfg.kl_beta > 0:
            penalty = losses.kl_penalty(cfg.kl_estimator, logp, rollouts.logprobs, ref_logp)
            loss = loss + cfg.kl_beta * losses.aggregate(penalty, mask, cfg.aggregation, cfg.budget)
    stats.update(
        loss=float(loss.detach()),
        kl=float(kl.detach()),
        entropy=float(losses.aggregate(entropy.detach(), rollouts.mask)),
        finite=bool(torch.isfinite(loss)),
    )
    opt.zero_grad(set_to_none=True)
    if stats["finite"]:  # a NaN or infinite loss would write NaN into every weight: no step, the loop records it
        loss.backward()
        opt.step()
    return stats


def warmup_lr(peak: float, warmup: int, step: int) -> float:
    """The learning rate at RL step ``step`` (from 1): linear warm-up to ``peak`` over ``warmup`` steps, then ``peak``.

    Adam's first steps are otherwise full-sized, whatever the gradient. The
    RL loop, chapter 3's replays and the workshop's training all use it.
    """
    return peak * min(1.0, step / max(1, warmup))


class Hooks(Protocol):
    """What a run injects around :func:`rl_step`: the interventions of chapters 5 and 8.

    ``before_scoring`` may corrupt the sampled batch or wrap the verifier
    (a planned fault); ``keep`` says whether the scored batch may be learnt
    from (the guard); ``learnt`` may change the batch the update learns from
    (a poisoned loss); ``after`` sees the update's statistics, and may still
    exclude the batch (a non-finite loss).
    """

    def before_scoring(self, step: int, rollouts: Rollouts, verifier, gen: torch.Generator) -> tuple[Rollouts, object]:
        """The batch and verifier to score it with."""
        ...

    def keep(self, batch: Batch, error: str | None) -> bool:
        """Whether the update may learn from ``batch``, scored with ``error`` (None when the verifier answered)."""
        ...

    def learnt(self, batch: Batch) -> Batch:
        """The batch the update learns from."""
        ...

    def after(self, batch: Batch, stats: dict) -> None:
        """See the step's update statistics (empty when the batch was not kept)."""
        ...


class NoHooks:
    """No intervention: every batch is scored as sampled and learnt from (chapter 3 compares its loop with this)."""

    def before_scoring(self, step: int, rollouts: Rollouts, verifier, gen: torch.Generator) -> tuple[Rollouts, object]:
        return rollouts, verifier

    def keep(self, batch: Batch, error: str | None) -> bool:
        return True

    def learnt(self, batch: Batch) -> Batch:
        return batch

    def after(self, batch: Batch, stats: dict) -> None:
        return None


@dataclass
class StepState:
    """What the algorithm carries from one step to the next.

    The optimiser; the random streams of sampling (``gen``) and of the
    step's prompts (``picker``); the frozen reference policy of the KL term
    and the memo of its log-probabilities; and the pool of the last
    ``cfg.stale + 1`` batches, whose oldest the update learns from.
    """

    opt: AdamW
    gen: torch.Generator
    picker: random.Random
    reference: Policy
    memo: ReferenceMemo
    pool: deque

    @classmethod
    def fresh(cls, policy: Policy, cfg: RLConfig, seed: int) -> StepState:
        """The state before a run's first step: a new optimiser, streams seeded by ``seed``, ``policy`` as reference."""
        return cls(
            adamw(policy.parameters(), cfg.lr),
            torch.Generator().manual_seed(seed),
            random.Random(seed),
            copy.deepcopy(policy).eval(),
            ReferenceMemo(),
            deque(maxlen=cfg.stale + 1),
        )


def sample_groups(policy: Policy, cfg: RLConfig, state: StepState, tasks: list[Task]) -> Rollouts:
    """A group of ``cfg.group_size`` answers to each of the step's prompts (every task, or ``prompts_per_step``)."""
    chosen = tasks if not cfg.prompts_per_step else state.picker.sample(tasks, cfg.prompts_per_step)
    return sample(
        policy,
        [t.prompt for t in chosen],
        n=cfg.group_size,
        temperature=cfg.temperature,
        budget=cfg.budget,
        generator=state.gen,
    )


def rl_step(
    policy: Policy, cfg: RLConfig, state: StepState, tasks: list[Task], verifier, step: int, hooks: Hooks | None = None
) -> tuple[Batch, dict]:
    """RL step ``step`` (from 1) of ``policy``: returns the scored batch and the update's statistics."""
    hooks = hooks or NoHooks()
    for group in state.opt.param_groups:
        group["lr"] = warmup_lr(cfg.lr, cfg.warmup, step)
    # 1. sample a group of answers to each prompt
    rollouts, verifier = hooks.before_scoring(step, sample_groups(policy, cfg, state, tasks), verifier, state.gen)
    # 2. score every answer (DAPO's length penalty added, and its silent groups refilled, where the run asks)
    rewards, statuses, error = score_guarded(verifier, rollouts, cfg.guard.verifier_timeout_s)
    scored = Scored(rollouts, overlong.shaped(cfg, rewards, rollouts), statuses, len(rollouts))
    if error is None:
        scored = refilled(policy, cfg, state.picker, state.gen, tasks, verifier, scored)
    # 3. advantages: each reward against its group's
    advantages, used = credit(cfg, scored.rewards, scored.statuses)
    used = overlong.filtered(cfg, used, scored.rollouts)
    batch = Batch(step, scored.rollouts, scored.rewards, scored.statuses, advantages, used, scored.sampled)
    stats: dict = {}
    if hooks.keep(batch, error):
        # 4. the token loss of the batch learnt from (``cfg.stale`` steps back), 5. the optimiser's step
        state.pool.append(batch)
        learnt = hooks.learnt(state.pool[0])
        ref_logp = state.memo.logprobs(state.reference, learnt.rollouts)
        for _ in range(cfg.updates_per_batch):
            stats = update(policy, state.opt, learnt, cfg, ref_logp)
    hooks.after(batch, stats)
    return batch, stats
