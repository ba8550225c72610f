"""The run record of each run, filled from its configuration and its log (chapter 5 reads it).

The record is the run's public account (rlbook.record defines and checks
its schema): what was trained, from which policy, under which verifier and
update, with which evaluations, interventions and cost.
"""

from __future__ import annotations

import torch

from rlbook import record as rec
from rlbook.core.advantages import advantage_params
from rlbook.core.reward_model import JudgeVerifier
from rlbook.core.rewards import STATUSES, get_verifier
from rlbook.core.rl import RLConfig
from rlbook.record.schema import field_error

from .catalogue import PRETRAIN_SEED, RunSpec
from .run import Run


def common_record(s: RunSpec, seed: int, threads: int, log: dict, cfg: RLConfig, base: dict) -> dict:
    """The record fields shared by base and RL runs."""
    record = rec.new_record(
        s.name,
        seed=seed,
        threads=threads,
        status=log["status"],
        base_policy=base,
        **rec.task_fields(cfg.world, "sft" if s.rl is None else "train"),
    )
    for i, c in enumerate(log["checkpoints"]):
        rec.add_checkpoint(record, c["step"], c["step"], f"log.pt#checkpoints[{i}]", c["weights_hash"])
    for e in log["evals"]:
        rec.add_evaluation(
            record,
            e["step"],
            "heldout",
            cfg.eval_n,
            1.0,
            cfg.budget,
            "expected_reward (exact verifier)",
            e["heldout_expected_reward"],
        )
        rec.add_evaluation(
            record,
            e["step"],
            "heldout",
            1,
            0.0,
            cfg.budget,
            "greedy_accuracy (exact verifier)",
            e["heldout_greedy_accuracy"],
        )
    return record


def base_record(s: RunSpec, parent: Run | None, seed: int, threads: int, log: dict, probe: RLConfig) -> dict:
    """The run record of a base run (pretraining, then SFT), filled from its configuration and log."""
    pretrain, sft = s.base_configs()
    base: dict = {"name": "random-init", "version": "none", "weights_hash": "none"}
    if parent:
        base = rec.base_policy(parent.name, parent.log["checkpoints"][0])
    record = common_record(s, seed, threads, log, probe, base)
    record.update(
        sampling={"temperature": 1.0, "group_size": probe.eval_n, "prompts_per_step": 0, "token_budget": probe.budget},
        verifier={"name": "exact", "version": "1.0", "implementation": "rlbook.core.rewards.ExactVerifier"},
        advantage={"method": "none (supervised)", "eps": None, "ddof": None},
        update={
            "loss": "cross-entropy on answer tokens",
            "clip": None,
            "aggregation": "token_mean",
            "lr": sft.lr,
            "optimizer": "AdamW",
            "steps": pretrain.steps + sft.steps,
            "updates_per_batch": 1,
            "schedule": {"pretrain": repr(pretrain), "pretrain_seed": PRETRAIN_SEED, "sft": repr(sft)},
        },
        reference={"kl_beta": 0.0, "estimator": None, "policy": None},
        cost={
            "wall_seconds": round(log["wall_seconds"], 3),
            "generated_tokens": 0,
            "rollouts": 0,
            "gradient_steps": pretrain.steps + sft.steps,
        },
    )
    return record


def rl_record(s: RunSpec, parent: Run, seed: int, threads: int, log: dict) -> dict:
    """The run record of an RL run, filled from its configuration and log."""
    cfg = s.rl_config()
    base = rec.base_policy(parent.name, parent.log["checkpoints"][-1])
    record = common_record(s, seed, threads, log, cfg, base)
    verifier = JudgeVerifier if cfg.verifier == "judge" else get_verifier(cfg.verifier, cfg.verifier_version)
    by_status = sum(
        (torch.bincount(r["statuses"].long(), minlength=len(STATUSES)) for r in log["rollouts"]),
        torch.zeros(len(STATUSES), dtype=torch.long),
    )
    labels = {st: int(n) for st, n in zip(STATUSES, by_status) if n}
    # dynamic sampling (chapter 9) samples answers it then drops: the cost counts every one
    rollouts = sum(m.get("rollouts_sampled", 0) for m in log["metrics"]) or int(by_status.sum())
    tokens = int(sum(int(r["lengths"].sum()) for r in log["rollouts"]))
    used = int(sum(int(r["used"].sum()) for r in log["rollouts"] if not _excluded(log, r["step"])))
    steps_done = len(log["metrics"])
    updates = cfg.updates_per_batch * sum(1 for m in log["metrics"] if not m["excluded"])
    clip = cfg.loss_params() or None
    errors = sum(1 for i in log["interventions"] if i["trigger"]["metric"] == "verifier_error_rate")
    record.update(
        sampling={
            "temperature": cfg.temperature,
            "group_size": cfg.group_size,
            "prompts_per_step": cfg.prompts_per_step or record["prompt_split"]["counts"]["train"],
            "token_budget": cfg.budget,
        },
        verifier={
            "name": verifier.name,
            "version": cfg.verifier_version or getattr(verifier, "version", "1.0"),
            "implementation": _implementation(verifier),
        },
        outcome_labels=labels,
        process_labels={"name": "rlbook.core.rewards.process_score", "version": "1.0"}
        if cfg.world == "multi"
        else None,
        advantage=_advantage(cfg),
        update={
            "loss": cfg.loss,
            "clip": clip,
            "aggregation": cfg.aggregation,
            "lr": cfg.lr,
            "optimizer": "AdamW",
            "steps": cfg.steps,
            "updates_per_batch": cfg.updates_per_batch,
            "schedule": {
                "lr": f"linear warm-up over {cfg.warmup} steps, then constant" if cfg.warmup else "constant",
                "stale_rollouts_steps": cfg.stale,
                "reward_scale": cfg.reward_scale,
                **_dapo(cfg),
            },
        },
        reference={"kl_beta": cfg.kl_beta, "estimator": cfg.kl_estimator, "policy": base["version"]},
        cost={
            "wall_seconds": round(log["wall_seconds"], 3),
            "generated_tokens": tokens,
            "rollouts": rollouts,
            "gradient_steps": updates,
        },
        rollouts_before_filtering=rollouts,
        rollouts_used=used,
        selection_rule="keep accepted" if cfg.selection == "accepted" else "none",
        failures={"by_status": {k: v for k, v in labels.items() if k != "accepted"}, "verifier_errors": errors},
        aborted_updates=log["aborted_updates"],
        interventions=log["interventions"],
    )
    record["steps_completed"] = steps_done
    if "abort" in log:
        record["abort"] = log["abort"]
    return record


