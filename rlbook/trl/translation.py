"""The book's RL choices and metrics under TRL's names (appendix): :func:`grpo_kwargs` builds a ``GRPOConfig``'s
arguments from an :class:`~rlbook.core.rl.RLConfig`, and the appendix's tables say what each choice and metric means
in each library.
"""
from __future__ import annotations

from typing import Any

from rlbook.core import advantages as adv_lib
from rlbook.core import losses
from rlbook.core import rewards as rw
from rlbook.core.rl import RLConfig
from rlbook.core.world import split

from .model import have_trl

ADVANTAGE_TO_SCALE_REWARDS = {"centered": "none", "group_std": "group", "batch_std": "batch", "rloo": "none"}
"""rlbook's advantage methods (:data:`rlbook.core.advantages.ADVANTAGE_METHODS`) as TRL's ``scale_rewards``.

GRPOTrainer has no leave-one-out option, but RLOO's advantage is ``G / (G - 1)``
times the centred one, so ``"rloo"`` is ``"none"`` with the reward weight
multiplied by ``G / (G - 1)`` (:func:`reward_weight`).
"""

AGGREGATION_TO_LOSS_TYPE = {"token_mean": "dapo", "seq_mean": "grpo", "constant": "dr_grpo"}
"""rlbook's loss aggregations (:data:`rlbook.core.losses.AGGREGATIONS`) as TRL's ``loss_type`` for a clipped loss.

``token_mean`` is also TRL's ``bnpo``: the two differ only in counting the
tokens of one device's micro-batch (bnpo) or of the whole accumulated batch
(dapo), the same thing for one batch on one device.
"""

LOSS_NOTES = {
    "ppo": "clipped surrogate: epsilon = eps_low, epsilon_high = eps_high; loss_type gives the aggregation",
    "pg": "no separate option: with num_iterations = 1 the ratio is 1, where the clipped loss has "
          "the plain policy gradient; the gradients agree, the loss values do not (rlbook's is -A x logp, "
          "TRL's -A x ratio)",
    "cispo": "loss_type cispo caps the ratio itself at epsilon_high (rlbook's cispo_cap) and "
             "aggregates over tokens (token_mean only)",
}
"""How each of rlbook's losses (:data:`rlbook.core.losses.LOSSES`) is expressed in TRL."""

CITATIONS = {"centered": "liu2025understanding", "group_std": "shao2024deepseekmath", "batch_std": "",
             "rloo": "ahmadian2024back",
             "token_mean": "yu2025dapo", "seq_mean": "shao2024deepseekmath", "constant": "liu2025understanding",
             "ppo": "schulman2017proximal", "pg": "williams1992simple", "cispo": "minimax2025minimaxm1",
             "kl_beta": "shao2024deepseekmath", "k3-ratio": "schulman2020approximating"}
"""The paper each choice comes from (keys of references.bib); empty where none names it."""


def reward_weight(cfg: RLConfig) -> float:
    """TRL's ``reward_weights`` entry for a run: its reward scale, times ``G / (G - 1)`` under RLOO (appendix)."""
    size = cfg.group_size
    return cfg.reward_scale * (size / (size - 1) if cfg.advantage == "rloo" else 1.0)


def loss_type(cfg: RLConfig) -> str:
    """TRL's ``loss_type`` for a run's loss and aggregation; ValueError where TRL has no equivalent (appendix)."""
    if cfg.loss == "cispo":
        if cfg.aggregation != "token_mean":
            raise ValueError(f"TRL's cispo loss aggregates over tokens only, got aggregation {cfg.aggregation!r}")
        return "cispo"
    if cfg.loss == "pg" and cfg.updates_per_batch != 1:
        raise ValueError("TRL has no unclipped policy-gradient loss; it equals the clipped one only when "
                         "updates_per_batch is 1")
    return AGGREGATION_TO_LOSS_TYPE[cfg.aggregation]


