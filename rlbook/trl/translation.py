"""The book's RL choices and metrics under TRL's names (appendix): :func:`grpo_kwargs` builds a ``GRPOConfig``'s
arguments from an :class:`~rlbook.core.rl.RLConfig`, and the appendix's tables say what each choice and metric means
in each library.
"""

from __future__ import annotations

from fractions import Fraction
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
    "gspo": "importance_sampling_level sequence: one ratio per answer, the mean of its tokens' log-ratios, "
    "clipped at epsilon and epsilon_high; loss_type gives the aggregation (grpo is the paper's)",
}
"""How each of rlbook's losses (:data:`rlbook.core.losses.LOSSES`) is expressed in TRL."""

CITATIONS = {
    "centered": "liu2025understanding",
    "group_std": "shao2024deepseekmath",
    "batch_std": "",
    "rloo": "ahmadian2024back",
    "token_mean": "yu2025dapo",
    "seq_mean": "shao2024deepseekmath",
    "constant": "liu2025understanding",
    "ppo": "schulman2017proximal",
    "pg": "williams1992simple",
    "cispo": "minimax2025minimaxm1",
    "gspo": "zheng2025group",
    "overlong": "yu2025dapo",
    "kl_beta": "shao2024deepseekmath",
    "k3-ratio": "schulman2020approximating",
}
"""The paper each choice comes from (keys of references.bib); empty where none names it."""


def reward_weight(cfg: RLConfig) -> float:
    """TRL's ``reward_weights`` entry for a run: its reward scale, times ``G / (G - 1)`` under RLOO (appendix).

    Leaving one out needs groups of at least 2 (:func:`rlbook.core.advantages.rloo`): ValueError otherwise.
    """
    size = cfg.group_size
    if cfg.advantage == "rloo" and size < 2:
        raise ValueError(f"leaving one out needs groups of at least 2, got group_size {size}")
    return cfg.reward_scale * (size / (size - 1) if cfg.advantage == "rloo" else 1.0)


def loss_type(cfg: RLConfig) -> str:
    """TRL's ``loss_type`` for a run's loss and aggregation; ValueError where TRL has no equivalent (appendix)."""
    if cfg.loss == "cispo":
        if cfg.aggregation != "token_mean":
            raise ValueError(f"TRL's cispo loss aggregates over tokens only, got aggregation {cfg.aggregation!r}")
        return "cispo"
    if cfg.loss == "pg" and cfg.updates_per_batch != 1:
        raise ValueError(
            "TRL has no unclipped policy-gradient loss; it equals the clipped one only when updates_per_batch is 1"
        )
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
    ``max_steps`` counts optimizer steps: ``steps x updates_per_batch``, and so does
    ``warmup_steps``: ``warmup x updates_per_batch`` (appendix exercise A.1).
    The two warm-ups are not the same schedule (:func:`warmup_rates`,
    :func:`warmup_note`): rlbook holds ``lr x s / warmup`` for every update of
    RL step ``s``, TRL's ``constant_with_warmup`` gives optimiser step ``k``
    ``lr x (k - 1) / warmup_steps``, starting from 0. With one update per
    batch TRL runs one step behind; with several it also rises within a batch.
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
        raise ValueError(
            "the worked world's policy turns queries and keys by rotary positions; the bridge hands TRL "
            "a GPT-2 model, whose positions are learned embeddings"
        )
    if cfg.stale or cfg.selection != "none" or cfg.faults or cfg.refill_rounds:
        raise ValueError(
            "TRL has no equivalent of stale rollouts, selection rules, injected faults or DAPO's dynamic sampling"
        )
    if cfg.overlong == "shape":
        raise ValueError(UNTRANSLATED["overlong"][2])
    if cfg.verifier not in rw.VERIFIERS:
        raise ValueError(
            f"verifier {cfg.verifier!r}: the bridge hands TRL one of rlbook's rule-based verifiers "
            f"({', '.join(rw.VERIFIERS)}) as its reward function, not a learned judge"
        )
    if cfg.temperature != 1.0:
        raise ValueError(
            f"temperature {cfg.temperature!r}: rlbook samples at logits / T and trains on log-probs at "
            "T = 1, TRL samples and trains at T; they are the same run only at temperature 1"
        )
    prompts = prompts_per_step or cfg.prompts_per_step or len(split("train", cfg.world))
    rows = prompts * cfg.group_size
    if rows % processes:
        raise ValueError(f"{rows} completions per step do not split evenly over {processes} processes")
    kind = loss_type(cfg)
    return {
        "num_generations": cfg.group_size,
        "per_device_train_batch_size": rows // processes,
        "max_completion_length": cfg.budget,
        "temperature": cfg.temperature,
        "top_k": 0,
        "top_p": 1.0,
        "learning_rate": cfg.lr,
        "lr_scheduler_type": "constant_with_warmup" if cfg.warmup else "constant",
        "warmup_steps": cfg.warmup * cfg.updates_per_batch,
        "weight_decay": 0.0,
        "max_grad_norm": 0.0,
        "optim": "adamw_torch_fused",
        "scale_rewards": ADVANTAGE_TO_SCALE_REWARDS[cfg.advantage],
        "loss_type": kind,
        "epsilon": cfg.eps_low,
        "epsilon_high": cfg.cispo_cap if kind == "cispo" else cfg.eps_high,
        "importance_sampling_level": "sequence" if cfg.loss == "gspo" else "token",
        "mask_truncated_completions": cfg.overlong == "filter",
        "beta": cfg.kl_beta,
        "use_bias_correction_kl": cfg.kl_estimator == "k3-ratio",
        "num_iterations": cfg.updates_per_batch,
        "reward_weights": [reward_weight(cfg)],
        "max_steps": cfg.steps * cfg.updates_per_batch,
    }


