"""The RL loop: sample groups, score them, turn rewards into advantages, update.

Chapter 1 runs one step of it by hand; chapter 3 dissects the update;
chapter 4 injects faults and watches the response policy act; chapter 5
reads the record it leaves. Every choice is a field of :class:`RLConfig`,
and the run record names each one.
"""

from __future__ import annotations

import copy
import random
import time
from collections import deque
from dataclasses import dataclass, replace

import numpy as np
import torch

from . import advantages as adv_lib
from . import losses, styles
from . import rewards as rw
from .adamw import AdamW
from .config import RLConfig
from .evaluate import eval_seed, evaluate, greedy_accuracy, step_validity
from .events import aborted_update
from .guard import (
    MALFORMED_BURST,
    FaultyVerifier,
    corrupt,
    faults_at,
    guard_batch,
    intervene,
    score_guarded,
    trailing_exclusions,
)
from .packing import ReferenceMemo, generated_logprobs
from .policy import Checkpoint, Policy, weights_hash
from .progress import progress
from .runlog import Batch, RLState, new_log, store
from .sampling import Rollouts, sample
from .train import adamw
from .world import split


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


def rollout_metrics(cfg: RLConfig, batch: Batch) -> dict:
    """Per-step measurements of the sampled batch (reward, zero-variance groups, composition).

    A group is zero-variance when its rewards are all equal, and all right
    when that shared reward is the full 1 (a shaped reward pays less for a
    wrong answer): ``zero_variance_all_right + zero_variance_all_wrong``
    is ``zero_variance_frac``.
    """
    grouped = torch.tensor(batch.rewards, dtype=torch.float32).view(-1, cfg.group_size)
    split_zero = adv_lib.zero_variance_split(grouped, right_from=1.0)
    n = len(batch.statuses)
    share = {s: batch.statuses.count(s) / n for s in rw.STATUSES}
    return {
        "reward_mean": float(grouped.mean()),
        "reward_std": float(grouped.std()),
        "zero_variance_frac": adv_lib.zero_variance_fraction(grouped),
        "zero_variance_all_right": split_zero["all_right"],
        "zero_variance_all_wrong": split_zero["all_wrong"],
        "completion_len": float(batch.rollouts.lengths.float().mean()),
        **{f"{s}_rate": v for s, v in share.items()},
        "rollouts_used": int(batch.used.sum()),
    }


def checkpoint_eval(policy: Policy, cfg: RLConfig, seed: int, step: int, verifier=None) -> dict:
    """Independent evaluation at a checkpoint: exact verifier, held-out and train prompts.

    ``train_reward`` is the training reward (``verifier``, default the run's
    own) of the train prompts' samples. The sampler's seed depends only on
    (seed, step), so evaluating never disturbs the training run's random stream.
    In the worked world (chapter 7) it also records the held-out answers'
    styles, lengths and accuracy by style (:func:`rlbook.core.styles.style_summary`)
    and the policy's style choice (:func:`rlbook.core.styles.choice_entropy`).
    """
    exact = rw.get_verifier("exact")
    heldout = evaluate(
        policy, split("heldout", cfg.world), n=cfg.eval_n, budget=cfg.budget, verifier=exact, seed=eval_seed(seed, step)
    )
    train = evaluate(
        policy,
        split("train", cfg.world),
        n=cfg.eval_n,
        budget=cfg.budget,
        verifier=exact,
        seed=eval_seed(seed, step) + 1,
    )
    assert train.rollouts is not None  # evaluate() always attaches the rollouts it sampled
    train_rewards, _, error = score_guarded(
        verifier or make_verifier(cfg), train.rollouts, cfg.guard.verifier_timeout_s
    )
    entry = {
        "step": step,
        "heldout_expected_reward": heldout.expected_reward,
        "heldout_per_prompt": heldout.per_prompt.round(5).tolist(),
        "heldout_greedy_accuracy": greedy_accuracy(policy, split("heldout", cfg.world), cfg.budget, exact),
        "train_reward": float(train_rewards.mean()),
        "train_reward_error": error,
        "train_per_prompt": train_rewards.reshape(train.rewards.shape).mean(axis=1).round(5).tolist(),
        "train_exact_reward": train.expected_reward,
        "heldout_status_counts": heldout.status_counts(),
    }
    if cfg.world == "multi":
        entry["heldout_step_validity"] = step_validity(heldout)
    if cfg.world == "worked":
        entry["heldout_styles"] = styles.style_summary(heldout)
        entry["heldout_choice"] = styles.choice_entropy(policy, split("heldout", cfg.world))
    return entry


