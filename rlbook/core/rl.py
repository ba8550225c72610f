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
from dataclasses import dataclass, field

import numpy as np
import torch

from . import advantages as adv_lib
from . import losses
from . import rewards as rw
from .adamw import AdamW
from .evaluate import evaluate, greedy_accuracy, step_validity
from .guard import Guard, corrupt, faults_at, guard_batch, intervene, score_guarded, trailing_exclusions
from .packing import ReferenceMemo, generated_logprobs
from .policy import Checkpoint, Policy, weights_hash
from .progress import progress
from .sampling import Rollouts, sample
from .train import adamw
from .world import split


@dataclass(frozen=True)
class RLConfig:
    """Every choice of an RL run. The defaults are the book's ``main`` run."""

    world: str = "single"
    steps: int = 100
    group_size: int = 16
    prompts_per_step: int = 0
    temperature: float = 1.0
    budget: int = 4
    lr: float = 3e-4
    warmup: int = 10
    loss: str = "ppo"
    eps_low: float = 0.2
    eps_high: float = 0.2
    cispo_cap: float = 4.0
    aggregation: str = "token_mean"
    advantage: str = "centered"
    reward_scale: float = 1.0
    kl_beta: float = 0.0
    updates_per_batch: int = 1
    verifier: str = "exact"
    verifier_version: str | None = None
    stale: int = 0
    selection: str = "none"
    checkpoint_every: int = 10
    eval_n: int = 32
    faults: tuple = ()
    guard: Guard = field(default_factory=Guard)

    def loss_params(self) -> dict:
        if self.loss == "ppo":
            return {"eps_low": self.eps_low, "eps_high": self.eps_high}
        if self.loss == "cispo":
            return {"cap_high": self.cispo_cap}
        return {}


@dataclass
class Batch:
    """One step's rollouts together with the credit derived from them (kept apart from the record)."""

    step: int
    rollouts: Rollouts
    rewards: np.ndarray
    statuses: list[str]
    advantages: torch.Tensor
    used: torch.Tensor


def make_verifier(cfg: RLConfig):
    """The verifier the run trains against."""
    return rw.get_verifier(cfg.verifier, cfg.verifier_version)


