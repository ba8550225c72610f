"""Test doubles shared by the core and runs tests: hand-built rollouts and batches, and a verifier that hangs."""

from __future__ import annotations

import threading

import numpy as np
import torch

from rlbook import record as rec
from rlbook.core.packing import generated_logprobs
from rlbook.core.policy import Policy
from rlbook.core.rewards import Verdict
from rlbook.core.rl import Batch
from rlbook.core.sampling import Rollouts
from rlbook.core.world import EOT_ID, encode


def answers(*texts: str) -> Rollouts:
    """Rollouts of hand-written answers to 3+4, padded to four tokens and masked after each answer."""
    prompt = "U:3+4?|A:"
    width = 4
    tokens = torch.tensor([encode(t) + [EOT_ID] * (width - len(t)) for t in texts])
    mask = torch.tensor([[i < len(t) for i in range(width)] for t in texts])
    ids = torch.tensor([encode(prompt)] * len(texts))
    return Rollouts(
        [prompt] * len(texts), ids, tokens, torch.zeros(len(texts), width), mask, "hand@0", {"group_size": len(texts)}
    )


def hand_batch(policy: Policy, advantages, used=(True, True)) -> Batch:
    """Two on-policy answers to 3+4: ``7#`` and ``8#``, with the given advantages."""
    prompt = "U:3+4?|A:"
    tokens = torch.tensor([encode("7#"), encode("8#")])
    ids = torch.tensor([encode(prompt)] * 2)
    mask = torch.ones(2, 2, dtype=torch.bool)
    rollouts = Rollouts([prompt] * 2, ids, tokens, torch.zeros(2, 2), mask, "hand@0", {"group_size": 2})
    with torch.no_grad():
        rollouts.logprobs = generated_logprobs(policy, rollouts)[0]
    return Batch(
        1,
        rollouts,
        np.array([1.0, 0.0]),
        ["accepted", "incorrect"],
        torch.tensor(advantages, dtype=torch.float32),
        torch.tensor(used),
    )


class StuckVerifier:
    """Blocks until released (at most a few seconds), like a verifier service that stopped answering."""

    name, version = "stuck", "0"

    def __init__(self):
        self.release = threading.Event()
        self.threads: list[threading.Thread] = []

    def __call__(self, prompt: str, completion: str) -> Verdict:
        self.threads.append(threading.current_thread())
        self.release.wait(timeout=5)
        raise TimeoutError("never answered")


def minimal_record(steps: int = 100) -> dict:
    """A completed run record of ``main``'s shape with no checkpoint or evaluation, for tests of record files."""
    r = rec.new_record(
        "main",
        seed=0,
        threads=1,
        base_policy={"name": "base", "version": 1, "weights_hash": "abc"},
        prompt_template="U:a+b?|A:",
        prompt_split={"world": "single", "train": "train", "counts": {"train": 60}},
        sampling={"temperature": 1.0, "group_size": 16, "prompts_per_step": 60, "token_budget": 4},
        verifier={"name": "exact", "version": "1.0", "implementation": "rlbook.core.rewards.ExactVerifier"},
        advantage={"method": "group", "eps": 1e-6, "ddof": 0},
        update={
            "loss": "ppo",
            "clip": None,
            "aggregation": "token_mean",
            "lr": 3e-4,
            "optimizer": "AdamW",
            "steps": steps,
            "updates_per_batch": 1,
            "schedule": "constant",
        },
        reference={"kl_beta": 0.0, "estimator": None, "policy": None},
    )
    r["status"] = "completed"
    return r
