"""The book's task, verifier, audit and run record on Hugging Face TRL's ``GRPOTrainer`` (appendix).

TRL (von Werra et al. 2022) is the trainer a reader is likely to use next: its
``GRPOTrainer`` runs the same loop as :func:`rlbook.rl.train_rl` (sample a
group per prompt, score, centre, clipped token-level update) and scales out
with accelerate or DeepSpeed. This module carries the book over to it,
offline and on CPU:

- :func:`char_tokenizer` and :func:`to_gpt2` / :func:`from_gpt2`: the book's
  character vocabulary as a Hugging Face tokenizer, and the book's policy as
  a ``GPT2LMHeadModel`` holding the very same weights (and back again, so
  that rlbook's own evaluation can judge what TRL trained);
- :class:`VerifierReward`: an rlbook verifier as a TRL reward function that
  keeps every rollout it scores;
- :func:`grpo_kwargs` and the tables :func:`option_rows`,
  :func:`choice_rows`, :data:`METRIC_NAMES`: each choice of an
  :class:`~rlbook.rl.RLConfig` and each logged metric under TRL's name;
- :func:`run_grpo` / :func:`load_run`: a TRL run of the book's task, cached
  like the book's own runs, returned as a :class:`TRLRun` whose ``metrics``,
  ``rollouts`` and ``evals`` have the shapes of :class:`rlbook.runs.Run`'s,
  so the book's audit reads it unchanged; :func:`trl_record` writes its run
  record;
- :func:`peer_benchmark`: one RL step of rlbook against one step of TRL on
  the same model and batch (``rlbook bench --peer trl``);
- :func:`accelerate_yaml` and :func:`main`: the same run on several GPUs with
  ``accelerate launch`` (documented, untested here).

Nothing here imports TRL at module level: without the ``trl`` extra the
module still imports, :func:`have_trl` says False and :data:`INSTALL_HINT`
says what to install.
"""
from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import statistics
import tempfile
import time
import warnings
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from . import advantages as adv_lib
from . import losses
from . import record as rec
from . import rewards as rw
from . import runs
from .policy import Policy, PolicyConfig, weights_hash
from .rl import Batch, RLConfig, checkpoint_eval, credit, make_verifier, reference_logprobs, score_guarded, update
from .sampling import sample
from .train import adamw
from .world import EOT, EOT_ID, VOCAB, decode, split

TRL_PACKAGES = ("trl", "transformers", "accelerate", "datasets")
INSTALL_HINT = ('TRL is not installed. Install the extra, keeping the CPU build of torch: '
                'pip install -e ".[trl]" -c constraints-trl.txt')


def have_trl() -> bool:
    """Whether the ``trl`` extra (trl, transformers, accelerate, datasets) is importable (appendix)."""
    return all(importlib.util.find_spec(name) is not None for name in TRL_PACKAGES)


def trl_versions() -> dict[str, str]:
    """Installed versions of the ``trl`` extra's packages, "not installed" for a missing one (appendix)."""
    found = {}
    for name in TRL_PACKAGES:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = "not installed"
    return found


# ---------------------------------------------------------------- tokenizer and model