def grpo_kwargs(cfg: RLConfig, prompts_per_step: int | None = None, processes: int = 1) -> dict[str, Any]:
    """Keyword arguments of ``trl.GRPOConfig`` that run the choices of ``cfg`` (appendix).

    ``prompts_per_step`` defaults to the run's own (every train prompt when
    ``cfg.prompts_per_step`` is 0). TRL counts its batch in completions per
    device, so ``per_device_train_batch_size`` = prompts x group size /
    ``processes``. rlbook's optimiser is AdamW (written out in
    :mod:`rlbook.core.adamw`; TRL's default, PyTorch's fused AdamW, takes the same step) with a linear learning-rate warm-up over ``cfg.warmup`` steps and then a
    constant rate, no weight decay and no gradient clipping, said here
    explicitly because TRL's defaults differ (1e-6, a linear decay, clipping
    at 1.0).
    TRL's ``constant_with_warmup`` counts optimiser steps and starts its
    warm-up at a rate of 0, so its warm-up runs one optimiser step behind
    rlbook's, which takes its first step at ``lr / warmup``.
    ``max_steps`` counts optimizer steps: ``steps x updates_per_batch``, and so does
    ``warmup_steps``: ``warmup x updates_per_batch`` (appendix exercise A.1).
    ``use_bias_correction_kl`` follows ``cfg.kl_estimator``: False for
    ``"k3"``, where TRL's penalty is rlbook's :func:`~rlbook.core.losses.kl_k3`,
    and True (TRL's default) for ``"k3-ratio"``, which weights k3 by the
    differentiable importance ratio (:func:`~rlbook.core.losses.kl_k3_ratio`):
    the same value on-policy, but the per-token gradient beta x (logp - ref)
    instead of beta x (1 - exp(ref - logp)).
    Choices TRL has no option for (stale rollouts, keep-accepted selection,
    injected faults) raise ValueError, and so do the learned judge as the
    reward (chapter 4's ``rm`` runs) and a temperature other than
    1: rlbook samples from logits / T but trains on the log-probs at T = 1,
    TRL uses T for both, and no ``GRPOConfig`` does what rlbook does.
    The worked world's runs (chapter 7) raise ValueError too: their policy
    has rotary positions, and the bridge's model (:func:`rlbook.trl.model.gpt2_config`)
    learns its positions.
    """
    if cfg.world == "worked":
        raise ValueError("the worked world's policy turns queries and keys by rotary positions; the bridge hands TRL "
                         "a GPT-2 model, whose positions are learned embeddings")
    if cfg.stale or cfg.selection != "none" or cfg.faults:
        raise ValueError("TRL has no equivalent of stale rollouts, selection rules or injected faults")
    if cfg.verifier not in rw.VERIFIERS:
        raise ValueError(f"verifier {cfg.verifier!r}: the bridge hands TRL one of rlbook's rule-based verifiers "
                         f"({', '.join(rw.VERIFIERS)}) as its reward function, not a learned judge")
    if cfg.temperature != 1.0:
        raise ValueError(f"temperature {cfg.temperature!r}: rlbook samples at logits / T and trains on log-probs at "
                         "T = 1, TRL samples and trains at T; they are the same run only at temperature 1")
    prompts = prompts_per_step or cfg.prompts_per_step or len(split("train", cfg.world))
    rows = prompts * cfg.group_size
    if rows % processes:
        raise ValueError(f"{rows} completions per step do not split evenly over {processes} processes")
    kind = loss_type(cfg)
    return {"num_generations": cfg.group_size, "per_device_train_batch_size": rows // processes,
            "max_completion_length": cfg.budget, "temperature": cfg.temperature, "top_k": 0, "top_p": 1.0,
            "learning_rate": cfg.lr, "lr_scheduler_type": "constant_with_warmup" if cfg.warmup else "constant",
            "warmup_steps": cfg.warmup * cfg.updates_per_batch, "weight_decay": 0.0,
            "max_grad_norm": 0.0, "optim": "adamw_torch_fused", "scale_rewards": ADVANTAGE_TO_SCALE_REWARDS[cfg.advantage],
            "loss_type": kind, "epsilon": cfg.eps_low,
            "epsilon_high": cfg.cispo_cap if kind == "cispo" else cfg.eps_high,
            "beta": cfg.kl_beta, "use_bias_correction_kl": cfg.kl_estimator == "k3-ratio",
            "num_iterations": cfg.updates_per_batch, "reward_weights": [reward_weight(cfg)],
            "max_steps": cfg.steps * cfg.updates_per_batch}