def _advantage(cfg: RLConfig) -> dict:
    """The record's ``advantage``: the method and the parameters it really used (None where it has none)."""
    if cfg.selection != "none":
        return {"method": "selection: advantage 1 on kept rollouts", "eps": None, "ddof": None}
    params = advantage_params(cfg.advantage)
    return {"method": cfg.advantage, "eps": params.get("eps"), "ddof": params.get("ddof")}


def _dapo(cfg: RLConfig) -> dict:
    """DAPO's choices (chapter 9), named in the record's schedule only by the runs that make them."""
    named: dict = {}
    if cfg.refill_rounds:
        named["dynamic_sampling_refill_rounds"] = cfg.refill_rounds
    if cfg.overlong == "filter":
        named["overlong"] = "cut-off answers left out of the loss"
    if cfg.overlong == "shape":
        named["overlong"] = f"soft length penalty over the last {cfg.overlong_cache} tokens of the budget"
    return named


def _implementation(verifier) -> str:
    """Where the verifier's code lives: a verifier object's class, or the class itself (the learned judge)."""
    cls = verifier if isinstance(verifier, type) else type(verifier)
    return f"{cls.__module__}.{cls.__name__}"


def _excluded(log: dict, step: int) -> bool:
    return any(m["step"] == step and m["excluded"] for m in log["metrics"])


def check_against_log(record: dict, log: dict) -> None:
    """Raise RecordError naming the first field of ``record`` that its run's ``log`` contradicts.

    The cache reads both files of an entry; a checksum only says that they
    are the files the manifest names, so the record is also held against the
    log it was filled from: the status, the number of steps, every
    checkpoint's step and weights hash, and every evaluation's step and
    value (the independent evaluations chapter 5 reads from the record).
    """

    def refuse(field: str, says, holds) -> None:
        raise field_error(field, f"says {says!r} where the run log holds {holds!r}")

    try:
        status = log.get("status", "completed")
        if record["status"] != status:
            refuse("status", record["status"], status)
        if "steps_completed" in record and record["steps_completed"] != len(log["metrics"]):
            refuse("steps_completed", record["steps_completed"], len(log["metrics"]))
        if len(record["checkpoints"]) != len(log["checkpoints"]):
            refuse("checkpoints", f"{len(record['checkpoints'])} checkpoints", f"{len(log['checkpoints'])}")
        for i, (said, held) in enumerate(zip(record["checkpoints"], log["checkpoints"])):
            for key in ("step", "weights_hash"):
                if said[key] != held[key]:
                    refuse(f"checkpoints[{i}].{key}", said[key], held[key])
        held = [
            (e["step"], value)
            for e in log["evals"]
            for value in (e["heldout_expected_reward"], e["heldout_greedy_accuracy"])
        ]
        if len(record["evaluations"]) != len(held):
            refuse("evaluations", f"{len(record['evaluations'])} evaluations", f"{len(held)}")
        for i, (said, (step, value)) in enumerate(zip(record["evaluations"], held)):
            if said["step"] != step:
                refuse(f"evaluations[{i}].step", said["step"], step)
            if said["value"] != value:
                refuse(f"evaluations[{i}].value", said["value"], value)
    except (KeyError, TypeError, AttributeError) as err:
        raise rec.RecordError(
            f"the run log does not have the shape of a run log ({type(err).__name__}: {err})"
        ) from None