def char_tokenizer():
    """The book's character vocabulary as a ``PreTrainedTokenizerFast`` with rlbook's token ids (appendix).

    A ``tokenizers`` WordLevel model over :data:`rlbook.world.VOCAB` (id = the
    character's index, as :func:`rlbook.world.encode`), a pre-tokenizer that
    splits text into single characters and a decoder that joins them back.
    The end-of-turn mark is the end-of-sequence token; the vocabulary has no
    padding character, so, as in GPT-2, the end-of-sequence token also serves
    as padding and beginning of text. Padding is harmless: TRL masks every
    position after a completion's first end-of-sequence token, and all
    prompts of one world have the same length. Prompts are padded on the
    left, as generation needs.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.WordLevel(vocab={ch: i for i, ch in enumerate(VOCAB)}, unk_token=None))
    core.pre_tokenizer = pre_tokenizers.Split("", "isolated")
    core.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(tokenizer_object=core, eos_token=EOT, pad_token=EOT, bos_token=EOT,
                                   padding_side="left")


def gpt2_config(cfg: PolicyConfig):
    """A ``GPT2Config`` with the shape of rlbook's policy (appendix).

    Same width, depth, heads, context and vocabulary; exact GELU (GPT-2's
    default is the tanh approximation); no dropout; an output layer of its
    own (rlbook does not tie it to the token embedding); the end-of-turn id
    as end, beginning and padding token.
    """
    from transformers import GPT2Config

    return GPT2Config(vocab_size=cfg.vocab_size, n_positions=cfg.block_size, n_embd=cfg.d_model,
                      n_layer=cfg.n_layer, n_head=cfg.n_head, activation_function="gelu", resid_pdrop=0.0,
                      embd_pdrop=0.0, attn_pdrop=0.0, tie_word_embeddings=False, bos_token_id=EOT_ID,
                      eos_token_id=EOT_ID, pad_token_id=EOT_ID)


_TOP_LEVEL = (("tok.weight", "transformer.wte.weight"), ("pos.weight", "transformer.wpe.weight"),
              ("ln_f.weight", "transformer.ln_f.weight"), ("ln_f.bias", "transformer.ln_f.bias"),
              ("head.weight", "lm_head.weight"))
_BLOCK_NORMS = (("ln1", "ln_1"), ("ln2", "ln_2"))
_BLOCK_LINEARS = (("attn.qkv", "attn.c_attn"), ("attn.out", "attn.c_proj"), ("mlp.0", "mlp.c_fc"),
                  ("mlp.2", "mlp.c_proj"))


def weight_names(cfg: PolicyConfig) -> list[tuple[str, str, bool]]:
    """``(rlbook name, GPT-2 name, transposed)`` for every weight of the policy (appendix).

    GPT-2 keeps its linear layers as ``Conv1D`` modules whose weight is the
    transpose of ``nn.Linear``'s; the query/key/value layout (all queries,
    then keys, then values, heads contiguous) is the same in both models.
    """
    names = [(ours, theirs, False) for ours, theirs in _TOP_LEVEL]
    for i in range(cfg.n_layer):
        ours, theirs = f"blocks.{i}.", f"transformer.h.{i}."
        for a, b in _BLOCK_NORMS:
            names += [(f"{ours}{a}.{p}", f"{theirs}{b}.{p}", False) for p in ("weight", "bias")]
        for a, b in _BLOCK_LINEARS:
            names += [(f"{ours}{a}.weight", f"{theirs}{b}.weight", True), (f"{ours}{a}.bias", f"{theirs}{b}.bias", False)]
    return names


def to_gpt2(policy: Policy):
    """A ``GPT2LMHeadModel`` computing exactly what ``policy`` computes (appendix).

    The weights are copied one by one (see :func:`weight_names`); the two
    models give the same logits for the same ids.
    """
    from transformers import GPT2LMHeadModel

    state = policy.state_dict()
    model = GPT2LMHeadModel(gpt2_config(policy.cfg))
    converted = {theirs: (state[ours].t() if flip else state[ours]).detach().clone().contiguous()
                 for ours, theirs, flip in weight_names(policy.cfg)}
    model.load_state_dict(converted, strict=True)
    return model


def from_gpt2(model, version: str = "trl") -> Policy:
    """rlbook's :class:`~rlbook.policy.Policy` holding a ``GPT2LMHeadModel``'s weights (appendix).

    The inverse of :func:`to_gpt2`, so that rlbook's sampler, evaluation and
    weight hash apply to a model that TRL trained. The shape is read from the
    model's config, the weights are copied to the CPU, and the result carries
    ``version``.
    """
    c = model.config
    cfg = PolicyConfig(vocab_size=c.vocab_size, block_size=c.n_positions, n_layer=c.n_layer, n_head=c.n_head,
                       d_model=c.n_embd)
    state = {k: v.detach().float().cpu() for k, v in model.state_dict().items()}
    policy = Policy(cfg)
    policy.load_state_dict({ours: (state[theirs].t() if flip else state[theirs]).clone().contiguous()
                            for ours, theirs, flip in weight_names(cfg)}, strict=True)
    policy.version = version
    return policy


# ---------------------------------------------------------------- reward

class VerifierReward:
    """An rlbook verifier as a TRL reward function that keeps every rollout it scores (appendix).

    TRL calls it once per generation batch with ``prompts``, ``completions``
    and ``completion_ids``. The ``completions`` TRL passes are decoded with
    special tokens skipped, and the end-of-turn mark is the end-of-sequence
    token, so it is missing from them: every answer would read as cut off by
    the budget (``incomplete``). The reward therefore decodes
    ``completion_ids`` itself with :func:`rlbook.world.decode`, which keeps
    the mark. It logs the share of each verifier status through TRL's
    ``log_metric`` (keys ``verifier/<status>``) and appends one entry per call
    to ``rollouts``: ``step`` (the optimizer step that learns from the batch,
    counted from 1 as in :func:`rlbook.rl.train_rl`), ``prompts``,
    ``completion_ids``, ``completions`` (rlbook's decoding),
    ``trl_completions`` (TRL's text), ``rewards`` and ``statuses``.
    """

    def __init__(self, verifier=None):
        self.verifier = verifier or rw.ExactVerifier()
        self.rollouts: list[dict] = []
        self.__name__ = self.verifier.name

    def __call__(self, prompts, completions, completion_ids, trainer_state=None, log_metric=None, **_) -> list[float]:
        texts = [decode(ids) for ids in completion_ids]
        verdicts = [self.verifier(p, t) for p, t in zip(prompts, texts)]
        statuses = [v.status for v in verdicts]
        if log_metric is not None:
            for status in rw.STATUSES:
                log_metric(f"verifier/{status}", statuses.count(status) / len(statuses))
        step = trainer_state.global_step + 1 if trainer_state is not None else len(self.rollouts) + 1
        self.rollouts.append({"step": step, "prompts": list(prompts),
                              "completion_ids": [[int(i) for i in ids] for ids in completion_ids],
                              "completions": texts, "trl_completions": list(completions),
                              "rewards": [v.reward for v in verdicts], "statuses": statuses})
        return [v.reward for v in verdicts]


# ---------------------------------------------------------------- the book's names in TRL's terms

ADVANTAGE_TO_SCALE_REWARDS = {"centered": "none", "group_std": "group", "batch_std": "batch"}
"""rlbook's advantage methods (:data:`rlbook.advantages.ADVANTAGE_METHODS`) as TRL's ``scale_rewards``."""

AGGREGATION_TO_LOSS_TYPE = {"token_mean": "dapo", "seq_mean": "grpo", "constant": "dr_grpo"}
"""rlbook's loss aggregations (:data:`rlbook.losses.AGGREGATIONS`) as TRL's ``loss_type`` for a clipped loss.

``token_mean`` is also TRL's ``bnpo``: the two differ only in counting the
tokens of one device's micro-batch (bnpo) or of the whole accumulated batch
(dapo), the same thing for one batch on one device.
"""

LOSS_NOTES = {
    "ppo": "clipped surrogate: epsilon = eps_low, epsilon_high = eps_high; loss_type gives the aggregation",
    "pg": "no separate option: with num_iterations = 1 the ratio is 1, where the clipped loss has "
          "the plain policy gradient",
    "cispo": "loss_type cispo caps the ratio itself at epsilon_high (rlbook's cispo_cap) and "
             "aggregates over tokens (token_mean only)",
}
"""How each of rlbook's losses (:data:`rlbook.losses.LOSSES`) is expressed in TRL."""

CITATIONS = {"centered": "liu2025understanding", "group_std": "shao2024deepseekmath", "batch_std": "",
             "token_mean": "yu2025dapo", "seq_mean": "shao2024deepseekmath", "constant": "liu2025understanding",
             "ppo": "schulman2017proximal", "pg": "williams1992simple", "cispo": "minimax2025minimaxm1",
             "kl_beta": "shao2024deepseekmath"}
"""The paper each choice comes from (keys of references.bib); empty where none names it."""


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
    :mod:`rlbook.adamw`; TRL's default, PyTorch's fused AdamW, takes the same step) with a linear learning-rate warm-up over ``cfg.warmup`` steps and then a
    constant rate, no weight decay and no gradient clipping, said here
    explicitly because TRL's defaults differ (1e-6, a linear decay, clipping
    at 1.0).
    TRL's ``constant_with_warmup`` counts optimiser steps and starts its
    warm-up at a rate of 0, so its warm-up runs one optimiser step behind
    rlbook's, which takes its first step at ``lr / warmup``.
    ``max_steps`` counts optimizer steps: ``steps x updates_per_batch``.
    Choices TRL has no option for (stale rollouts, keep-accepted selection,
    injected faults) raise ValueError.
    """
    if cfg.stale or cfg.selection != "none" or cfg.faults:
        raise ValueError("TRL has no equivalent of stale rollouts, selection rules or injected faults")
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
            "beta": cfg.kl_beta, "num_iterations": cfg.updates_per_batch, "reward_weights": [cfg.reward_scale],
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
    "updates_per_batch": ("gradient steps per batch", ("num_iterations",)),
    "reward_scale": ("reward scale", ("reward_weights",)),
    "steps": ("RL steps", ("max_steps",)),
}
"""Each translated :class:`~rlbook.rl.RLConfig` field: what it is, and the ``GRPOConfig`` fields it sets."""


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
    """Every named choice of rlbook (advantages, aggregations, losses, KL) and its TRL setting (appendix).

    Rows: kind, rlbook name, TRL setting, note, citation key. The names come
    from :data:`rlbook.advantages.ADVANTAGE_METHODS`,
    :data:`rlbook.losses.AGGREGATIONS` and :data:`rlbook.losses.LOSSES`.
    """
    notes = {"centered": "no scaling: the group mean is the only baseline",
             "group_std": "rlbook divides by std + 1e-6 with ddof 0; TRL by std + 1e-4 with ddof 1",
             "batch_std": "one std for the whole batch; TRL uses ddof 1 and 1e-4",
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
    rows.append(["reference", "kl_beta", "beta", "both add beta x the k3 estimate of KL to the reference",
                 CITATIONS["kl_beta"]])
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
``incomplete`` share: the audit checks that they agree.
"""


