"""DAPO's dynamic sampling: silent groups dropped, the batch refilled, every sampled answer counted."""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import torch
from policies import random_policy

from rlbook.core import refill
from rlbook.core.config import RLConfig
from rlbook.core.rewards import Verdict, score
from rlbook.core.sampling import sample
from rlbook.core.world import split

TASKS = split("train")


class FirstCharacter:
    """Pays 1 for an answer whose first character is in ``paid``: a verifier whose groups are often mixed."""

    name, version = "first-character", "0"

    def __init__(self, paid: str):
        self.paid = paid

    def __call__(self, prompt: str, completion: str) -> Verdict:
        right = completion[:1] in self.paid
        return Verdict(float(right), "accepted" if right else "incorrect", "", self.name, self.version)


def _first(policy, cfg: RLConfig, verifier, prompts: int, gen: torch.Generator) -> refill.Scored:
    rollouts = sample(policy, [t.prompt for t in TASKS[:prompts]], n=cfg.group_size, budget=cfg.budget, generator=gen)
    rewards, statuses = score(verifier, rollouts.prompts, rollouts.completions())
    return refill.Scored(rollouts, rewards, statuses, len(rollouts))


def _run(cfg: RLConfig, verifier, seed: int = 0, prompts: int = 12) -> tuple[refill.Scored, refill.Scored]:
    policy, gen = random_policy(1), torch.Generator().manual_seed(seed)
    first = _first(policy, cfg, verifier, prompts, gen)
    return first, refill.refilled(policy, cfg, random.Random(seed), gen, TASKS, verifier, first)


def _silent_groups(scored: refill.Scored, size: int) -> int:
    return int((~refill.informative(scored.rewards, size)).sum()) // size


CFG = replace(RLConfig(), group_size=4, refill_rounds=3)


def test_without_rounds_the_batch_is_left_as_sampled():
    first, after = _run(replace(CFG, refill_rounds=0), FirstCharacter("0123456789"))
    assert after is first


def test_the_refilled_batch_holds_no_silent_group_and_counts_every_answer_sampled():
    verifier = FirstCharacter("".join(map(str, range(10))) + "+")
    first, after = _run(CFG, verifier)
    size = CFG.group_size
    assert _silent_groups(first, size) > 0, "the test needs a first batch with silent groups"
    assert _silent_groups(after, size) == 0
    assert len(after.rollouts) <= len(first.rollouts) and len(after.rollouts) % size == 0
    assert after.sampled > first.sampled and (after.sampled - first.sampled) % size == 0
    assert len(after.statuses) == len(after.rollouts) == len(after.rewards)
    # the kept groups of the first batch come first, in their order
    kept = refill.informative(first.rewards, size).nonzero().flatten().tolist()
    assert after.rollouts.prompts[: len(kept)] == [first.rollouts.prompts[i] for i in kept]
    assert np.array_equal(after.rewards[: len(kept)], first.rewards[kept])


def test_a_batch_with_no_signal_anywhere_is_kept_as_sampled_and_its_cost_counted():
    first, after = _run(CFG, FirstCharacter(""))  # pays nothing: every group is silent
    assert after.rollouts is first.rollouts
    assert after.sampled == first.sampled * (1 + CFG.refill_rounds)


def test_the_same_streams_refill_the_same_batch():
    verifier = FirstCharacter("13579")
    _, one = _run(CFG, verifier, seed=4)
    _, two = _run(CFG, verifier, seed=4)
    assert one.rollouts.prompts == two.rollouts.prompts and torch.equal(one.rollouts.tokens, two.rollouts.tokens)
    assert one.sampled == two.sampled