def warmup_rates(cfg: RLConfig, optimiser_steps: int) -> tuple[list[float], list[float]]:
    """The learning rate of optimiser steps 1 to ``optimiser_steps`` in rlbook and in TRL, as :func:`grpo_kwargs`
    sets TRL up (appendix).

    rlbook: :func:`rlbook.core.rl.warmup_lr` of the RL step, the same for each
    of its ``updates_per_batch`` updates; TRL: ``constant_with_warmup`` over
    ``warmup x updates_per_batch`` optimiser steps, ``lr x (k - 1) / warmup_steps``
    at step ``k`` (transformers' ``get_constant_schedule_with_warmup``).
    """
    from rlbook.core.rl import warmup_lr

    updates, span = cfg.updates_per_batch, cfg.warmup * cfg.updates_per_batch
    book = [warmup_lr(cfg.lr, cfg.warmup, (k - 1) // updates + 1) for k in range(1, optimiser_steps + 1)]
    trl = [cfg.lr * min(1.0, (k - 1) / span) if span else cfg.lr for k in range(1, optimiser_steps + 1)]
    return book, trl


def warmup_note(cfg: RLConfig) -> str:
    """How TRL's warm-up differs from rlbook's for ``cfg``, exactly, in one sentence (appendix's options table).

    The average gap over the warm-up's ``W x u`` optimiser steps (``W`` RL
    steps of ``u`` updates) is ``lr x (u + 1) / (2 W u)``: rlbook's rates
    average ``(W + 1) / (2 W)`` of ``lr``, TRL's ``(W u - 1) / (2 W u)``.
    """
    if not cfg.warmup:
        return "no warm-up in either library"
    updates, span = cfg.updates_per_batch, cfg.warmup * cfg.updates_per_batch
    gap = Fraction(updates + 1, 2 * span)
    ours = f"lr × s / {cfg.warmup} for RL step s" + (f" (all {updates} of its updates)" if updates > 1 else "")
    lower = f"lr / {gap.denominator}" if gap.numerator == 1 else f"lr × {gap}"
    return (
        f"optimiser step k runs at lr × (k − 1) / {span} in TRL, at {ours} in rlbook: "
        f"TRL's rate is lower by {lower} on average over the warm-up"
    )


OPTION_FIELDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "group_size": ("samples per prompt (G)", ("num_generations",)),
    "prompts_per_step": ("prompts per step", ("per_device_train_batch_size",)),
    "budget": ("token budget", ("max_completion_length",)),
    "temperature": ("sampling temperature", ("temperature", "top_k", "top_p")),
    "lr": ("learning rate (AdamW)", ("learning_rate", "weight_decay", "max_grad_norm", "optim")),
    "warmup": ("warm-up, in RL steps", ("lr_scheduler_type", "warmup_steps")),
    "advantage": ("advantage", ("scale_rewards",)),
    "loss": ("policy loss", ("loss_type",)),
    "aggregation": ("loss aggregation", ("loss_type",)),
    "eps_low": ("PPO clip, lower", ("epsilon",)),
    "eps_high": ("PPO clip, upper", ("epsilon_high",)),
    "cispo_cap": ("CISPO cap", ("epsilon_high",)),
    "kl_beta": ("KL penalty", ("beta",)),
    "kl_estimator": ("KL estimator", ("use_bias_correction_kl",)),
    "updates_per_batch": ("updates per batch", ("num_iterations",)),
    "reward_scale": ("reward scale", ("reward_weights",)),
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


def code(text: str) -> str:
    """``text`` as a Markdown code span, for a table cell that mixes code and words (appendix)."""
    return f"`{text}`"


def option_rows(cfg: RLConfig, prompts_per_step: int | None = None) -> list[list[str]]:
    """One row per ``GRPOConfig`` argument the translation of ``cfg`` sets: meaning, rlbook field, argument, default.

    Every value is read from ``cfg``, from :func:`grpo_kwargs` and from the
    installed TRL, so the table cannot drift from the code. A field that sets
    several arguments (the learning rate sets four) gives one row per
    argument, its meaning and rlbook field on the first; cells are short, so
    the table fits a page's column (the warm-up's difference is
    :func:`warmup_note`, said beside the table). A clip field that the run's
    loss does not use (``cispo_cap`` under PPO) says so. Without TRL
    installed the default column says "TRL not installed" (appendix).
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
        first = [meaning, code(f"{key}={value!r}")]
        if key in unused:
            rows.append(first + ["not used by this loss", ""])
            continue
        for i, name in enumerate(fields):
            default = code(repr(defaults[name])) if defaults else "TRL not installed"
            rows.append((first if i == 0 else ["", ""]) + [code(f"{name}={kwargs[name]!r}"), default])
    return rows


NO_EQUIVALENT = "no equivalent"
"""What the choices table says where TRL has no option for an rlbook choice (:func:`choice_rows`)."""

UNTRANSLATED: dict[str, tuple[str, str, str]] = {
    "stale": (
        "rollouts",
        "`stale` > 0",
        "TRL samples every batch from the current policy; num_iterations reuses a batch, but at once",
    ),
    "selection": (
        "rollouts",
        "`selection='accepted'`",
        ("TRL learns from every completion of a batch; mask_truncated_completions drops only those the budget cut off"),
    ),
    "faults": (
        "response policy",
        "`guard`, `faults`",
        (
            "rlbook's guard skips a broken batch or stops the run and records why; TRL has no such rule (a "
            "TrainerCallback could stop a run)"
        ),
    ),
    "verifier": (
        "reward",
        "`verifier='judge'`",
        "TRL accepts a reward model, but the bridge hands it rlbook's rule-based verifiers only",
    ),
    "world": (
        "policy",
        "`world='worked'`",
        (
            "the worked world's policy turns queries and keys by rotary positions; the bridge's GPT-2 model "
            "learns its positions, so it cannot hold that policy"
        ),
    ),
    "temperature": (
        "sampling",
        "`temperature` ≠ 1",
        "rlbook samples at T and learns from the log-probabilities at T = 1; TRL uses T for both",
    ),
    "refill_rounds": (
        "rollouts",
        "`refill_rounds` > 0",
        (
            "DAPO's dynamic sampling: GRPOTrainer learns from every group it sampled, silent ones included, and "
            "samples no more to replace them"
        ),
    ),
    "overlong": (
        "reward",
        "`overlong='shape'`",
        (
            "DAPO's length penalty is TRL's reward function get_soft_overlong_punishment, a second reward beside the "
            "verifier; the bridge hands TRL the verifier alone"
        ),
    ),
}
"""The choices of an :class:`~rlbook.core.rl.RLConfig` that :func:`grpo_kwargs` refuses: kind, setting (Markdown),
why (appendix)."""


def choice_rows() -> list[list[str]]:
    """Every named choice of rlbook and its TRL setting, or :data:`NO_EQUIVALENT` where TRL has none (appendix).

    Rows: kind, rlbook setting, TRL setting (code spans, or words), note,
    citation key. The named choices come from
    :data:`rlbook.core.advantages.ADVANTAGE_METHODS`,
    :data:`rlbook.core.losses.AGGREGATIONS`, :data:`rlbook.core.losses.LOSSES` and
    :data:`rlbook.core.losses.KL_ESTIMATORS`; then the choices
    :func:`grpo_kwargs` refuses (:data:`UNTRANSLATED`), each marked
    :data:`NO_EQUIVALENT`.
    """
    notes = {
        "centered": "no scaling: the group mean is the only baseline",
        "group_std": "rlbook divides by std + 1e-6 with ddof 0; TRL by std + 1e-4 with ddof 1",
        "batch_std": "one std for the whole batch; TRL uses ddof 1 and 1e-4",
        "rloo": "GRPOTrainer has no leave-one-out option; RLOO is G / (G - 1) x the centred advantage, "
        "so reward_weights carries the factor G / (G - 1)",
        "token_mean": "every generated token of the batch weighs the same (also bnpo on one device)",
        "seq_mean": "mean over sequences of each sequence's token mean",
        "constant": "sum divided by batch x max_completion_length",
    }
    rows = [
        [
            "advantage",
            code(name),
            code(f"scale_rewards={ADVANTAGE_TO_SCALE_REWARDS[name]!r}"),
            notes[name],
            CITATIONS[name],
        ]
        for name in adv_lib.ADVANTAGE_METHODS
    ]
    rows += [
        ["aggregation", code(name), code(f"loss_type={AGGREGATION_TO_LOSS_TYPE[name]!r}"), notes[name], CITATIONS[name]]
        for name in losses.AGGREGATIONS
    ]
    settings = {
        "ppo": "epsilon, epsilon_high",
        "pg": "num_iterations=1",
        "cispo": "loss_type='cispo', epsilon_high",
        "gspo": "importance_sampling_level='sequence', epsilon, epsilon_high",
    }
    rows += [["loss", code(name), code(settings[name]), LOSS_NOTES[name], CITATIONS[name]] for name in losses.LOSSES]
    kl_note = (
        "both add beta x the k3 estimate of KL to the reference, with the per-token gradient "
        "beta x (1 - exp(ref - logp)); TRL's default, use_bias_correction_kl = True, is another estimator"
    )
    ratio_note = (
        "k3 times the differentiable importance ratio: the same value on-policy, the per-token gradient "
        "beta x ratio x (logp - ref), whose average is the gradient of KL(pi || ref) on fresh and "
        "reused batches"
    )
    rows.append(["KL estimator", code("k3"), code("use_bias_correction_kl=False"), kl_note, CITATIONS["kl_beta"]])
    rows.append(
        ["KL estimator", code("k3-ratio"), code("use_bias_correction_kl=True"), ratio_note, CITATIONS["k3-ratio"]]
    )
    rows.append(
        [
            "rollouts",
            code("overlong='filter'"),
            code("mask_truncated_completions=True"),
            "answers the budget cut off leave the loss and stay in their group's baseline",
            CITATIONS["overlong"],
        ]
    )
    rows += [[kind, setting, NO_EQUIVALENT, note, ""] for kind, setting, note in UNTRANSLATED.values()]
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
    "kl": "TRL logs the token mean whatever its loss_type; rlbook aggregates as the loss does. Under "
    "use_bias_correction_kl (kl_estimator 'k3-ratio') TRL logs ratio x k3, rlbook plain k3: the same on a "
    "batch's first update, not on later ones (logp -1, old -1.5, ref -2: TRL 0.6065, rlbook 0.3679)",
    "clip_fraction": "under cispo TRL's cispo_clip_ratio counts a capped ratio only where A > 0, rlbook's "
    "clip_fraction wherever the cap binds (ratio 5, A = -1, cap 4: 1 in rlbook, 0 in TRL)",
}
"""Where an rlbook metric and the TRL key of :data:`METRIC_NAMES` measure different things (appendix).

Metrics missing here mean the same in both libraries for every run the
bridge translates. With ``updates_per_batch`` above 1, rlbook's update
metrics (``loss``, ``kl``, ``clip_*``) are those of a batch's last update,
while TRL logs one entry per optimiser step, that is per update.
"""


def metric_rows() -> list[list[str]]:
    """Each per-step metric of an rlbook run, its TRL log key, and where the two differ (appendix's metrics table)."""
    return [[code(ours), code(theirs), METRIC_NOTES.get(ours, "")] for ours, theirs in METRIC_NAMES.items()]