# ---------------------------------------------------------------- a TRL run

@dataclass(frozen=True)
class TRLSpec:
    """A named TRL run of the book's task: an rlbook configuration, its batch and its evaluation (appendix)."""

    name: str
    rl: RLConfig = field(default_factory=RLConfig)
    prompts_per_step: int = 0
    eval_every: int = 0
    base: str = "base"


DEMO = TRLSpec("trl-main", replace(RLConfig(), steps=20), eval_every=10)
"""The appendix's run: the first 20 steps of ``main`` (60 prompts x 16 samples), evaluated every 10 steps as ``main`` is."""


@dataclass
class TRLRun:
    """A finished TRL run in the shapes of :class:`rlbook.runs.Run` (appendix).

    ``metrics``: one dict per optimizer step, rlbook's metric names
    (:func:`metrics_from_log`); ``rollouts``: per-step stored rollouts as in
    ``Run.rollouts`` (:func:`stored_rollouts`); ``evals``: rlbook's
    independent checkpoint evaluations (:func:`rlbook.rl.checkpoint_eval`);
    ``log_history``: TRL's own ``trainer.state.log_history``; ``captured``:
    what :class:`VerifierReward` kept; ``checkpoints``: step, version,
    weights hash and weights; ``config``: the ``GRPOConfig`` arguments given;
    ``step_seconds``: wall time of each optimizer step.
    """

    spec: TRLSpec
    seed: int
    threads: int
    log_history: list[dict]
    captured: list[dict]
    metrics: list[dict]
    rollouts: list[dict]
    evals: list[dict]
    checkpoints: list[dict]
    config: dict
    base_policy: dict
    step_seconds: list[float]
    wall_seconds: float
    versions: dict

    @property
    def steps(self) -> list[int]:
        """The evaluated checkpoint steps."""
        return [c["step"] for c in self.checkpoints]

    def policy(self, step: int | None = None) -> Policy:
        """The policy at checkpoint ``step`` (default: the last) as an rlbook Policy."""
        chosen = self.checkpoints[-1] if step is None else next(c for c in self.checkpoints if c["step"] == step)
        policy = Policy(PolicyConfig(**chosen["config"]))
        policy.load_state_dict(chosen["state"])
        policy.version = chosen["version"]
        return policy

    def eval_at(self, step: int) -> dict:
        """The independent evaluation at checkpoint ``step``."""
        return next(e for e in self.evals if e["step"] == step)

    def metric(self, key: str) -> list:
        """One metric over the steps that logged it."""
        return [m[key] for m in self.metrics if key in m]


def _callbacks(spec: TRLSpec, seed: int, checkpoints: list, evals: list, step_seconds: list) -> list:
    """A TrainerCallback that times each optimizer step and evaluates checkpoints with rlbook's exact verifier."""
    from transformers import TrainerCallback

    def keep(model, step: int) -> None:
        policy = from_gpt2(model, version=f"{spec.name}@{step}")
        checkpoints.append({"step": step, "version": policy.version, "weights_hash": weights_hash(policy),
                            "config": asdict(policy.cfg), "state": policy.state_dict()})
        evals.append(checkpoint_eval(policy, spec.rl, seed, step))

    class Audit(TrainerCallback):
        def on_train_begin(self, args, state, control, model=None, **kwargs):
            if spec.eval_every:
                keep(model, 0)

        def on_step_begin(self, args, state, control, **kwargs):
            self.started = time.perf_counter()

        def on_step_end(self, args, state, control, model=None, **kwargs):
            step_seconds.append(time.perf_counter() - self.started)
            if spec.eval_every and (state.global_step % spec.eval_every == 0 or state.global_step == args.max_steps):
                keep(model, state.global_step)

    return [Audit()]


