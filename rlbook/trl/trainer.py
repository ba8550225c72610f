"""A TRL run of the book's task (appendix): the verifier as TRL's reward function, ``GRPOTrainer`` set up from
the book's configuration, and the run cached like the book's own. ``python -m rlbook.trl``, the same run on
several processes, is :mod:`rlbook.trl.launch`.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
import warnings
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

import torch

from rlbook import runs
from rlbook.core import rewards as rw
from rlbook.core.loop import checkpoint_eval
from rlbook.core.policy import Policy, weights_hash
from rlbook.core.rl import make_verifier
from rlbook.core.source import closure_hash
from rlbook.core.world import decode, split

from .audit import metrics_from_log, stored_rollouts
from .model import char_tokenizer, from_gpt2, to_gpt2, trl_versions
from .spec import DEMO, TRLRun, TRLSpec
from .translation import grpo_kwargs


class VerifierReward:
    """An rlbook verifier as a TRL reward function that keeps every rollout it scores (appendix).

    TRL calls it once per generation batch with ``prompts``, ``completions``
    and ``completion_ids``. The ``completions`` TRL passes are decoded with
    special tokens skipped, and the end-of-turn mark is the end-of-sequence
    token, so it is missing from them: every answer would read as cut off by
    the budget (``incomplete``). The reward therefore decodes
    ``completion_ids`` itself with :func:`rlbook.core.world.decode`, which keeps
    the mark. It logs the share of each verifier status through TRL's
    ``log_metric`` (keys ``verifier/<status>``) and appends one entry per call
    to ``rollouts``: ``step`` (the optimizer step that learns from the batch,
    counted from 1 as in :func:`rlbook.core.loop.train_rl`), ``prompts``,
    ``completion_ids``, ``completions`` (rlbook's decoding),
    ``trl_completions`` (TRL's text), ``rewards`` and ``statuses``.
    """

    def __init__(self, verifier=None) -> None:
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
        self.rollouts.append(
            {
                "step": step,
                "prompts": list(prompts),
                "completion_ids": [[int(i) for i in ids] for ids in completion_ids],
                "completions": texts,
                "trl_completions": list(completions),
                "rewards": [v.reward for v in verdicts],
                "statuses": statuses,
            }
        )
        return [v.reward for v in verdicts]


def book_callbacks(spec: TRLSpec, seed: int, checkpoints: list, evals: list, step_seconds: list) -> list:
    """A TrainerCallback that times each optimizer step and evaluates checkpoints with rlbook's exact verifier."""
    from transformers import TrainerCallback

    def keep(model, step: int) -> None:
        policy = from_gpt2(model, version=f"{spec.name}@{step}")
        checkpoints.append(
            {
                "step": step,
                "version": policy.version,
                "weights_hash": weights_hash(policy),
                "config": asdict(policy.cfg),
                "state": policy.state_dict(),
            }
        )
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


def make_trainer(
    spec: TRLSpec,
    policy: Policy,
    seed: int,
    output_dir: str,
    callbacks: Sequence = (),
    processes: int = 1,
    use_cpu: bool = True,
):
    """A ``GRPOTrainer`` on the book's train prompts, starting from ``policy``, and its reward (appendix).

    Returns ``(trainer, reward)``. The configuration is :func:`grpo_kwargs`
    of ``spec.rl`` plus what a quiet offline CPU run needs: float32
    (``bf16=False, fp16=False``), no gradient checkpointing, every weight
    used in each step (``ddp_find_unused_parameters=False``: on several
    processes no search for unused ones), a log entry per
    step, no reporting, no saving, no progress bar or printed logs.
    With a KL penalty TRL builds its reference model from the policy's
    ``name_or_path``, so the starting weights are saved under
    ``output_dir/reference`` and the model points there.
    """
    from datasets import Dataset
    from transformers.trainer_callback import PrinterCallback
    from trl import GRPOConfig, GRPOTrainer

    reward = VerifierReward(make_verifier(spec.rl))
    args = GRPOConfig(
        output_dir=output_dir,
        seed=seed,
        use_cpu=use_cpu,
        bf16=False,
        fp16=False,
        gradient_checkpointing=False,
        ddp_find_unused_parameters=False,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        disable_tqdm=True,
        **grpo_kwargs(spec.rl, spec.prompts_per_step or None, processes),
    )
    data = Dataset.from_dict({"prompt": [t.prompt for t in split("train", spec.rl.world)]})
    model = to_gpt2(policy)
    if spec.rl.kl_beta:
        model.save_pretrained(Path(output_dir) / "reference")
        model.config._name_or_path = str(Path(output_dir) / "reference")
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=reward,  # type: ignore[arg-type]  # TRL wants list[float | None] (invariant), not list[float]
        args=args,
        train_dataset=data,
        processing_class=char_tokenizer(),
        callbacks=list(callbacks),
    )
    trainer.remove_callback(PrinterCallback)
    return trainer, reward


class quiet_trl:
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


def run_grpo(
    spec: TRLSpec = DEMO, seed: int = 0, threads: int = runs.DEFAULT_THREADS, use_cpu: bool = True, processes: int = 1
) -> TRLRun:
    """Train ``spec`` with TRL's GRPOTrainer from the book's base policy, offline; return the run (appendix).

    The starting weights are ``runs.load(spec.base, seed)``'s last checkpoint,
    copied into GPT-2 (:func:`to_gpt2`). With ``spec.eval_every`` the
    policy is evaluated at step 0, every ``eval_every`` steps and at the end
    with :func:`rlbook.core.loop.checkpoint_eval`, the evaluation of the book's own
    runs, on a copy converted back to rlbook (:func:`from_gpt2`).
    """
    torch.set_num_threads(threads)
    base = runs.load(spec.base, seed, threads)
    last = base.log["checkpoints"][-1]
    checkpoints: list[dict] = []
    evals: list[dict] = []
    step_seconds: list[float] = []
    started = time.perf_counter()
    with quiet_trl(), tempfile.TemporaryDirectory() as out:
        trainer, reward = make_trainer(
            spec,
            base.policy(),
            seed,
            out,
            book_callbacks(spec, seed, checkpoints, evals, step_seconds),
            processes,
            use_cpu,
        )
        trainer.train()
    captured, mine = reward.rollouts, [process_summary(trainer, reward.rollouts)]
    if trainer.accelerator.num_processes > 1:
        from accelerate.utils import gather_object

        captured, mine = gather_object(captured), gather_object(mine)
    captured = merge_steps(captured)
    kwargs = grpo_kwargs(spec.rl, spec.prompts_per_step or None, processes)
    return TRLRun(
        spec,
        seed,
        threads,
        list(trainer.state.log_history),
        captured,
        metrics_from_log(trainer.state.log_history, kwargs["loss_type"]),
        stored_rollouts(captured, spec.rl.group_size, spec.rl.budget, spec.name),
        evals,
        checkpoints,
        kwargs,
        {"name": spec.base, "version": last["version"], "weights_hash": last["weights_hash"]},
        step_seconds,
        time.perf_counter() - started,
        trl_versions(),
        mine,
    )


def process_summary(trainer, captured: list[dict]) -> dict:
    """What one process trained on (appendix): its rank, its optimiser steps, the rollouts it scored at each step,
    the prompts of those rows in order as ``[prompt, rows]`` runs, and the hash of its weights after training.

    On several processes every process holds the same weights at the end
    (data parallel training averages the gradients), so the hashes agree.
    """
    runs_per_step = []
    for entry in captured:
        runs_here: list[list] = []
        for prompt in entry["prompts"]:
            if runs_here and runs_here[-1][0] == prompt:
                runs_here[-1][1] += 1
            else:
                runs_here.append([prompt, 1])
        runs_per_step.append(runs_here)
    model = trainer.accelerator.unwrap_model(trainer.model)
    return {
        "rank": trainer.accelerator.process_index,
        "optimizer_steps": trainer.state.global_step,
        "rollouts_per_step": [len(entry["prompts"]) for entry in captured],
        "prompts_per_step": runs_per_step,
        "weights_hash": weights_hash(from_gpt2(model)),
    }


def run_key(spec: TRLSpec, seed: int, threads: int) -> str:
    """Cache key of a TRL run: its spec, its ``GRPOConfig`` arguments, seed, threads, base run, the code of this
    module, of :mod:`rlbook.trl.spec` and of the rlbook modules they import (:func:`rlbook.core.source.closure_hash`:
    comments, docstrings and layout left out), and the TRL versions."""
    text = json.dumps(
        [
            repr(spec),
            grpo_kwargs(spec.rl, spec.prompts_per_step or None),
            seed,
            threads,
            runs.cache_key(spec.base, seed, threads),
            closure_hash(("rlbook.trl.trainer", "rlbook.trl.spec")),
            trl_versions(),
        ]
    )
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def load_run(spec: TRLSpec = DEMO, seed: int = 0, threads: int = runs.DEFAULT_THREADS, rebuild: bool = False) -> TRLRun:
    """The TRL run ``spec``, from the book's run cache or trained now and cached (appendix).

    Cached beside the book's runs (:func:`rlbook.runs.cache_root`) under a key
    that covers the spec, seed, threads, the base run, this module and the
    installed TRL versions, so a change to any of them retrains.
    """
    path = runs.cache_root() / f"{spec.name}-seed{seed}-t{threads}-{run_key(spec, seed, threads)}.pt"
    if path.exists() and not rebuild:
        try:
            saved = torch.load(path, weights_only=True)
            return TRLRun(**{**saved, "spec": spec})
        except Exception as err:  # noqa: BLE001 - any damage (truncated, edited, not ours) means: train again
            problem = " ".join(str(err).split())[:160] or type(err).__name__
            warnings.warn(
                f"the cached TRL run {path} is damaged ({problem}); it is refused and trained again", stacklevel=2
            )
    run = run_grpo(spec, seed, threads)
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.tmp-{os.getpid()}")  # two builds writing at once never share a file
    try:
        torch.save({k: v for k, v in vars(run).items() if k != "spec"}, temp)
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)
    return run