def warmup_lr(peak: float, warmup: int, step: int) -> float:
    """The learning rate at RL step ``step`` (from 1): linear warm-up to ``peak`` over ``warmup`` steps, then ``peak``.

    Adam's first steps are otherwise full-sized, whatever the gradient. The
    RL loop, chapter 3's replays and the workshop's training all use it.
    """
    return peak * min(1.0, step / max(1, warmup))


@dataclass
class Loop:
    """What the RL loop carries from step to step, fresh (:meth:`start`) or resumed from an :class:`RLState`."""

    reference: Policy
    opt: AdamW
    gen: torch.Generator
    picker: random.Random
    memo: ReferenceMemo
    pool: deque
    log: dict
    first: int
    started: float
    consecutive: int

    @classmethod
    def start(cls, policy: Policy, cfg: RLConfig, seed: int, name: str, state: RLState | None, verifier) -> Loop:
        """The loop at its first step; a fresh run evaluates its starting checkpoint (step 0) first."""
        reference = copy.deepcopy(policy).eval()
        loop = cls(
            reference,
            adamw(policy.parameters(), cfg.lr),
            torch.Generator().manual_seed(seed),
            random.Random(seed),
            ReferenceMemo(),
            deque(maxlen=cfg.stale + 1),
            new_log(),
            1,
            0.0,
            0,
        )
        if state is None:
            log_checkpoint(policy, cfg, seed, f"{name}@0", 0, loop.log, verifier=verifier)
        else:
            policy.load_state_dict(state.policy)
            loop.opt.load_state_dict(state.optimizer)
            loop.gen.set_state(state.generator)
            loop.log, loop.first = state.log, state.step + 1
            loop.pool.extend(state.pool)
            if state.picker is not None:
                loop.picker.setstate(state.picker)
            if state.reference is not None:
                loop.memo = state.reference
        # the wall clock goes on from where the interrupted run stopped
        loop.started = time.perf_counter() - loop.log["wall_seconds"]
        loop.consecutive = trailing_exclusions(loop.log)
        return loop

    def state(self, policy: Policy, step: int) -> RLState:
        """A resumable state after ``step``, sharing the live weights, optimiser, log and memo."""
        return RLState(
            step,
            policy.state_dict(),
            self.opt.state_dict(),
            self.gen.get_state(),
            list(self.pool),
            self.log,
            self.picker.getstate(),
            self.memo,
        )


def train_rl(
    policy: Policy,
    cfg: RLConfig,
    seed: int,
    name: str = "rl",
    state: RLState | None = None,
    on_checkpoint=None,
    verifier=None,
) -> dict:
    """Run RL from ``policy`` (or continue from ``state``); returns the run log.

    Each step samples a group of answers per prompt, scores them, turns the
    rewards into credit and updates the policy. ``on_checkpoint(state)`` is
    called with a resumable :class:`RLState` at every checkpoint, so an
    interrupted run loses at most ``checkpoint_every`` steps and resumes
    bit-identically with the same seed and thread count. The state shares
    the run's live weights, optimiser state, log and reference memo, which
    training goes on changing: save it (or copy it) before returning. ``verifier`` replaces the run's verifier
    by name (chapter 4's learned judge, which needs its weights).
    """
    verifier = verifier or make_verifier(cfg)
    loop = Loop.start(policy, cfg, seed, name, state, verifier)
    tasks = split("train", cfg.world)
    for step in progress(range(loop.first, cfg.steps + 1), desc=name, total=cfg.steps - loop.first + 1):
        for group in loop.opt.param_groups:
            group["lr"] = warmup_lr(cfg.lr, cfg.warmup, step)
        faults = faults_at(cfg, step)
        t0 = time.perf_counter()
        rollouts = sample_step(policy, cfg, loop, tasks, f"{name}@{step - 1}", faults)
        rewards, statuses, error = score_guarded(faulty(verifier, cfg, faults), rollouts, cfg.guard.verifier_timeout_s)
        batch = Batch(step, rollouts, rewards, statuses, *credit(cfg, rewards, statuses))
        t1 = time.perf_counter()  # sampling and scoring above, the update below: BENCHMARKS.md times both
        stats = learn(policy, cfg, loop, batch, error, poisoned="nan_loss" in faults)
        log_step(cfg, loop, batch, stats, t1 - t0, time.perf_counter() - t1)
        if loop.consecutive >= cfg.guard.abort_after:
            abort(cfg, loop, step)
            break
        if step % cfg.checkpoint_every == 0 or step == cfg.steps:
            log_checkpoint(policy, cfg, seed, f"{name}@{step}", step, loop.log, verifier=verifier)
            if on_checkpoint is not None:
                on_checkpoint(loop.state(policy, step))
    if loop.log["status"] == "running":
        loop.log["status"] = "completed"
    policy.version = f"{name}@{loop.log['checkpoints'][-1]['step']}"
    return loop.log