def make_trainer(spec: TRLSpec, policy: Policy, seed: int, output_dir: str, callbacks: list = (),
                 processes: int = 1, use_cpu: bool = True):
    """A ``GRPOTrainer`` on the book's train prompts, starting from ``policy``, and its reward (appendix).

    Returns ``(trainer, reward)``. The configuration is :func:`grpo_kwargs`
    of ``spec.rl`` plus what a quiet offline CPU run needs: float32
    (``bf16=False, fp16=False``), no gradient checkpointing, a log entry per
    step, no reporting, no saving, no progress bar or printed logs.
    """
    from datasets import Dataset
    from transformers.trainer_callback import PrinterCallback
    from trl import GRPOConfig, GRPOTrainer

    reward = VerifierReward(make_verifier(spec.rl))
    args = GRPOConfig(output_dir=output_dir, seed=seed, use_cpu=use_cpu, bf16=False, fp16=False,
                      gradient_checkpointing=False, logging_steps=1, report_to="none", save_strategy="no",
                      disable_tqdm=True, **grpo_kwargs(spec.rl, spec.prompts_per_step or None, processes))
    data = Dataset.from_dict({"prompt": [t.prompt for t in split("train", spec.rl.world)]})
    trainer = GRPOTrainer(model=to_gpt2(policy), reward_funcs=reward, args=args, train_dataset=data,
                          processing_class=char_tokenizer(), callbacks=list(callbacks))
    trainer.remove_callback(PrinterCallback)
    return trainer, reward


class _quiet:
    """Silence transformers' and TRL's advice (warnings, info logs) for the duration of a run."""

    def __enter__(self):
        from transformers.utils import logging as hf_logging

        self.level = hf_logging.get_verbosity()
        hf_logging.set_verbosity_error()
        self.warnings = warnings.catch_warnings()
        self.warnings.__enter__()
        warnings.simplefilter("ignore")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    def __exit__(self, *exc):
        from transformers.utils import logging as hf_logging

        self.warnings.__exit__(*exc)
        hf_logging.set_verbosity(self.level)


def merge_steps(entries: list[dict]) -> list[dict]:
    """Captured reward calls merged per step, in order: one entry per step (appendix).

    On several processes each one scores its own slice of a step's batch, and
    gathering the processes' lists (in process order) leaves a step's slices
    in global order; concatenating them rebuilds the step. One process gives
    entries that are already one per step.
    """
    merged: dict[int, dict] = {}
    for entry in entries:
        target = merged.setdefault(entry["step"], {k: ([] if isinstance(v, list) else v) for k, v in entry.items()})
        for key, value in entry.items():
            if isinstance(value, list):
                target[key].extend(value)
    return [merged[step] for step in sorted(merged)]


def run_grpo(spec: TRLSpec = DEMO, seed: int = 0, threads: int = runs.DEFAULT_THREADS, use_cpu: bool = True,
             processes: int = 1) -> TRLRun:
    """Train ``spec`` with TRL's GRPOTrainer from the book's base policy, offline; return the run (appendix).

    The starting weights are ``runs.load(spec.base, seed)``'s last checkpoint,
    copied into GPT-2 (:func:`to_gpt2`). With ``spec.eval_every`` the
    policy is evaluated at step 0, every ``eval_every`` steps and at the end
    with :func:`rlbook.rl.checkpoint_eval`, the evaluation of the book's own
    runs, on a copy converted back to rlbook (:func:`from_gpt2`).
    """
    torch.set_num_threads(threads)
    base = runs.load(spec.base, seed, threads)
    last = base.log["checkpoints"][-1]
    checkpoints, evals, step_seconds = [], [], []
    started = time.perf_counter()
    with _quiet(), tempfile.TemporaryDirectory() as out:
        trainer, reward = make_trainer(spec, base.policy(), seed, out,
                                       _callbacks(spec, seed, checkpoints, evals, step_seconds), processes, use_cpu)
        trainer.train()
    captured = reward.rollouts
    if trainer.accelerator.num_processes > 1:
        from accelerate.utils import gather_object

        captured = gather_object(captured)
    captured = merge_steps(captured)
    kwargs = grpo_kwargs(spec.rl, spec.prompts_per_step or None, processes)
    return TRLRun(spec, seed, threads, list(trainer.state.log_history), captured,
                  metrics_from_log(trainer.state.log_history, kwargs["loss_type"]),
                  stored_rollouts(captured, spec.rl.group_size, spec.rl.budget, spec.name), evals, checkpoints,
                  kwargs, {"name": spec.base, "version": last["version"], "weights_hash": last["weights_hash"]},
                  step_seconds, time.perf_counter() - started, trl_versions())


def run_key(spec: TRLSpec, seed: int, threads: int) -> str:
    """Cache key of a TRL run: its spec, seed, threads, base run, this module's source and the TRL versions."""
    source = Path(__file__).read_bytes()
    text = json.dumps([repr(spec), seed, threads, runs.cache_key(spec.base, seed, threads),
                       hashlib.sha256(source).hexdigest(), trl_versions()])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def load_run(spec: TRLSpec = DEMO, seed: int = 0, threads: int = runs.DEFAULT_THREADS,
             rebuild: bool = False) -> TRLRun:
    """The TRL run ``spec``, from the book's run cache or trained now and cached (appendix).

    Cached beside the book's runs (:func:`rlbook.runs.cache_root`) under a key
    that covers the spec, seed, threads, the base run, this module and the
    installed TRL versions, so a change to any of them retrains.
    """
    path = runs.cache_root() / f"{spec.name}-seed{seed}-t{threads}-{run_key(spec, seed, threads)}.pt"
    if path.exists() and not rebuild:
        saved = torch.load(path, weights_only=True)
        return TRLRun(**{**saved, "spec": spec})
    run = run_grpo(spec, seed, threads)
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_suffix(".tmp")
    torch.save({k: v for k, v in vars(run).items() if k != "spec"}, temp)
    os.replace(temp, path)
    return run


