"""The book's audit and run record on a TRL run (appendix): metrics read from TRL's log, the rollouts TRL sampled
in the book's stored shape, their cross-check against what TRL logged, and the run record.
"""

from __future__ import annotations

import numpy as np
import torch

from rlbook import record as rec
from rlbook.core import advantages as adv_lib
from rlbook.core import rewards as rw
from rlbook.core.rl import make_verifier
from rlbook.core.world import EOT_ID

from .spec import TRLRun
from .translation import METRIC_NAMES


def metrics_from_log(log_history: list[dict], trl_loss_type: str = "dapo") -> list[dict]:
    """TRL's ``trainer.state.log_history`` as per-step dicts with rlbook's metric names (appendix).

    One dict per logged optimizer step (the end-of-training summary is
    skipped), keyed as :attr:`rlbook.runs.Run.metrics` through
    :data:`METRIC_NAMES`, plus TRL-only entries kept under their own names
    (``grad_norm``, ``learning_rate``, ``completions/clipped_ratio``). A
    metric TRL did not log at a step (``kl`` when ``beta`` is 0) is absent.
    """
    names = dict(METRIC_NAMES)
    if trl_loss_type == "cispo":
        names.update(clip_fraction="cispo_clip_ratio")
        del names["clip_low_fraction"], names["clip_high_fraction"]
    extra = ("grad_norm", "learning_rate", "completions/clipped_ratio")
    rows = []
    for entry in log_history:
        if "train_runtime" in entry or "step" not in entry:
            continue
        row: dict[str, float] = {"step": int(entry["step"])}
        row.update({ours: float(entry[theirs]) for ours, theirs in names.items() if entry.get(theirs) is not None})
        row.update({key: float(entry[key]) for key in extra if entry.get(key) is not None})
        rows.append(row)
    return rows


def stored_rollouts(captured: list[dict], group_size: int, budget: int, name: str = "trl") -> list[dict]:
    """Captured TRL rollouts in the per-step shape of :attr:`rlbook.runs.Run.rollouts` (appendix).

    Each step: ``prompts`` (one per group; a group's rows must share their
    prompt), ``tokens`` (uint8, rows padded with the end-of-turn id to
    ``budget``), ``lengths``, ``rewards``, ``statuses`` (indices into
    :data:`rlbook.core.rewards.STATUSES`), ``policy_version`` and ``used`` (every
    row: TRL trains on all of them). TRL's transformers generation path
    records no sampling log-probabilities, so ``logprobs`` is NaN.
    """
    stored = []
    for entry in captured:
        prompts, ids = entry["prompts"], entry["completion_ids"]
        groups = [prompts[i : i + group_size] for i in range(0, len(prompts), group_size)]
        if any(len(g) != group_size or len(set(g)) != 1 for g in groups):
            raise ValueError(f"step {entry['step']}: rows do not form contiguous groups of {group_size} per prompt")
        tokens = torch.full((len(ids), budget), EOT_ID, dtype=torch.uint8)
        for row, seq in enumerate(ids):
            tokens[row, : len(seq)] = torch.tensor(seq, dtype=torch.uint8)
        stored.append(
            {
                "step": entry["step"],
                "prompts": [g[0] for g in groups],
                "tokens": tokens,
                "lengths": torch.tensor([len(s) for s in ids], dtype=torch.uint8),
                "logprobs": torch.full((len(ids), budget), float("nan")),
                "rewards": torch.tensor(entry["rewards"], dtype=torch.float32),
                "statuses": torch.tensor([rw.STATUSES.index(s) for s in entry["statuses"]], dtype=torch.uint8),
                "policy_version": f"{name}@{entry['step'] - 1}",
                "used": torch.ones(len(ids), dtype=torch.bool),
            }
        )
    return stored


def rollout_audit(stored: list[dict]) -> list[dict]:
    """Per step, the book's audit of a batch computed from the rollouts alone (appendix).

    The quantities of :func:`rlbook.core.loop.rollout_metrics`: mean reward,
    zero-variance group fraction and its all-right / all-wrong split
    (:mod:`rlbook.core.advantages`), mean completion length and the share of each
    verifier status. Computed from what the reward function saw, never from
    TRL's logs, so it can check them.
    """
    rows = []
    for s in stored:
        grouped = s["rewards"].view(len(s["prompts"]), -1)
        split_zero = adv_lib.zero_variance_split(grouped, right_from=1.0)
        statuses = [rw.STATUSES[i] for i in s["statuses"].tolist()]
        rows.append(
            {
                "step": s["step"],
                "reward_mean": float(grouped.mean()),
                "zero_variance_frac": adv_lib.zero_variance_fraction(grouped),
                "zero_variance_all_right": split_zero["all_right"],
                "zero_variance_all_wrong": split_zero["all_wrong"],
                "completion_len": float(s["lengths"].float().mean()),
                **{f"{st}_rate": statuses.count(st) / len(statuses) for st in rw.STATUSES},
            }
        )
    return rows


