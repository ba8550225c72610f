"""The RL loop: a run's steps one after another, each logged, with checkpoints, evaluations and resumption.

:func:`train_rl` trains every RL run of the book. Each step is
:func:`rlbook.core.rl.rl_step`, with the run's :class:`Interventions` as its
hooks; after it the loop logs the step's metrics and stored rollouts, stops
the run when the guard aborts it, and at every checkpoint evaluates the
policy independently (:func:`checkpoint_eval`) and hands a resumable
:class:`RLState` to the caller. Chapter 8 reads the record this leaves.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from . import advantages as adv_lib
from . import rewards as rw
from . import styles
from .config import RLConfig
from .evaluate import eval_seed, evaluate, greedy_accuracy, step_validity
from .guard import score_guarded
from .interventions import Interventions
from .policy import Checkpoint, Policy, weights_hash
from .progress import progress
from .rl import StepState, make_verifier, rl_step
from .runlog import Batch, RLState, new_log, store
from .world import split


@dataclass
class Loop:
    """What the RL loop carries from step to step, fresh (:meth:`start`) or resumed from an :class:`RLState`."""

    state: StepState
    hooks: Interventions
    log: dict
    first: int
    started: float

    @classmethod
    def start(cls, policy: Policy, cfg: RLConfig, seed: int, name: str, saved: RLState | None, verifier) -> Loop:
        """The loop at its first step; a fresh run evaluates its starting checkpoint (step 0) first."""
        state = StepState.fresh(policy, cfg, seed)
        log, first = new_log(), 1
        if saved is None:
            log_checkpoint(policy, cfg, seed, f"{name}@0", 0, log, verifier=verifier)
        else:
            policy.load_state_dict(saved.policy)
            state.opt.load_state_dict(saved.optimizer)
            state.gen.set_state(saved.generator)
            log, first = saved.log, saved.step + 1
            state.pool.extend(saved.pool)
            if saved.picker is not None:
                state.picker.setstate(saved.picker)
            if saved.reference is not None:
                state.memo = saved.reference
        # the wall clock goes on from where the interrupted run stopped
        return cls(state, Interventions(cfg, log), log, first, time.perf_counter() - log["wall_seconds"])

    def saved(self, policy: Policy, step: int) -> RLState:
        """A resumable state after ``step``, sharing the live weights, optimiser, log and memo."""
        return RLState(
            step,
            policy.state_dict(),
            self.state.opt.state_dict(),
            self.state.gen.get_state(),
            list(self.state.pool),
            self.log,
            self.state.picker.getstate(),
            self.state.memo,
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

    Each step is :func:`rlbook.core.rl.rl_step`. ``on_checkpoint(state)`` is
    called with a resumable :class:`RLState` at every checkpoint, so an
    interrupted run loses at most ``checkpoint_every`` steps and resumes
    bit-identically with the same seed and thread count. The state shares
    the run's live weights, optimiser state, log and reference memo, which
    training goes on changing: save it (or copy it) before returning.
    ``verifier`` replaces the run's verifier by name (chapter 5's learned
    judge, which needs its weights).
    """
    verifier = verifier or make_verifier(cfg)
    loop = Loop.start(policy, cfg, seed, name, state, verifier)
    tasks = split("train", cfg.world)
    for step in progress(range(loop.first, cfg.steps + 1), desc=name, total=cfg.steps - loop.first + 1):
        policy.version = f"{name}@{step - 1}"  # the version that samples this step's answers
        started = time.perf_counter()
        batch, stats = rl_step(policy, cfg, loop.state, tasks, verifier, step, loop.hooks)
        log_step(cfg, loop, batch, stats, loop.hooks.scored_at - started, time.perf_counter() - loop.hooks.scored_at)
        if loop.hooks.aborts(step):
            break
        if step % cfg.checkpoint_every == 0 or step == cfg.steps:
            log_checkpoint(policy, cfg, seed, f"{name}@{step}", step, loop.log, verifier=verifier)
            if on_checkpoint is not None:
                on_checkpoint(loop.saved(policy, step))
    if loop.log["status"] == "running":
        loop.log["status"] = "completed"
    policy.version = f"{name}@{loop.log['checkpoints'][-1]['step']}"
    return loop.log


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
        # only where dynamic sampling may sample more than the batch holds, so other runs' logs stay as they were
        **({"rollouts_sampled": batch.sampled} if cfg.refill_rounds else {}),
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
