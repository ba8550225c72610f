"""Chapter 11's measurements of one seed: a learned step scorer judged, set beside the exact rules as a picker,
and used as an RL reward.

:func:`measure` trains the step scorer of :mod:`rlbook.runs.process_model`
on the labelled steps of ``worked-base``'s answers to the training prompts,
then:

- judges it step by step on fresh answers, to the training prompts and to
  the held-out ones, by kind of step (:func:`judged`);
- sets it beside the outcome verifier and the exact process rule as a
  picker: best-of-n on the held-out prompts (:func:`best_of_n`);
- uses it as an RL reward (``prm``), beside the exact process rule
  (``process-exact``) and the outcome verifier (``worked``), and reads the
  answers the RL'd policies write at the end (:func:`written`).

:mod:`rlbook.book.process` keeps each seed's measurements in the facts
cache, keyed on this module's code and not on the chapter's claims, so
rewording a claim trains nothing again.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from rlbook.core import rewards as rw
from rlbook.core.policy import Policy
from rlbook.core.process_model import (
    AGGREGATES,
    KINDS,
    ProcessModel,
    answer_score,
    locate,
    process_right,
    sampled_answers,
    step_probabilities,
)
from rlbook.core.reward_model import auc
from rlbook.core.sampling import sample
from rlbook.core.world import EOT
from rlbook.runs import load
from rlbook.runs import process_model as pm
from rlbook.runs.catalogue import WORKED

RUNS = ("worked", *pm.REWARDS)
"""The three RL runs, by reward: the outcome verifier, the learned step scorer, the exact process rule."""
JUDGED = 1000
"""Fresh answers of ``worked-base`` per set of prompts (training, held-out) on which the scorer is judged."""
NS = (1, 4, 16)
"""Best-of-n: how many answers per held-out prompt each judge picks from."""
JUDGES = ("outcome", "process-exact", "prm-min", "prm-product")
"""The pickers of best-of-n: the outcome verifier, the exact process rule, the learned scorer's two aggregates."""
WRITTEN = 4
"""Answers per held-out prompt sampled from each RL'd policy at the end, to read what it writes."""
SHOWN_ANSWERS = 4
"""How many of an RL'd policy's last answers are kept with the scorer's step probabilities, for the page: the
ones the scorer scored highest (:func:`shown_rows`)."""


def judged(model: ProcessModel, policy: Policy, seed: int) -> dict[str, Any]:
    """The scorer on fresh answers of ``policy`` to the training and to the held-out prompts: by kind of step, the
    share of right steps, the AUC and the accuracy at 0.5."""
    report: dict[str, Any] = {}
    for part, offset in (("train", 14_000), ("heldout", 15_000)):
        data = locate(sampled_answers(policy, pm.prompts(part), JUDGED, pm.SCORER, offset + seed))
        p, labels = step_probabilities(model, data), data.labels.double().numpy()
        kinds = np.array(data.kinds)
        report[part] = {
            kind: {
                "steps": int((kinds == kind).sum()),
                "right": float(labels[kinds == kind].mean()),
                "auc": auc(p[kinds == kind], labels[kinds == kind]),
                "accuracy": float(((p[kinds == kind] >= 0.5) == (labels[kinds == kind] >= 1)).mean()),
            }
            for kind in KINDS
        }
    return report


def picks(
    scores: dict[str, np.ndarray], right: np.ndarray, prompts: int, ns: tuple[int, ...] = NS
) -> dict[str, list[float]]:
    """Best-of-n by each judge: for each n of ``ns``, the share of ``prompts`` whose pick is right.

    ``scores`` holds each judge's score of every answer and ``right`` the
    outcome verifier's verdicts, both ``prompts`` x max(ns) in prompt order.
    The pick among a prompt's first n answers is the first of highest score,
    so a judge that scores all n alike picks the first, as n = 1 does.
    """
    ok = right.reshape(prompts, -1)
    out = {}
    for judge, score in scores.items():
        by_prompt = score.reshape(prompts, -1)
        out[judge] = [float(ok[np.arange(prompts), by_prompt[:, :n].argmax(axis=1)].mean()) for n in ns]
    return out