def cross_check(metrics: list[dict], audit: list[dict]) -> dict[str, float]:
    """Largest difference, over the steps both have, between TRL's logged value and the audit's (appendix).

    Keys: every metric both hold, and ``incomplete_rate vs clipped_ratio``
    (TRL's share of completions without an end-of-sequence token against the
    verifier's ``incomplete`` share). Zeros mean TRL logged what the book
    computes; float32 logging leaves differences near 1e-7.
    """
    logged = {m["step"]: m for m in metrics}
    worst: dict[str, float] = {}
    for row in audit:
        entry = logged.get(row["step"], {})
        pairs = [(key, key) for key in row if key != "step" and key in entry]
        if "completions/clipped_ratio" in entry:
            pairs.append(("incomplete_rate", "completions/clipped_ratio"))
        for ours, theirs in pairs:
            label = ours if ours == theirs else f"{ours} vs {theirs}"
            worst[label] = max(worst.get(label, 0.0), abs(row[ours] - entry[theirs]))
    return worst


def reward_vs_heldout(run: TRLRun) -> list[dict]:
    """At each evaluated checkpoint: TRL's training reward against rlbook's independent evaluation (appendix).

    ``train_reward_logged``: the mean reward TRL logged for the batch sampled
    at that checkpoint (the batch of the next step; None after the last);
    ``heldout_expected_reward`` and ``heldout_greedy_accuracy``: the exact
    verifier on the 40 held-out prompts, never trained on;
    ``train_reward``: the run's verifier on the train prompts, sampled afresh.
    """
    logged = {m["step"]: m.get("reward_mean") for m in run.metrics}
    return [
        {
            "step": e["step"],
            "train_reward_logged": logged.get(e["step"] + 1),
            "train_reward": e["train_reward"],
            "heldout_expected_reward": e["heldout_expected_reward"],
            "heldout_greedy_accuracy": e["heldout_greedy_accuracy"],
        }
        for e in run.evals
    ]


def decoding_gap(captured: list[dict], verifier=None) -> dict[str, float]:
    """What scoring TRL's decoded ``completions`` instead of the ids would have done (appendix).

    Returns the mean reward of the captured rollouts as scored
    (``from_ids``), the mean reward the same verifier gives TRL's text
    (``from_trl_text``), the share of TRL's texts it calls ``incomplete``
    (``trl_text_incomplete``) and the share of rollouts whose status differs
    (``status_changed``; rollouts the budget cut off are incomplete either way).
    """
    verifier = verifier or rw.ExactVerifier()
    prompts = [p for e in captured for p in e["prompts"]]
    ours = [c for e in captured for c in e["completions"]]
    theirs = [c for e in captured for c in e["trl_completions"]]
    r_ours, s_ours = rw.score(verifier, prompts, ours)
    r_theirs, s_theirs = rw.score(verifier, prompts, theirs)
    return {
        "from_ids": float(r_ours.mean()),
        "from_trl_text": float(r_theirs.mean()),
        "trl_text_incomplete": s_theirs.count("incomplete") / len(s_theirs),
        "status_changed": float(np.mean([a != b for a, b in zip(s_ours, s_theirs)])),
    }


