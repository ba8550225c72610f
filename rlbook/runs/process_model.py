"""Chapter 11's learned step scorer and the RL runs it and the exact process rule reward.

The scorer (:mod:`rlbook.core.process_model`) is trained on the labelled
steps of ``worked-base``'s answers to the worked world's training prompts,
and judged on its answers to the held-out ones. The two RL runs start from
``worked-base`` with ``worked``'s settings and seed, and change only the
reward: the learned scorer's (``prm``) or the exact process rule's
(``process-exact``); ``worked`` itself is the outcome verifier's. They are
not in :data:`rlbook.runs.RUNS`, since the scorer is not a run the cache
holds; chapter 11's facts train them and keep what they measure. This module
sits outside the import closure of the RL runs' training, so editing it
retrains none of them.
"""

from __future__ import annotations

from functools import cache

from rlbook.core.loop import train_rl
from rlbook.core.policy import Policy
from rlbook.core.process_model import (
    ExactProcessVerifier,
    Labelled,
    ProcessConfig,
    ProcessModel,
    ProcessVerifier,
    locate,
    sampled_answers,
    train_process_model,
)
from rlbook.core.world import split

from .catalogue import WORKED
from .training import load

PARENT = "worked-base"
"""The policy whose answers are labelled, from whose weights the scorer starts, and from which the RL runs start."""
SCORER = ProcessConfig()
"""The book's step scorer: 2,000 labelled answers, 400 updates of 64 answers."""
REWARDS = ("prm", "process-exact")
"""The RL runs beside ``worked``: rewarded by the learned scorer, and by the exact process rule."""


def prompts(part: str) -> list[str]:
    """The worked world's ``train`` or ``heldout`` prompts."""
    return [t.prompt for t in split(part, "worked")]


@cache
def training_steps(seed: int) -> Labelled:
    """The scorer's training data of ``seed``: ``worked-base``'s answers on the training prompts, steps labelled."""
    return locate(sampled_answers(load(PARENT, seed).policy(), prompts("train"), SCORER.answers, SCORER, 12_000 + seed))


@cache
def scorer(seed: int) -> ProcessModel:
    """The step scorer of ``seed``, trained now (kept for the process once made)."""
    return train_process_model(load(PARENT, seed).policy(), training_steps(seed), SCORER, 13_000 + seed)


def train(reward: str, seed: int) -> tuple[dict, Policy]:
    """RL run ``reward`` (one of :data:`REWARDS`) of ``seed``, trained now: its log and its final policy."""
    if reward not in REWARDS:
        raise KeyError(f"no run {reward!r}; chapter 11's RL runs are {', '.join(REWARDS)}")
    verifier = ProcessVerifier(scorer(seed)) if reward == "prm" else ExactProcessVerifier()
    policy = load(PARENT, seed).policy()
    log = train_rl(policy, WORKED, seed, reward, verifier=verifier)
    return log, policy