def best_of_n(model: ProcessModel, policy: Policy, seed: int) -> dict[str, list[float]]:
    """Held-out accuracy of the answer each judge of :data:`JUDGES` picks (:func:`picks`) from the first n of
    max(NS) answers of ``policy`` per held-out prompt, for n in :data:`NS`."""
    prompts = pm.prompts("heldout")
    batch = sample(
        policy,
        prompts,
        n=max(NS),
        temperature=1.0,
        budget=WORKED.budget,
        generator=torch.Generator().manual_seed(16_000 + seed),
    )
    completions = batch.completions()
    pairs = list(zip(batch.prompts, completions))
    right = rw.score(rw.get_verifier("exact"), batch.prompts, completions)[0] >= 1.0
    data = locate(pairs, label=False)
    p = step_probabilities(model, data)
    scores = {
        "outcome": right.astype(float),
        "process-exact": np.array([float(process_right(a, c)) for a, c in pairs]),
        **{f"prm-{how}": answer_score(p, data.rows, len(pairs), how) for how in AGGREGATES},
    }
    return picks({judge: scores[judge] for judge in JUDGES}, right, len(prompts))


def shown_rows(score: np.ndarray, prompts: int) -> list[int]:
    """The rows of the answers the page shows: of the first answer to each of ``prompts`` prompts (``score`` holds
    :data:`WRITTEN` answers per prompt, in prompt order), the :data:`SHOWN_ANSWERS` the scorer scored highest,
    ties in prompt order, listed in prompt order. What a run wrote that its judge liked best is what the run was
    pushed towards."""
    firsts = [g * WRITTEN for g in range(prompts)]
    best = sorted(firsts, key=lambda row: -score[row])[:SHOWN_ANSWERS]
    return sorted(best)


def written(policy: Policy, model: ProcessModel, seed: int) -> dict[str, Any]:
    """What ``policy`` writes to the held-out prompts: the share of answers that end (an end mark), that are right,
    that the exact process rule accepts, and the scorer's mean score; and the few answers the scorer scored highest
    (:func:`shown_rows`) with their step scores."""
    prompts = pm.prompts("heldout")
    batch = sample(
        policy,
        prompts,
        n=WRITTEN,
        temperature=1.0,
        budget=WORKED.budget,
        generator=torch.Generator().manual_seed(17_000 + seed),
    )
    completions = batch.completions()
    pairs = list(zip(batch.prompts, completions))
    data = locate(pairs, label=False)
    p = step_probabilities(model, data)
    score = answer_score(p, data.rows, len(pairs), "min")
    right = rw.score(rw.get_verifier("exact"), batch.prompts, completions)[0] >= 1.0
    shown = [
        {
            "prompt": pairs[i][0],
            "answer": pairs[i][1],
            "steps": [round(float(x), 3) for x in p[(data.rows == i).numpy()]],
        }
        for i in shown_rows(score, len(prompts))
    ]
    return {
        "ended": float(np.mean(["#" in c for c in completions])),
        "right": float(right.mean()),
        "process": float(np.mean([process_right(a, c) for a, c in pairs])),
        "score": float(score.mean()),
        "worked": float(np.mean(["+" in c for c in completions])),
        "shown": shown,
    }


def curve(log: dict) -> dict[str, list]:
    """A run's checkpoints: held-out accuracy, its reward on training prompts, and its accuracy there."""
    return {
        "steps": [e["step"] for e in log["evals"]],
        "accuracy": [e["heldout_expected_reward"] for e in log["evals"]],
        "reward": [e["train_reward"] for e in log["evals"]],
        "train_accuracy": [e["train_exact_reward"] for e in log["evals"]],
    }


def measure(seed: int) -> dict[str, Any]:
    """One seed: the scorer trained and judged, best-of-n, and the three RL runs."""
    base = load(pm.PARENT, seed).policy()
    data = pm.training_steps(seed)
    model = pm.scorer(seed)
    kinds = np.array(data.kinds)
    runs: dict[str, Any] = {
        "worked": {**curve(load("worked", seed).log), "written": written(load("worked", seed).policy(), model, seed)}
    }
    for reward in pm.REWARDS:
        log, policy = pm.train(reward, seed)
        runs[reward] = {**curve(log), "written": written(policy, model, seed)}
    return {
        "training": {
            "answers": len(data.pairs),
            "steps": len(data.labels),
            "unended": sum(EOT not in c for _, c in data.pairs),
            "right": {kind: float(data.labels[torch.from_numpy(kinds == kind)].double().mean()) for kind in KINDS},
        },
        "judged": judged(model, base, seed),
        "best_of_n": best_of_n(model, base, seed),
        "runs": runs,
    }