# ---------------------------------------------------------------- the audit, on TRL's logs and rollouts

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
        row = {"step": int(entry["step"])}
        row.update({ours: float(entry[theirs]) for ours, theirs in names.items() if entry.get(theirs) is not None})
        row.update({key: float(entry[key]) for key in extra if entry.get(key) is not None})
        rows.append(row)
    return rows


def stored_rollouts(captured: list[dict], group_size: int, budget: int, name: str = "trl") -> list[dict]:
    """Captured TRL rollouts in the per-step shape of :attr:`rlbook.runs.Run.rollouts` (appendix).

    Each step: ``prompts`` (one per group; a group's rows must share their
    prompt), ``tokens`` (uint8, rows padded with the end-of-turn id to
    ``budget``), ``lengths``, ``rewards``, ``statuses`` (indices into
    :data:`rlbook.rewards.STATUSES`), ``policy_version`` and ``used`` (every
    row: TRL trains on all of them). TRL's transformers generation path
    records no sampling log-probabilities, so ``logprobs`` is NaN.
    """
    stored = []
    for entry in captured:
        prompts, ids = entry["prompts"], entry["completion_ids"]
        groups = [prompts[i:i + group_size] for i in range(0, len(prompts), group_size)]
        if any(len(g) != group_size or len(set(g)) != 1 for g in groups):
            raise ValueError(f"step {entry['step']}: rows do not form contiguous groups of {group_size} per prompt")
        tokens = torch.full((len(ids), budget), EOT_ID, dtype=torch.uint8)
        for row, seq in enumerate(ids):
            tokens[row, :len(seq)] = torch.tensor(seq, dtype=torch.uint8)
        stored.append({"step": entry["step"], "prompts": [g[0] for g in groups], "tokens": tokens,
                       "lengths": torch.tensor([len(s) for s in ids], dtype=torch.uint8),
                       "logprobs": torch.full((len(ids), budget), float("nan")),
                       "rewards": torch.tensor(entry["rewards"], dtype=torch.float32),
                       "statuses": torch.tensor([rw.STATUSES.index(s) for s in entry["statuses"]], dtype=torch.uint8),
                       "policy_version": f"{name}@{entry['step'] - 1}", "used": torch.ones(len(ids), dtype=torch.bool)})
    return stored


def rollout_audit(stored: list[dict]) -> list[dict]:
    """Per step, the book's audit of a batch computed from the rollouts alone (appendix).

    The quantities of :func:`rlbook.rl.rollout_metrics`: mean reward,
    zero-variance group fraction and its all-right / all-wrong split
    (:mod:`rlbook.advantages`), mean completion length and the share of each
    verifier status. Computed from what the reward function saw, never from
    TRL's logs, so it can check them.
    """
    rows = []
    for s in stored:
        grouped = s["rewards"].view(len(s["prompts"]), -1)
        split_zero = adv_lib.zero_variance_split((grouped >= 1.0).float())
        statuses = [rw.STATUSES[i] for i in s["statuses"].tolist()]
        rows.append({"step": s["step"], "reward_mean": float(grouped.mean()),
                     "zero_variance_frac": adv_lib.zero_variance_fraction(grouped),
                     "zero_variance_all_right": split_zero["all_right"],
                     "zero_variance_all_wrong": split_zero["all_wrong"],
                     "completion_len": float(s["lengths"].float().mean()),
                     **{f"{st}_rate": statuses.count(st) / len(statuses) for st in rw.STATUSES}})
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
    return [{"step": e["step"], "train_reward_logged": logged.get(e["step"] + 1),
             "train_reward": e["train_reward"], "heldout_expected_reward": e["heldout_expected_reward"],
             "heldout_greedy_accuracy": e["heldout_greedy_accuracy"]} for e in run.evals]


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
    return {"from_ids": float(r_ours.mean()), "from_trl_text": float(r_theirs.mean()),
            "trl_text_incomplete": s_theirs.count("incomplete") / len(s_theirs),
            "status_changed": float(np.mean([a != b for a, b in zip(s_ours, s_theirs)]))}


# ---------------------------------------------------------------- the run record