def credit(cfg: RLConfig, rewards: np.ndarray, statuses: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-rollout advantages and the rows the update uses, under the run's selection rule."""
    grouped = torch.tensor(rewards, dtype=torch.float32).view(-1, cfg.group_size) * cfg.reward_scale
    if cfg.selection == "accepted":
        used = torch.tensor([s == "accepted" for s in statuses])
        return used.float() * cfg.reward_scale, used
    advantages = adv_lib.compute_advantages(grouped, cfg.advantage).flatten()
    return advantages, torch.ones(len(statuses), dtype=torch.bool)


def update(policy: Policy, opt: AdamW | torch.optim.Optimizer, batch: Batch, cfg: RLConfig,
           ref_logp: torch.Tensor | None = None, poison: bool = False) -> dict:
    """One gradient step on a batch; returns the loss statistics.

    ``ref_logp`` (from :func:`reference_logprobs`) gives the KL to the
    reference, logged and, with ``cfg.kl_beta > 0``, added to the loss.
    A non-finite loss is not applied: the step is skipped and reported in
    ``stats["finite"] = False`` so the loop can record an intervention.
    """
    rollouts = batch.rollouts
    mask = rollouts.mask & batch.used[:, None]
    logp, entropy = generated_logprobs(policy, rollouts)
    loss, stats = losses.token_loss(cfg.loss, logp, rollouts.logprobs, batch.advantages, mask,
                                    how=cfg.aggregation, max_tokens=cfg.budget, **cfg.loss_params())
    kl = torch.zeros(())
    if ref_logp is not None:
        kl = losses.aggregate(losses.kl_k3(logp, ref_logp), mask, cfg.aggregation, cfg.budget)
        if cfg.kl_beta > 0:
            loss = loss + cfg.kl_beta * kl
    if poison:
        loss = loss * float("nan")
    stats.update(loss=float(loss.detach()), kl=float(kl.detach()), entropy=float(losses.aggregate(entropy.detach(), rollouts.mask)),
                 finite=bool(torch.isfinite(loss)))
    opt.zero_grad(set_to_none=True)
    if stats["finite"]:
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
    return {"reward_mean": float(grouped.mean()), "reward_std": float(grouped.std()),
            "zero_variance_frac": adv_lib.zero_variance_fraction(grouped),
            "zero_variance_all_right": split_zero["all_right"], "zero_variance_all_wrong": split_zero["all_wrong"],
            "completion_len": float(batch.rollouts.lengths.float().mean()),
            **{f"{s}_rate": v for s, v in share.items()}, "rollouts_used": int(batch.used.sum())}


def checkpoint_eval(policy: Policy, cfg: RLConfig, seed: int, step: int, verifier=None) -> dict:
    """Independent evaluation at a checkpoint: exact verifier, held-out and train prompts.

    ``train_reward`` is the training reward (``verifier``, default the run's
    own) of the train prompts' samples. The sampler's seed depends only on
    (seed, step), so evaluating never disturbs the training run's random stream.
    """
    exact = rw.get_verifier("exact")
    eval_seed = 10_000 * (seed + 1) + step
    heldout = evaluate(policy, split("heldout", cfg.world), n=cfg.eval_n, budget=cfg.budget, verifier=exact, seed=eval_seed)
    train = evaluate(policy, split("train", cfg.world), n=cfg.eval_n, budget=cfg.budget, verifier=exact,
                     seed=eval_seed + 1)
    train_rewards, _, error = score_guarded(verifier or make_verifier(cfg), train.rollouts, cfg.guard.verifier_timeout_s)
    entry = {"step": step, "heldout_expected_reward": heldout.expected_reward,
             "heldout_per_prompt": heldout.per_prompt.round(5).tolist(),
             "heldout_greedy_accuracy": greedy_accuracy(policy, split("heldout", cfg.world), cfg.budget, exact),
             "train_reward": float(train_rewards.mean()), "train_reward_error": error,
             "train_per_prompt": train_rewards.reshape(train.rewards.shape).mean(axis=1).round(5).tolist(),
             "train_exact_reward": train.expected_reward,
             "heldout_status_counts": heldout.status_counts()}
    if cfg.world == "multi":
        entry["heldout_step_validity"] = step_validity(heldout)
    return entry


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
        torch.save({"step": self.step, "policy": self.policy, "optimizer": self.optimizer,
                    "generator": self.generator, "pool": [_batch_data(b) for b in self.pool], "log": self.log,
                    "picker": self.picker,
                    "reference": None if self.reference is None else
                    {"index": self.reference.index, "values": self.reference.values}}, path)

    @classmethod
    def load(cls, path) -> "RLState":
        """The state :meth:`save` wrote; loading runs no code from the file (``weights_only=True``)."""
        raw = torch.load(path, weights_only=True)
        expected = {"step", "policy", "optimizer", "generator", "pool", "log", "picker", "reference"}
        if not isinstance(raw, dict) or set(raw) != expected:
            raise ValueError(f"a resume state has the fields {sorted(expected)}")
        memo = raw["reference"]
        return cls(raw["step"], raw["policy"], raw["optimizer"], raw["generator"],
                   [_batch_from_data(b) for b in raw["pool"]], raw["log"],
                   raw["picker"], None if memo is None else ReferenceMemo(memo["index"], memo["values"]))


def _batch_data(batch: Batch) -> dict:
    """A batch as plain data, for :meth:`RLState.save`."""
    r = batch.rollouts
    return {"step": batch.step, "rewards": torch.from_numpy(np.asarray(batch.rewards, dtype=np.float64)),
            "statuses": list(batch.statuses), "advantages": batch.advantages, "used": batch.used,
            "rollouts": {"prompts": list(r.prompts), "prompt_ids": r.prompt_ids, "tokens": r.tokens,
                         "logprobs": r.logprobs, "mask": r.mask, "policy_version": r.policy_version,
                         "settings": dict(r.settings)}}


def _batch_from_data(data: dict) -> Batch:
    """The batch :func:`_batch_data` wrote."""
    return Batch(data["step"], Rollouts(**data["rollouts"]), data["rewards"].numpy(), data["statuses"],
                 data["advantages"], data["used"])


def new_log() -> dict:
    """The run's growing log: metrics per step, evaluations, checkpoints, rollouts and events."""
    return {"metrics": [], "evals": [], "checkpoints": [], "rollouts": [], "interventions": [],
            "aborted_updates": [], "status": "running", "wall_seconds": 0.0}


def _store(batch: Batch) -> dict:
    """The compact per-step rollout record kept in the run's cache."""
    r = batch.rollouts
    return {"step": batch.step, "prompts": r.prompts[:: r.group_size], "tokens": r.tokens.to(torch.uint8),
            "lengths": r.lengths.to(torch.uint8), "logprobs": r.logprobs.clone(),
            "rewards": torch.tensor(batch.rewards, dtype=torch.float32),
            "statuses": torch.tensor([rw.STATUSES.index(s) for s in batch.statuses], dtype=torch.uint8),
            "policy_version": r.policy_version, "used": batch.used.clone()}


def train_rl(policy: Policy, cfg: RLConfig, seed: int, name: str = "rl", state: RLState | None = None,
             on_checkpoint=None, verifier=None) -> dict:
    """Run RL from ``policy`` (or continue from ``state``); returns the run log.

    ``on_checkpoint(state)`` is called with a resumable :class:`RLState` at
    every checkpoint, so an interrupted run loses at most ``checkpoint_every``
    steps and resumes bit-identically with the same seed and thread count.
    The state shares the run's live weights, optimiser state, log and
    reference memo, which training goes on changing: save it (or copy it)
    before returning. ``verifier`` replaces the run's verifier by name
    (chapter 4's learned judge, which needs its weights).
    """
    verifier = verifier or make_verifier(cfg)
    reference = copy.deepcopy(policy).eval()
    opt = adamw(policy.parameters(), cfg.lr)
    gen = torch.Generator().manual_seed(seed)
    log, pool, first = new_log(), deque(maxlen=cfg.stale + 1), 1
    picker = random.Random(seed)
    memo = ReferenceMemo()
    if state is not None:
        policy.load_state_dict(state.policy)
        opt.load_state_dict(state.optimizer)
        gen.set_state(state.generator)
        log, first = state.log, state.step + 1
        pool.extend(state.pool)
        if state.picker is not None:
            picker.setstate(state.picker)
        if state.reference is not None:
            memo = state.reference
    else:
        _checkpoint(policy, cfg, seed, name, 0, log, verifier)
    tasks = split("train", cfg.world)
    started = time.perf_counter() - log["wall_seconds"]
    consecutive = trailing_exclusions(log)
    for step in progress(range(first, cfg.steps + 1), desc=name, total=cfg.steps - first + 1):
        for group in opt.param_groups:  # linear warm-up: Adam's first steps are otherwise full-sized
            group["lr"] = cfg.lr * min(1.0, step / max(1, cfg.warmup))
        faults = faults_at(cfg, step)
        t0 = time.perf_counter()
        chosen = tasks if not cfg.prompts_per_step else picker.sample(tasks, cfg.prompts_per_step)
        policy.version = f"{name}@{step - 1}"
        rollouts = sample(policy, [t.prompt for t in chosen], n=cfg.group_size, temperature=cfg.temperature,
                          budget=cfg.budget, generator=gen)
        if "malformed_burst" in faults:
            rollouts = corrupt(rollouts, 0.8, gen)
        rewards, statuses, error = score_guarded(verifier, rollouts, cfg.guard.verifier_timeout_s,
                                                 next((f for f in faults if f.startswith("verifier")), None))
        advantages, used = credit(cfg, rewards, statuses)
        batch = Batch(step, rollouts, rewards, statuses, advantages, used)
        t1 = time.perf_counter()
        ok = guard_batch(cfg, log, step, statuses, error)
        stats = {}
        if ok:
            pool.append(batch)
            learn = pool[0]
            ref_logp = memo.logprobs(reference, learn.rollouts)
            for _ in range(cfg.updates_per_batch):
                stats = update(policy, opt, learn, cfg, ref_logp, poison="nan_loss" in faults)
            if not stats["finite"]:
                ok = False
                log["aborted_updates"].append({"step": step, "reason": "non-finite loss", "measurement": str(stats["loss"])})
                intervene(log, step, "batch excluded", "non-finite loss", "loss_is_finite", 0.0, 1.0, len(statuses))
        consecutive = 0 if ok else consecutive + 1
        if not ok:
            batch.used = torch.zeros_like(batch.used)
        log["metrics"].append({"step": step, **rollout_metrics(cfg, batch), "excluded": not ok,
                               **{k: v for k, v in stats.items() if k != "finite"},
                               "sample_seconds": t1 - t0, "update_seconds": time.perf_counter() - t1})
        log["rollouts"].append(_store(batch))
        log["wall_seconds"] = time.perf_counter() - started
        if consecutive >= cfg.guard.abort_after:
            log["status"] = "aborted"
            log["abort"] = {"step": step, "reason": f"{consecutive} consecutive batches excluded or paused",
                            "threshold": cfg.guard.abort_after}
            break
        if step % cfg.checkpoint_every == 0 or step == cfg.steps:
            _checkpoint(policy, cfg, seed, name, step, log, verifier)
            if on_checkpoint is not None:
                on_checkpoint(RLState(step, policy.state_dict(), opt.state_dict(), gen.get_state(), list(pool), log,
                                      picker.getstate(), memo))
    if log["status"] == "running":
        log["status"] = "completed"
    policy.version = f"{name}@{log['checkpoints'][-1]['step']}"
    return log


def _checkpoint(policy: Policy, cfg: RLConfig, seed: int, name: str, step: int, log: dict, verifier) -> None:
    policy.version = f"{name}@{step}"
    log["checkpoints"].append({"step": step, "version": policy.version, "weights_hash": weights_hash(policy),
                               "checkpoint": Checkpoint.of(policy, policy.version)})
    log["evals"].append(checkpoint_eval(policy, cfg, seed, step, verifier))
