"""rlbook.analysis.reinforce: the minimal loop takes the engine's own policy-gradient step, on a fresh policy."""

from __future__ import annotations

import copy

import torch

from rlbook.analysis import reinforce
from rlbook.core import rewards
from rlbook.core.policy import Policy
from rlbook.core.rl import Batch, RLConfig, credit, update
from rlbook.core.sampling import sample
from rlbook.core.world import split


def _pays_for_odd_lengths(prompt: str, completion: str) -> rewards.Verdict:
    """A made-up verifier that a random policy satisfies about half the time, so that groups are mixed."""
    right = len(completion) % 2 == 1
    return rewards.Verdict(float(right), "accepted" if right else "incorrect", "", "odd", "1")


def _weights(policy: Policy) -> torch.Tensor:
    return torch.cat([p.detach().flatten() for p in policy.parameters()])


def test_one_step_of_the_loop_is_one_step_of_the_engine_with_the_plain_policy_gradient(monkeypatch):
    monkeypatch.setattr(rewards, "get_verifier", lambda name, version=None: _pays_for_odd_lengths)
    torch.manual_seed(0)
    start = Policy()
    loop = reinforce.reinforce(copy.deepcopy(start), steps=1, group=4, lr=1e-3, warmup=1, seed=5)

    engine = copy.deepcopy(start)
    cfg = RLConfig(group_size=4, loss="pg", lr=1e-3)
    rollouts = sample(engine, [t.prompt for t in split("train")], n=4, generator=torch.Generator().manual_seed(5))
    scores, statuses = rewards.score(_pays_for_odd_lengths, rollouts.prompts, rollouts.completions())
    assert 0 < scores.mean() < 1
    batch = Batch(1, rollouts, scores, statuses, *credit(cfg, scores, statuses))
    update(engine, torch.optim.AdamW(engine.parameters(), lr=1e-3, weight_decay=0.0), batch, cfg)

    moved, expected = _weights(loop) - _weights(start), _weights(engine) - _weights(start)
    assert moved.abs().max() > 1e-5  # the step moved the weights
    # Adam's first step is about lr * sign(gradient): the same step, up to the rounding of the tiniest gradients
    assert (moved - expected).abs().max() < 1e-2 * 1e-3
    assert torch.nn.functional.cosine_similarity(moved, expected, dim=0) > 0.9999


def test_after_step_sees_every_step_and_the_evaluation_starts_at_step_0(monkeypatch):
    seen = []
    reinforce.reinforce(Policy(), steps=2, group=2, seed=1, after_step=lambda step, policy: seen.append(step))
    assert seen == [1, 2]
    monkeypatch.setattr(reinforce, "heldout_reward", lambda policy, seed, step, n=32: float(step))
    curve = reinforce.train_and_evaluate(Policy(), seed=0, steps=4, every=2)
    assert curve == {"steps": [0, 2, 4], "heldout": [0.0, 2.0, 4.0]}