OPTION_FIELDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "group_size": ("samples per prompt, G", ("num_generations",)),
    "prompts_per_step": ("prompts per step", ("per_device_train_batch_size",)),
    "budget": ("token budget", ("max_completion_length",)),
    "temperature": ("sampling temperature", ("temperature", "top_k", "top_p")),
    "lr": ("AdamW learning rate, after the warm-up", ("learning_rate", "weight_decay", "max_grad_norm", "optim")),
    "warmup": ("linear learning-rate warm-up, RL steps", ("lr_scheduler_type", "warmup_steps")),
    "advantage": ("advantage", ("scale_rewards",)),
    "loss": ("policy loss", ("loss_type",)),
    "aggregation": ("loss aggregation", ("loss_type",)),
    "eps_low": ("PPO clip, lower", ("epsilon",)),
    "eps_high": ("PPO clip, upper", ("epsilon_high",)),
    "cispo_cap": ("CISPO cap", ("epsilon_high",)),
    "kl_beta": ("KL penalty to the reference", ("beta",)),
    "kl_estimator": ("the KL penalty's estimator", ("use_bias_correction_kl",)),
    "updates_per_batch": ("gradient steps per batch", ("num_iterations",)),
    "reward_scale": ("reward scale (times G / (G - 1) under advantage 'rloo')", ("reward_weights",)),
    "steps": ("RL steps", ("max_steps",)),
}
"""Each translated :class:`~rlbook.core.rl.RLConfig` field: what it is, and the ``GRPOConfig`` fields it sets."""


def grpo_defaults(names) -> dict[str, Any]:
    """The installed ``trl.GRPOConfig``'s default value of each field in ``names``; empty without TRL (appendix)."""
    if not have_trl():
        return {}
    from trl import GRPOConfig

    fields = GRPOConfig.__dataclass_fields__
    return {name: fields[name].default for name in names}


def option_rows(cfg: RLConfig, prompts_per_step: int | None = None) -> list[list[str]]:
    """One row per translated field of ``cfg``: meaning, rlbook value, TRL setting, TRL default (appendix).

    Every value is read from ``cfg``, from :func:`grpo_kwargs` and from the
    installed TRL, so the table cannot drift from the code. A clip field that
    the run's loss does not use (``cispo_cap`` under PPO) says so. Without
    TRL installed the default column says "TRL not installed".
    """
    kwargs = grpo_kwargs(cfg, prompts_per_step)
    names = sorted({name for _, fields in OPTION_FIELDS.values() for name in fields})
    defaults = grpo_defaults(names)
    unused = {"ppo": {"cispo_cap"}, "pg": {"cispo_cap"}, "cispo": {"eps_low", "eps_high"}}[cfg.loss]
    rows = []
    for key, (meaning, fields) in OPTION_FIELDS.items():
        value = getattr(cfg, key)
        if key == "prompts_per_step":
            value = prompts_per_step or cfg.prompts_per_step or len(split("train", cfg.world))
        trl = "not used by this loss" if key in unused else ", ".join(f"{f} = {kwargs[f]!r}" for f in fields)
        default = ", ".join(f"{defaults[f]!r}" for f in fields) if defaults else "TRL not installed"
        rows.append([meaning, f"{key} = {value!r}", trl, default])
    return rows


