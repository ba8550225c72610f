"""Chapter 10's named learners from pairs: DPO under three settings and the Bradley–Terry reward model under two.

Each starts from ``base`` of its seed, reads pairs of ``base``'s answers
sampled as ``main`` samples them (:func:`rlbook.core.preferences.preference_pairs`,
``main``'s number of steps), and trains offline: it samples nothing more.
They are not in :data:`rlbook.runs.RUNS`, because the RL runs' cache does not
hold them; chapter 10's facts train them and keep what they measure. This
module sits outside the import closure of the RL runs' training, so editing
it retrains none of them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache

import torch

from rlbook.core.evaluate import eval_seed, evaluate
from rlbook.core.policy import Policy
from rlbook.core.preferences import (
    Pairs,
    PreferenceConfig,
    drawn_pairs,
    pair_logprobs,
    preference_pairs,
    swapped,
    train_bradley_terry,
    train_dpo,
)
from rlbook.core.reward_model import RewardModel
from rlbook.core.world import split

from .catalogue import MAIN
from .training import load

PAIRS = PreferenceConfig(
    rounds=MAIN.steps, group_size=MAIN.group_size, temperature=MAIN.temperature, budget=MAIN.budget
)
"""The book's DPO: pairs from as many groups per training prompt as ``main`` samples in its run, ``beta`` 1."""


@dataclass(frozen=True)
class Learner:
    """A named learner from pairs: DPO (a policy) or a Bradley–Terry reward model, with its settings.

    The glance page says each one's settings in words
    (:func:`rlbook.analysis.glance.learner_words`).
    """

    name: str
    kind: str
    cfg: PreferenceConfig


LEARNERS: dict[str, Learner] = {
    learner.name: learner
    for learner in [
        Learner("dpo", "dpo", PAIRS),
        Learner("dpo-noisy", "dpo", replace(PAIRS, noise=0.2)),
        Learner("dpo-small-beta", "dpo", replace(PAIRS, beta=0.1)),
        Learner("bt", "reward-model", PAIRS),
        Learner("bt-noisy", "reward-model", replace(PAIRS, noise=0.2)),
    ]
}
HELDOUT_ROUNDS = 5
"""How many groups per held-out prompt make the held-out pairs on which the learners' rankings are scored."""


def learner(name: str) -> Learner:
    """The named learner; KeyError listing the names for an unknown one."""
    if name not in LEARNERS:
        raise KeyError(f"no learner {name!r}; the learners from pairs are {', '.join(LEARNERS)}")
    return LEARNERS[name]


@cache
def _drawn(seed: int) -> tuple[Pairs, torch.Tensor]:
    """The training pairs of ``seed`` before any swap, and their draws (:func:`rlbook.core.preferences.drawn_pairs`)."""
    prompts = [t.prompt for t in split("train")]
    return drawn_pairs(load("base", seed).policy(), prompts, PAIRS, 7_000 + seed)


@cache
def pairs(seed: int, noise: float = 0.0) -> Pairs:
    """The training pairs of ``seed``: ``base``'s answers on the training prompts, a share ``noise`` swapped.

    The same answers whatever the noise, sampled once: only the swaps differ
    (:func:`rlbook.core.preferences.preference_pairs` gives the same pairs).
    Kept for the process once made (nothing changes them).
    """
    drawn, draws = _drawn(seed)
    return swapped(drawn, draws < noise)


@cache
def base_logprobs(seed: int, noise: float = 0.0) -> tuple[torch.Tensor, torch.Tensor]:
    """``base``'s log-probabilities of the chosen and rejected answers of :func:`pairs`, read once for the process:
    every DPO learner's reference, and the start from which chapter 10 measures how they moved."""
    return pair_logprobs(load("base", seed).policy(), pairs(seed, noise))


@cache
def heldout_pairs(seed: int) -> Pairs:
    """Pairs of ``base``'s answers on the held-out prompts, none swapped: where a learned ranking is scored."""
    prompts = [t.prompt for t in split("heldout")]
    return preference_pairs(load("base", seed).policy(), prompts, replace(PAIRS, rounds=HELDOUT_ROUNDS), 8_000 + seed)


def heldout_accuracy(policy: Policy, seed: int, step: int) -> float:
    """Held-out expected reward of ``policy``, sampled as a checkpoint of ``main`` at ``step`` is (same seeds)."""
    tasks = split("heldout")
    return evaluate(policy, tasks, n=MAIN.eval_n, budget=MAIN.budget, seed=eval_seed(seed, step)).expected_reward


def train_policy(name: str, seed: int) -> tuple[Policy, list[tuple[int, float]]]:
    """DPO learner ``name`` of ``seed`` trained now, with its held-out accuracy at every checkpoint.

    ValueError when ``name`` is a reward model.
    """
    spec = learner(name)
    if spec.kind != "dpo":
        raise ValueError(f"{name!r} is a reward model, not a policy")
    curve: list[tuple[int, float]] = []
    policy = train_dpo(
        load("base", seed).policy(),
        pairs(seed, spec.cfg.noise),
        spec.cfg,
        9_000 + seed,
        lambda step, p: curve.append((step, heldout_accuracy(p, seed, step))),
        reference_logprobs=base_logprobs(seed, spec.cfg.noise),
    )
    return policy, curve


def train_reward_model(name: str, seed: int) -> RewardModel:
    """Bradley–Terry learner ``name`` of ``seed`` trained now; ValueError when ``name`` is a DPO learner."""
    spec = learner(name)
    if spec.kind != "reward-model":
        raise ValueError(f"{name!r} is a DPO learner, not a reward model")
    return train_bradley_terry(load("base", seed).policy(), pairs(seed, spec.cfg.noise), spec.cfg, 9_500 + seed)