def trl_record(run: TRLRun) -> dict:
    """The run record of a TRL run, validated by :func:`rlbook.record.validate` (appendix, chapter 5's schema).

    Everything rlbook's own records name, with TRL's settings spelled in
    TRL's terms (``loss: "trl loss_type=dapo"``), TRL's versions added to
    ``versions`` and the full ``GRPOConfig`` arguments under the extra
    top-level field ``trainer``.
    """
    spec, cfg, kwargs = run.spec, run.spec.rl, run.config
    statuses = [s for e in run.captured for s in e["statuses"]]
    labels = {s: statuses.count(s) for s in rw.STATUSES if statuses.count(s)}
    counts = {name: len(split(name, cfg.world)) for name in ("sft", "train", "heldout", "validation", "test")}
    verifier = make_verifier(cfg)
    scaled = kwargs["scale_rewards"] != "none"
    record = rec.new_record(
        spec.name, seed=run.seed, threads=run.threads, status="completed", base_policy=run.base_policy,
        prompt_template="U:a+b?|A:" if cfg.world == "single" else "U:a+b+c?|A:",
        prompt_split={"world": cfg.world, "train": "train", "counts": counts},
        sampling={"temperature": cfg.temperature, "group_size": cfg.group_size,
                  "prompts_per_step": kwargs["per_device_train_batch_size"] // cfg.group_size,
                  "token_budget": cfg.budget},
        verifier={"name": verifier.name, "version": verifier.version,
                  "implementation": f"rlbook.rewards.{type(verifier).__name__} via rlbook.trl_bridge.VerifierReward"},
        outcome_labels=labels,
        advantage={"method": f"trl scale_rewards={kwargs['scale_rewards']}", "eps": 1e-4 if scaled else None,
                   "ddof": 1 if scaled else None},
        update={"loss": f"trl loss_type={kwargs['loss_type']}",
                "clip": {"epsilon": kwargs["epsilon"], "epsilon_high": kwargs["epsilon_high"]},
                "aggregation": kwargs["loss_type"], "lr": kwargs["learning_rate"], "optimizer": kwargs["optim"],
                "steps": kwargs["max_steps"], "updates_per_batch": kwargs["num_iterations"],
                "schedule": {"lr": kwargs["lr_scheduler_type"], "warmup_steps": kwargs["warmup_steps"],
                             "max_grad_norm": kwargs["max_grad_norm"], "reward_weights": kwargs["reward_weights"]}},
        reference={"kl_beta": kwargs["beta"], "estimator": "k3" if kwargs["beta"] else None,
                   "policy": run.base_policy["version"] if kwargs["beta"] else None},
        checkpoints=[{"step": c["step"], "policy_version": c["step"], "path": f"trl-run#checkpoints[{i}]",
                      "weights_hash": c["weights_hash"]} for i, c in enumerate(run.checkpoints)],
        evaluations=_evaluations(run),
        cost={"wall_seconds": round(run.wall_seconds, 3), "generated_tokens": int(sum(len(i) for e in run.captured
                                                                                      for i in e["completion_ids"])),
              "rollouts": len(statuses), "gradient_steps": len(run.step_seconds)},
        rollouts_before_filtering=len(statuses), rollouts_used=len(statuses),
        failures={"by_status": {k: v for k, v in labels.items() if k != "accepted"}, "verifier_errors": 0},
        versions={**rec.environment_versions(), **run.versions})
    record["trainer"] = {"name": "trl.GRPOTrainer", "config": kwargs}
    return rec.validate(record)


def _evaluations(run: TRLRun) -> list[dict]:
    """The record's evaluations: expected reward and greedy accuracy on held-out prompts, per checkpoint."""
    cfg = run.spec.rl
    rows = []
    for e in run.evals:
        rows.append({"step": e["step"], "split": "heldout", "n": cfg.eval_n, "temperature": 1.0,
                     "token_budget": cfg.budget, "metric": "expected_reward (exact verifier)",
                     "value": e["heldout_expected_reward"], "ci": None})
        rows.append({"step": e["step"], "split": "heldout", "n": 1, "temperature": 0.0, "token_budget": cfg.budget,
                     "metric": "greedy_accuracy (exact verifier)", "value": e["heldout_greedy_accuracy"], "ci": None})
    return rows


# ---------------------------------------------------------------- several GPUs (untested here)

def accelerate_yaml(processes: int = 8, machines: int = 1) -> str:
    """An accelerate config for ``processes`` GPUs on ``machines`` machines, as YAML text (appendix).

    Data parallel (``MULTI_GPU``), full float32 to match the book's runs. It
    has not been run here: the book is built on CPUs only.
    """
    import yaml

    config = {"compute_environment": "LOCAL_MACHINE", "distributed_type": "MULTI_GPU", "num_machines": machines,
              "num_processes": processes, "machine_rank": 0, "gpu_ids": "all", "mixed_precision": "no",
              "main_training_function": "main", "rdzv_backend": "static", "same_network": True, "use_cpu": False}
    return yaml.safe_dump(config, sort_keys=False)


def launch_command(processes: int = 8, steps: int = 100, config_file: str = "multi_gpu.yaml") -> str:
    """The ``accelerate launch`` command line that runs :func:`main` on several GPUs (appendix)."""
    return (f"accelerate launch --config_file {config_file} --num_processes {processes} "
            f"-m rlbook.trl_bridge --steps {steps} --out trl-run")


def main(argv: list[str] | None = None) -> int:
    """``python -m rlbook.trl_bridge``: a TRL run of the book's ``main`` configuration; writes its record (appendix).

    Under ``accelerate launch`` every process runs this; each trains on its
    share of the batch and the first process writes ``record.json`` and
    ``metrics.json`` into ``--out``.
    """
    parser = argparse.ArgumentParser(prog="python -m rlbook.trl_bridge", description=main.__doc__)
    parser.add_argument("--steps", type=int, default=RLConfig().steps)
    parser.add_argument("--prompts", type=int, default=0, help="prompts per step (default: every train prompt)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eval-every", type=int, default=10)
    parser.add_argument("--out", default="trl-run")
    args = parser.parse_args(argv)
    processes = int(os.environ.get("WORLD_SIZE", "1"))
    spec = TRLSpec("trl-main", replace(RLConfig(), steps=args.steps), args.prompts, args.eval_every)
    run = run_grpo(spec, args.seed, use_cpu=not torch.cuda.is_available(), processes=processes)
    if int(os.environ.get("RANK", "0")) == 0:
        out = Path(args.out)
        rec.save(trl_record(run), out / "record.json")
        (out / "metrics.json").write_text(json.dumps(run.metrics, indent=1))
        print(f"wrote {out / 'record.json'} and {out / 'metrics.json'}")
    return 0


# ---------------------------------------------------------------- the appendix's tables, figures and exercises