def trl_record(run: TRLRun) -> dict:
    """The run record of a TRL run, validated by :func:`rlbook.record.validate` (appendix, chapter 5's schema).

    Everything rlbook's own records name, with TRL's settings spelled in
    TRL's terms (``loss: "trl loss_type=dapo"``), TRL's versions added to
    ``versions`` and the full ``GRPOConfig`` arguments under the extra
    top-level field ``trainer``, with what each process trained (its rank, optimiser steps, rollouts
    scored and final weights hash).
    """
    spec, cfg, kwargs = run.spec, run.spec.rl, run.config
    statuses = [s for e in run.captured for s in e["statuses"]]
    labels = {s: statuses.count(s) for s in rw.STATUSES if statuses.count(s)}
    verifier = make_verifier(cfg)
    scaled = kwargs["scale_rewards"] != "none"
    record = rec.new_record(
        spec.name,
        seed=run.seed,
        threads=run.threads,
        status="completed",
        base_policy=run.base_policy,
        **rec.task_fields(cfg.world, "train"),
        sampling={
            "temperature": cfg.temperature,
            "group_size": cfg.group_size,
            "prompts_per_step": kwargs["per_device_train_batch_size"] * max(1, len(run.processes)) // cfg.group_size,
            "token_budget": cfg.budget,
        },
        verifier={
            "name": verifier.name,
            "version": verifier.version,
            "implementation": f"rlbook.core.rewards.{type(verifier).__name__} via rlbook.trl.VerifierReward",
        },
        outcome_labels=labels,
        advantage={
            "method": f"trl scale_rewards={kwargs['scale_rewards']}",
            "eps": 1e-4 if scaled else None,
            "ddof": 1 if scaled else None,
        },
        update={
            "loss": f"trl loss_type={kwargs['loss_type']}",
            "clip": {"epsilon": kwargs["epsilon"], "epsilon_high": kwargs["epsilon_high"]},
            "aggregation": kwargs["loss_type"],
            "lr": kwargs["learning_rate"],
            "optimizer": kwargs["optim"],
            "steps": kwargs["max_steps"],
            "updates_per_batch": kwargs["num_iterations"],
            "schedule": {
                "lr": kwargs["lr_scheduler_type"],
                "warmup_steps": kwargs["warmup_steps"],
                "max_grad_norm": kwargs["max_grad_norm"],
                "reward_weights": kwargs["reward_weights"],
            },
        },
        reference={
            "kl_beta": kwargs["beta"],
            "estimator": kl_estimator(kwargs) if kwargs["beta"] else None,
            "policy": run.base_policy["version"] if kwargs["beta"] else None,
        },
        checkpoints=[
            {
                "step": c["step"],
                "policy_version": c["step"],
                "path": f"trl-run#checkpoints[{i}]",
                "weights_hash": c["weights_hash"],
            }
            for i, c in enumerate(run.checkpoints)
        ],
        evaluations=_evaluations(run),
        cost={
            "wall_seconds": round(run.wall_seconds, 3),
            "generated_tokens": int(sum(len(i) for e in run.captured for i in e["completion_ids"])),
            "rollouts": len(statuses),
            "gradient_steps": len(run.step_seconds),
        },
        rollouts_before_filtering=len(statuses),
        rollouts_used=len(statuses),
        failures={"by_status": {k: v for k, v in labels.items() if k != "accepted"}, "verifier_errors": 0},
        versions={**rec.environment_versions(), **run.versions},
    )
    record["trainer"] = {
        "name": "trl.GRPOTrainer",
        "config": kwargs,
        "processes": [
            {key: p[key] for key in ("rank", "optimizer_steps", "weights_hash")}
            | {"rollouts": sum(p["rollouts_per_step"])}
            for p in run.processes
        ],
    }
    return rec.validate(record)


def kl_estimator(kwargs: dict) -> str:
    """The KL penalty a ``GRPOConfig``'s arguments give, in the record's words (appendix).

    ``use_bias_correction_kl`` missing means TRL's default, True.
    """
    if kwargs.get("use_bias_correction_kl", True):
        return "k3 x importance ratio (use_bias_correction_kl=True): rlbook's kl_k3_ratio, value and gradient"
    return "k3 (use_bias_correction_kl=False): rlbook's kl_k3, value and gradient"


def _evaluations(run: TRLRun) -> list[dict]:
    """The record's evaluations: expected reward and greedy accuracy on held-out prompts, per checkpoint."""
    cfg = run.spec.rl
    rows = []
    for e in run.evals:
        rows.append(
            {
                "step": e["step"],
                "split": "heldout",
                "n": cfg.eval_n,
                "temperature": 1.0,
                "token_budget": cfg.budget,
                "metric": "expected_reward (exact verifier)",
                "value": e["heldout_expected_reward"],
                "ci": None,
            }
        )
        rows.append(
            {
                "step": e["step"],
                "split": "heldout",
                "n": 1,
                "temperature": 0.0,
                "token_budget": cfg.budget,
                "metric": "greedy_accuracy (exact verifier)",
                "value": e["heldout_greedy_accuracy"],
                "ci": None,
            }
        )
    return rows
