"""rlbook.analysis.reinforce: chapter 3's loop takes the engine's own step, on the same batch, to 1e-6."""

from __future__ import annotations

import copy
from dataclasses import replace

import torch

from rlbook import runs
from rlbook.analysis import reinforce
from rlbook.core import rewards
from rlbook.core.policy import Policy
from rlbook.core.rl import StepState, rl_step
from rlbook.core.world import split


def _pays_for_odd_lengths(prompt: str, completion: str) -> rewards.Verdict:
    """A made-up verifier that a random policy satisfies about half the time, so that groups are mixed."""
    right = len(completion) % 2 == 1
    return rewards.Verdict(float(right), "accepted" if right else "incorrect", "", "odd", "1")


def _recording(step):
    """An optimiser step that first records the gradient it is given."""
    seen: list[torch.Tensor] = []

    def recorded(self, *args, **kwargs):
        seen.append(torch.cat([p.grad.flatten() for group in self.param_groups for p in group["params"]]))
        return step(self, *args, **kwargs)

    return recorded, seen


def test_the_loop_takes_the_engines_step_on_the_same_batch(monkeypatch):
    monkeypatch.setattr(rewards, "get_verifier", lambda name, version=None: _pays_for_odd_lengths)
    main = replace(runs.spec("main").rl, steps=1)
    torch.manual_seed(0)
    start = Policy()

    loop_step, loop_grads = _recording(torch.optim.AdamW.step)
    monkeypatch.setattr(torch.optim.AdamW, "step", loop_step)
    taught = reinforce.reinforce(copy.deepcopy(start), main, seed=5)

    engine = copy.deepcopy(start)
    state = StepState.fresh(engine, main, seed=5)
    engine_step, engine_grads = _recording(type(state.opt).step)
    monkeypatch.setattr(type(state.opt), "step", engine_step)
    batch, _ = rl_step(engine, main, state, split("train"), _pays_for_odd_lengths, step=1)

    assert 0 < batch.rewards.mean() < 1  # mixed groups: the step has a signal
    assert len(loop_grads) == len(engine_grads) == 1
    assert loop_grads[0].abs().max() > 1e-3
    assert torch.allclose(loop_grads[0], engine_grads[0], rtol=0, atol=1e-6)
    moved, expected = taught.state_dict(), engine.state_dict()
    assert all(torch.allclose(moved[k], expected[k], rtol=0, atol=1e-5) for k in moved)


def test_after_step_sees_every_step_and_the_evaluation_is_at_mains_checkpoints(monkeypatch):
    seen = []
    short = replace(runs.spec("main").rl, steps=2, group_size=2, checkpoint_every=2)
    reinforce.reinforce(Policy(), short, seed=1, after_step=lambda step, policy: seen.append(step))
    assert seen == [1, 2]
    monkeypatch.setattr(reinforce, "heldout_reward", lambda policy, seed, step, n=32: float(step))
    curve = reinforce.train_and_evaluate(Policy(), seed=0, settings=replace(short, steps=4))
    assert curve == {"steps": [0, 2, 4], "heldout": [0.0, 2.0, 4.0]}


def _first_gradient(monkeypatch, **options) -> torch.Tensor:
    """The gradient of the loop's first step from a fixed random policy, under the odd-length verifier."""
    monkeypatch.setattr(rewards, "get_verifier", lambda name, version=None: _pays_for_odd_lengths)
    torch.manual_seed(0)
    start = Policy()
    step, grads = _recording(torch.optim.AdamW.step)
    monkeypatch.setattr(torch.optim.AdamW, "step", step)
    reinforce.reinforce(start, replace(runs.spec("main").rl, steps=1), seed=5, **options)
    monkeypatch.undo()
    return grads[0]


def test_a_shift_cancels_in_the_baseline_and_moves_the_gradient_without_it(monkeypatch):
    plain = _first_gradient(monkeypatch)
    assert torch.equal(_first_gradient(monkeypatch, offset=1.0), plain)  # to the last bit
    assert torch.equal(_first_gradient(monkeypatch, offset=3.0), plain)
    bare = [_first_gradient(monkeypatch, offset=c, baseline=False) for c in (0.0, 1.0, 2.0)]
    assert not torch.allclose(bare[0], plain, rtol=0, atol=1e-6)
    shared = bare[1] - bare[0]  # the push every sampled answer shares, once per unit of offset
    assert shared.abs().max() > 1e-3
    assert torch.allclose(bare[2] - bare[1], shared, rtol=0, atol=1e-6)