def choice_rows() -> list[list[str]]:
    """Every named choice of rlbook (advantages, aggregations, losses, KL estimators) and its TRL setting (appendix).

    Rows: kind, rlbook name, TRL setting, note, citation key. The names come
    from :data:`rlbook.core.advantages.ADVANTAGE_METHODS`,
    :data:`rlbook.core.losses.AGGREGATIONS`, :data:`rlbook.core.losses.LOSSES` and
    :data:`rlbook.core.losses.KL_ESTIMATORS`.
    """
    notes = {"centered": "no scaling: the group mean is the only baseline",
             "group_std": "rlbook divides by std + 1e-6 with ddof 0; TRL by std + 1e-4 with ddof 1",
             "batch_std": "one std for the whole batch; TRL uses ddof 1 and 1e-4",
             "rloo": "GRPOTrainer has no leave-one-out option; RLOO is G / (G - 1) x the centred advantage, "
                     "so reward_weights carries the factor G / (G - 1)",
             "token_mean": "every generated token of the batch weighs the same (also bnpo on one device)",
             "seq_mean": "mean over sequences of each sequence's token mean",
             "constant": "sum divided by batch x max_completion_length"}
    rows = [["advantage", name, f"scale_rewards = {ADVANTAGE_TO_SCALE_REWARDS[name]!r}", notes[name], CITATIONS[name]]
            for name in adv_lib.ADVANTAGE_METHODS]
    rows += [["aggregation", name, f"loss_type = {AGGREGATION_TO_LOSS_TYPE[name]!r}", notes[name], CITATIONS[name]]
             for name in losses.AGGREGATIONS]
    rows += [["loss", name, {"ppo": "epsilon, epsilon_high", "pg": "num_iterations = 1",
                             "cispo": "loss_type = 'cispo', epsilon_high"}[name], LOSS_NOTES[name], CITATIONS[name]]
             for name in losses.LOSSES]
    kl_note = ("both add beta x the k3 estimate of KL to the reference, with the per-token gradient "
               "beta x (1 - exp(ref - logp)); TRL's default, use_bias_correction_kl = True, is another estimator")
    ratio_note = ("k3 times the differentiable importance ratio: the same value on-policy, the per-token gradient "
                  "beta x ratio x (logp - ref), whose average is the gradient of KL(pi || ref) on fresh and "
                  "reused batches")
    rows.append(["KL estimator", "k3", "beta = kl_beta, use_bias_correction_kl = False", kl_note, CITATIONS["kl_beta"]])
    rows.append(["KL estimator", "k3-ratio", "beta = kl_beta, use_bias_correction_kl = True", ratio_note,
                 CITATIONS["k3-ratio"]])
    return rows


METRIC_NAMES: dict[str, str] = {
    "reward_mean": "reward",
    "reward_std": "reward_std",
    "zero_variance_frac": "frac_reward_zero_std",
    "completion_len": "completions/mean_length",
    "loss": "loss",
    "kl": "kl",
    "entropy": "entropy",
    "clip_fraction": "clip_ratio/region_mean",
    "clip_low_fraction": "clip_ratio/low_mean",
    "clip_high_fraction": "clip_ratio/high_mean",
    **{f"{status}_rate": f"verifier/{status}" for status in rw.STATUSES},
}
"""Each per-step metric of :attr:`rlbook.runs.Run.metrics` and the key TRL logs it under (appendix).

The ``verifier/*`` keys are logged by :class:`VerifierReward`; TRL logs
the rest. Under ``loss_type="cispo"`` the clip fraction is ``cispo_clip_ratio``
(see :func:`metrics_from_log`). TRL's ``completions/clipped_ratio``, the share
of completions without an end-of-sequence token, is the verifier's
``incomplete`` share: the audit checks that they agree. A shared name is not
always a shared meaning: :data:`METRIC_NOTES` says where the two differ.
"""

METRIC_NOTES: dict[str, str] = {
    "reward_mean": "TRL's is the reward times reward_weights (7.5 where rlbook logs 0.75 for reward_scale 10, "
                   "and 16/15 x rlbook's under rloo); "
                   "its rewards/NAME/mean, NAME the reward function, is rlbook's",
    "reward_std": "scaled by reward_weights in TRL, as reward is",
    "zero_variance_frac": "the same under scale_rewards 'none' and 'group'; under 'batch' TRL tests the batch's "
                          "one std, so it logs only 0 or 1",
    "loss": "under loss pg the values differ (rlbook's -A x logp, TRL's -A x ratio), the gradients do not",
    "kl": "TRL logs the token mean whatever its loss_type; rlbook aggregates as the loss does",
    "clip_fraction": "under cispo TRL's cispo_clip_ratio counts a capped ratio only where A > 0, rlbook's "
                     "clip_fraction wherever the cap binds (ratio 5, A = -1, cap 4: 1 in rlbook, 0 in TRL)",
}
"""Where an rlbook metric and the TRL key of :data:`METRIC_NAMES` measure different things (appendix).

Metrics missing here mean the same in both libraries for every run the
bridge translates. With ``updates_per_batch`` above 1, rlbook's update
metrics (``loss``, ``kl``, ``clip_*``) are those of a batch's last update,
while TRL logs one entry per optimiser step, that is per update.
"""