def markdown_table(header: list[str], rows: list[list]) -> str:
    """A Markdown pipe table (display it with ``IPython.display.Markdown``) (appendix)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell).replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def missing_figure():
    """A figure that says TRL is not installed and how to install it, in place of one that needs TRL (appendix)."""
    from .plots import figure

    fig, ax = figure(7, 1.2)
    ax.axis("off")
    ax.text(0.5, 0.5, INSTALL_HINT.replace(". ", ".\n", 1), ha="center", va="center", wrap=True)
    return fig


def plot_reward_and_heldout(run: TRLRun, book_run, axes) -> None:
    """Left: each step's batch reward, TRL and rlbook; right: held-out expected reward at each checkpoint (appendix).

    ``book_run`` is the rlbook run with the same configuration (``main``),
    cut to the TRL run's steps.
    """
    from .plots import BLUE, ORANGE

    last = run.metrics[-1]["step"]
    for source, label, colour in ((run, "TRL GRPOTrainer", ORANGE), (book_run, "rlbook", BLUE)):
        metrics = [m for m in source.metrics if m["step"] <= last]
        evals = [e for e in source.evals if e["step"] <= last]
        axes[0].plot([m["step"] for m in metrics], [m["reward_mean"] for m in metrics], color=colour, label=label)
        axes[1].plot([e["step"] for e in evals], [e["heldout_expected_reward"] for e in evals], "o-",
                     color=colour, label=label)
    axes[0].set(xlabel="step", ylabel="batch reward (train prompts)", ylim=(0, 1))
    axes[1].set(xlabel="checkpoint step", ylabel="held-out expected reward", ylim=(0, 1))
    axes[1].legend()


def plot_audit(run: TRLRun, axes) -> None:
    """Left: each step's rollouts by verifier status; right: zero-variance groups, audited and as TRL logged (appendix)."""
    from .plots import GREY, ORANGE, STATUS_COLOURS, TEAL

    audit = rollout_audit(run.rollouts)
    steps = [a["step"] for a in audit]
    shares = [[a[f"{st}_rate"] for a in audit] for st in rw.STATUSES]
    axes[0].stackplot(steps, shares, labels=rw.STATUSES, colors=[STATUS_COLOURS[st] for st in rw.STATUSES])
    axes[0].set(xlabel="step", ylabel="share of the batch's rollouts", ylim=(0, 1))
    axes[0].legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=3, fontsize=8)
    right = [a["zero_variance_all_right"] for a in audit]
    wrong = [a["zero_variance_all_wrong"] for a in audit]
    axes[1].stackplot(steps, right, wrong, labels=["all right", "all wrong"], colors=[TEAL, ORANGE], alpha=0.7)
    logged = [m for m in run.metrics if "zero_variance_frac" in m]
    axes[1].plot([m["step"] for m in logged], [m["zero_variance_frac"] for m in logged], "o", color=GREY,
                 label="TRL frac_reward_zero_std")
    axes[1].set(xlabel="step", ylabel="share of groups with equal rewards", ylim=(0, 1))
    axes[1].legend(loc="upper right", fontsize=8)


def check_translation(answer: dict | None, run_name: str = "cispo"):
    """Appendix exercise: the ``GRPOConfig`` settings that make TRL run the book's run ``run_name``.

    ``answer`` must give every setting in which ``run_name``'s translation
    differs from ``main``'s (for ``cispo``: ``loss_type``, ``epsilon_high``,
    ``num_iterations``, ``max_steps``); any further key given must be right
    too. Returns a :class:`~rlbook.exercises.CheckResult`; never raises.
    """
    from .exercises import verdict

    if answer is None:
        return verdict(False, "not answered yet: fill in a dict of GRPOConfig keyword arguments.")
    expected, main = grpo_kwargs(runs.spec(run_name).rl), grpo_kwargs(RLConfig())
    changed = [key for key in expected if expected[key] != main[key]]
    missing = [key for key in changed if key not in answer]
    if missing:
        return verdict(False, f"{run_name} differs from main in {', '.join(changed)}; your answer lacks "
                              f"{', '.join(missing)}.")
    wrong = [key for key in answer if key in expected and answer[key] != expected[key]]
    unknown = [key for key in answer if key not in expected]
    if unknown:
        return verdict(False, f"{', '.join(unknown)} is not among the settings this translation makes.")
    if wrong:
        key = wrong[0]
        return verdict(False, f"{key} = {answer[key]!r} is not what {run_name} needs; look up the field it "
                              "translates in the options table.")
    return verdict(True, f"right: {', '.join(f'{k} = {expected[k]!r}' for k in changed)}.")


def check_zero_variance(answer: float | None, run: TRLRun, step: int):
    """Appendix exercise: the zero-variance group fraction of ``run``'s batch at ``step``, from its rollouts.

    Compared with :func:`rlbook.advantages.zero_variance_fraction` of the
    stored rewards, and the message quotes TRL's logged
    ``frac_reward_zero_std`` for the same step. Never raises.
    """
    from .exercises import verdict

    if answer is None:
        return verdict(False, "not answered yet: compute the fraction from run.rollouts.")
    stored = next(s for s in run.rollouts if s["step"] == step)
    expected = adv_lib.zero_variance_fraction(stored["rewards"].view(len(stored["prompts"]), -1))
    logged = next(m["zero_variance_frac"] for m in run.metrics if m["step"] == step)
    if not isinstance(answer, (int, float)) or abs(answer - expected) > 1e-9:
        return verdict(False, f"{answer!r} is not the share of step {step}'s groups whose rewards are all equal; "
                              f"group the {len(stored['rewards'])} rewards by prompt first.")
    return verdict(True, f"{expected:.4f}, and TRL logged frac_reward_zero_std = {logged:.4f} for the same batch.")


# ---------------------------------------------------------------- peer benchmark