def sample_step(policy: Policy, cfg: RLConfig, loop: Loop, tasks: list, version: str, faults: set[str]) -> Rollouts:
    """Sample one step's groups from the step's prompts, under policy version ``version`` (a planned burst corrupts them)."""
    chosen = tasks if not cfg.prompts_per_step else loop.picker.sample(tasks, cfg.prompts_per_step)
    policy.version = version
    rollouts = sample(
        policy,
        [t.prompt for t in chosen],
        n=cfg.group_size,
        temperature=cfg.temperature,
        budget=cfg.budget,
        generator=loop.gen,
    )
    return corrupt(rollouts, MALFORMED_BURST, loop.gen) if "malformed_burst" in faults else rollouts


def faulty(verifier, cfg: RLConfig, faults: set[str]):
    """The run's verifier, wrapped in a :class:`FaultyVerifier` when the step plans a verifier fault."""
    fault = next((f for f in faults if f.startswith("verifier")), None)
    return verifier if fault is None else FaultyVerifier(verifier, fault, cfg.guard.verifier_timeout_s)


def learn(policy: Policy, cfg: RLConfig, loop: Loop, batch: Batch, error: str | None, poisoned: bool = False) -> dict:
    """The update of one step, if the guard lets the batch through; returns the last update's statistics.

    The update learns from the oldest batch of the pool (``cfg.stale`` steps
    back). A non-finite loss leaves the weights alone and is recorded as an
    aborted update and an excluded batch; ``poisoned`` (the ``nan_loss``
    fault) makes the learnt batch's advantages NaN so that the loss is.
    """
    ok = guard_batch(cfg, loop.log, batch.step, batch.statuses, error)
    stats: dict = {}
    if ok:
        loop.pool.append(batch)
        learnt = loop.pool[0]
        ref_logp = loop.memo.logprobs(loop.reference, learnt.rollouts)
        if poisoned:
            learnt = replace(learnt, advantages=learnt.advantages * float("nan"))
        for _ in range(cfg.updates_per_batch):
            stats = update(policy, loop.opt, learnt, cfg, ref_logp)
        if not stats["finite"]:
            ok = False
            loop.log["aborted_updates"].append(aborted_update(batch.step, "non-finite loss", str(stats["loss"])))
            intervene(
                loop.log,
                batch.step,
                "batch excluded",
                "non-finite loss",
                "loss_is_finite",
                0.0,
                1.0,
                len(batch.statuses),
            )
    loop.consecutive = 0 if ok else loop.consecutive + 1
    if not ok:
        batch.used = torch.zeros_like(batch.used)
    stats["excluded"] = not ok
    return stats


def log_step(
    cfg: RLConfig, loop: Loop, batch: Batch, stats: dict, sample_seconds: float, update_seconds: float
) -> None:
    """Append one step's metrics and stored rollouts to the run log."""
    loop.log["metrics"].append(
        {
            "step": batch.step,
            **rollout_metrics(cfg, batch),
            "excluded": stats["excluded"],
            **{k: v for k, v in stats.items() if k not in ("finite", "excluded")},
            "sample_seconds": sample_seconds,
            "update_seconds": update_seconds,
        }
    )
    loop.log["rollouts"].append(store(batch))
    loop.log["wall_seconds"] = time.perf_counter() - loop.started


def abort(cfg: RLConfig, loop: Loop, step: int) -> None:
    """Mark the run aborted at ``step``: too many excluded or paused batches in a row."""
    loop.log["status"] = "aborted"
    loop.log["abort"] = {
        "step": step,
        "reason": f"{loop.consecutive} consecutive batches excluded or paused",
        "threshold": cfg.guard.abort_after,
    }


def log_checkpoint(
    policy: Policy,
    cfg: RLConfig,
    seed: int,
    version: str,
    step: int,
    log: dict,
    eval_step: int | None = None,
    verifier=None,
) -> None:
    """Append checkpoint ``step`` of ``policy``, named ``version``, and its evaluation to a run log.

    The evaluation draws the samples of step ``eval_step`` (default ``step``,
    :func:`checkpoint_eval`); a base run evaluates both its checkpoints as an
    RL run's step 0, so that the base policy gets the same numbers there and
    at the start of every RL run.
    """
    policy.version = version
    log["checkpoints"].append(
        {
            "step": step,
            "version": version,
            "weights_hash": weights_hash(policy),
            "checkpoint": Checkpoint.of(policy, version),
        }
    )
    log["evals"].append(
        dict(checkpoint_eval(policy, cfg, seed, step if eval_step is None else eval_step, verifier), step=step)
    )
