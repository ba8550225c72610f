"""``rlbook bench --peer trl``: one RL step of rlbook against one step of TRL's ``GRPOTrainer`` on the same model
and batch (appendix, BENCHMARKS.md).
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from dataclasses import replace
from typing import Any

import torch

from rlbook import runs
from rlbook.core.guard import score_guarded
from rlbook.core.packing import reference_logprobs
from rlbook.core.policy import Policy
from rlbook.core.rl import Batch, RLConfig, credit, make_verifier, update
from rlbook.core.sampling import sample
from rlbook.core.train import adamw
from rlbook.core.world import split

from .model import INSTALL_HINT, have_trl, trl_versions
from .trainer import TRLSpec, book_callbacks, make_trainer, quiet_trl


def _spread(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def rlbook_step_seconds(
    policy: Policy, cfg: RLConfig, repeats: int, seed: int = 0, measure_kl: bool = True
) -> list[float]:
    """Wall time of ``repeats`` consecutive RL steps of rlbook's loop on ``policy`` (after one warm-up step).

    Each step is the body of :func:`rlbook.core.rl.rl_step`: sample every train
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
        rollouts = sample(
            policy, prompts, n=cfg.group_size, temperature=cfg.temperature, budget=cfg.budget, generator=gen
        )
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
    with quiet_trl(), tempfile.TemporaryDirectory() as out:
        trainer, _ = make_trainer(spec, policy, seed, out, book_callbacks(spec, seed, [], [], seconds))
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
    cfg = runs.MAIN
    base = runs.load("base", seed, threads)
    halves = ((repeats + 1) // 2, repeats // 2)
    ours = rlbook_step_seconds(base.policy(), cfg, halves[0], seed)
    same_work = rlbook_step_seconds(base.policy(), cfg, halves[0], seed, measure_kl=False)
    trl_wall, trl_logged = trl_step_seconds(base.policy(), cfg, repeats, seed)
    ours += rlbook_step_seconds(base.policy(), cfg, halves[1], seed + 1)
    same_work += rlbook_step_seconds(base.policy(), cfg, halves[1], seed + 1, measure_kl=False)
    report: dict[str, Any] = {
        "machine": {
            "cores": os.cpu_count(),
            "threads": threads,
            "load_average": list(os.getloadavg()),
            "torch": torch.__version__,
        },
        "batch": {"prompts": len(split("train")), "group_size": cfg.group_size, "max_new_tokens": cfg.budget},
        "rlbook_step_seconds": _spread(ours),
        "rlbook_same_work_step_seconds": _spread(same_work),
        "trl_step_seconds": _spread(trl_wall),
        "trl_logged_step_time": _spread(trl_logged),
        "trl": trl_versions(),
    }
    report["ratio"] = report["trl_step_seconds"]["median"] / report["rlbook_step_seconds"]["median"]
    report["ratio_same_work"] = report["trl_step_seconds"]["median"] / report["rlbook_same_work_step_seconds"]["median"]
    report["summary"] = _summary(report)
    return report


def _summary(report: dict) -> str:
    theirs, b = report["trl_step_seconds"], report["batch"]
    load = ", ".join(f"{x:.1f}" for x in report["machine"]["load_average"])

    def line(label: str, t: dict, extra: str = "") -> str:
        return (
            f"  {label:<30}{t['median'] * 1000:8.1f} ms (range {t['min'] * 1000:.1f}-{t['max'] * 1000:.1f}, "
            f"n={t['n']}{extra})\n"
        )

    return (
        f"One RL step, {b['prompts']} prompts x {b['group_size']} completions, at most {b['max_new_tokens']} "
        f"new tokens, torch threads: {report['machine']['threads']}, load average {load}:\n"
        + line("rlbook, with its KL pass", report["rlbook_step_seconds"])
        + line("rlbook, TRL's work (beta = 0)", report["rlbook_same_work_step_seconds"])
        + line("TRL GRPOTrainer (beta = 0)", theirs, f"; trl {report['trl']['trl']}")
        + f"  {'TRL / rlbook':<30}{report['ratio']:8.2f}x with the KL pass, "
        f"{report['ratio_same_work']:.2f}x for the same work"
    )