def _spread(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def rlbook_step_seconds(policy: Policy, cfg: RLConfig, repeats: int, seed: int = 0,
                        measure_kl: bool = True) -> list[float]:
    """Wall time of ``repeats`` consecutive RL steps of rlbook's loop on ``policy`` (after one warm-up step).

    Each step is the body of :func:`rlbook.rl.train_rl`: sample every train
    prompt ``group_size`` times with the KV cache, score with the guarded
    verifier, credit, one update. With ``measure_kl`` the update also makes
    the reference forward pass the loop makes for its per-step KL; without
    it, the step does the work GRPOTrainer does at ``beta = 0``, which has no
    reference model.
    """
    reference = None
    if measure_kl:
        reference = Policy(policy.cfg)
        reference.load_state_dict(policy.state_dict())
        reference.eval()
    opt = adamw(policy.parameters(), cfg.lr)
    gen = torch.Generator().manual_seed(seed)
    prompts = [t.prompt for t in split("train", cfg.world)]
    verifier = make_verifier(cfg)
    times = []
    for step in range(repeats + 1):
        start = time.perf_counter()
        rollouts = sample(policy, prompts, n=cfg.group_size, temperature=cfg.temperature, budget=cfg.budget,
                          generator=gen)
        rewards, statuses, _ = score_guarded(verifier, rollouts, cfg.guard.verifier_timeout_s)
        advantages, used = credit(cfg, rewards, statuses)
        ref_logp = None if reference is None else reference_logprobs(reference, rollouts)
        update(policy, opt, Batch(step, rollouts, rewards, statuses, advantages, used), cfg, ref_logp)
        times.append(time.perf_counter() - start)
    return times[1:]


def trl_step_seconds(policy: Policy, cfg: RLConfig, repeats: int, seed: int = 0) -> tuple[list[float], list[float]]:
    """Wall time of ``repeats`` GRPOTrainer optimizer steps on ``policy`` (after one warm-up step).

    Returns ``(step_seconds, trl_step_time)``: the wall time from one
    step's start to its end (generation, scoring, loss, backward and the
    optimizer step), and TRL's own ``step_time`` metric, which leaves out
    the optimizer step.
    """
    spec = TRLSpec("trl-bench", replace(cfg, steps=repeats + 1))
    seconds: list[float] = []
    with _quiet(), tempfile.TemporaryDirectory() as out:
        trainer, _ = make_trainer(spec, policy, seed, out, _callbacks(spec, seed, [], [], seconds))
        trainer.train()
    logged = [e["step_time"] for e in trainer.state.log_history if "step_time" in e]
    return seconds[1:], logged[1:]


def peer_benchmark(quick: bool = False, seed: int = 0, threads: int = runs.DEFAULT_THREADS) -> dict:
    """One RL step of rlbook against one GRPOTrainer step, same model, same batch, same run (``rlbook bench --peer trl``).

    Both start from ``runs.load("base", seed)``'s weights (TRL's as GPT-2, see
    :func:`to_gpt2`) with ``main``'s configuration: 60 prompts x 16 samples,
    4 new tokens at most. rlbook's steps are timed in two halves, before and
    after TRL's, so that a change in the machine's load falls on both. The
    report holds medians with ranges, the ratio TRL / rlbook of the medians
    and a one-paragraph ``summary``; without TRL, only the install hint.
    """
    if not have_trl():
        return {"summary": INSTALL_HINT, "trl": None}
    repeats = 3 if quick else 7
    torch.set_num_threads(threads)
    cfg = RLConfig()
    base = runs.load("base", seed, threads)
    halves = ((repeats + 1) // 2, repeats // 2)
    ours = rlbook_step_seconds(base.policy(), cfg, halves[0], seed)
    same_work = rlbook_step_seconds(base.policy(), cfg, halves[0], seed, measure_kl=False)
    trl_wall, trl_logged = trl_step_seconds(base.policy(), cfg, repeats, seed)
    ours += rlbook_step_seconds(base.policy(), cfg, halves[1], seed + 1)
    same_work += rlbook_step_seconds(base.policy(), cfg, halves[1], seed + 1, measure_kl=False)
    report = {"machine": {"cores": os.cpu_count(), "threads": threads, "load_average": list(os.getloadavg()),
                          "torch": torch.__version__},
              "batch": {"prompts": len(split("train")), "group_size": cfg.group_size, "max_new_tokens": cfg.budget},
              "rlbook_step_seconds": _spread(ours), "rlbook_same_work_step_seconds": _spread(same_work),
              "trl_step_seconds": _spread(trl_wall), "trl_logged_step_time": _spread(trl_logged), "trl": trl_versions()}
    report["ratio"] = report["trl_step_seconds"]["median"] / report["rlbook_step_seconds"]["median"]
    report["ratio_same_work"] = report["trl_step_seconds"]["median"] / report["rlbook_same_work_step_seconds"]["median"]
    report["summary"] = _summary(report)
    return report


def _summary(report: dict) -> str:
    theirs, b = report["trl_step_seconds"], report["batch"]
    load = ", ".join(f"{x:.1f}" for x in report["machine"]["load_average"])

    def line(label: str, t: dict, extra: str = "") -> str:
        return (f"  {label:<30}{t['median'] * 1000:8.1f} ms (range {t['min'] * 1000:.1f}-{t['max'] * 1000:.1f}, "
                f"n={t['n']}{extra})\n")

    return (f"One RL step, {b['prompts']} prompts x {b['group_size']} completions, at most {b['max_new_tokens']} "
            f"new tokens, torch threads: {report['machine']['threads']}, load average {load}:\n"
            + line("rlbook, with its KL pass", report["rlbook_step_seconds"])
            + line("rlbook, TRL's work (beta = 0)", report["rlbook_same_work_step_seconds"])
            + line("TRL GRPOTrainer (beta = 0)", theirs, f"; trl {report['trl']['trl']}")
            + f"  {'TRL / rlbook':<30}{report['ratio']:8.2f}x with the KL pass, "
            f"{report['ratio_same_work']:.2f}x for the same work")


if __name__ == "__main__":
    raise SystemExit(main())
