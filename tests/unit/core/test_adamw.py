"""The book's AdamW (rlbook.core.adamw): torch.optim.AdamW's update over one flat vector, and its errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from rlbook.core.adamw import AdamW
from rlbook.core.policy import Policy, PolicyConfig
from rlbook.core.train import next_char_loss


def _twins(seed: int = 0) -> tuple[Policy, Policy]:
    torch.manual_seed(seed)
    first = Policy(PolicyConfig())
    second = Policy(PolicyConfig())
    second.load_state_dict(first.state_dict())
    return first, second


def _windows(seed: int) -> torch.Tensor:
    return torch.randint(0, 21, (8, 17), generator=torch.Generator().manual_seed(seed))


def test_it_takes_torchs_adamw_steps_on_a_policy():
    ours, theirs = _twins()
    mine = AdamW(ours.parameters(), lr=1e-2, weight_decay=0.01)
    reference = torch.optim.AdamW(theirs.parameters(), lr=1e-2, weight_decay=0.01, foreach=False)
    for step in range(5):
        for policy, opt in ((ours, mine), (theirs, reference)):
            opt.zero_grad()
            next_char_loss(policy, _windows(step)).backward()
            opt.param_groups[0]["lr"] = 1e-2 * (step + 1) / 5  # a schedule changes the rate between steps
            opt.step()
    for a, b in zip(ours.parameters(), theirs.parameters()):
        assert torch.allclose(a, b, atol=1e-6)
    first, _ = _twins()
    moved = max((a - b).abs().max().item() for a, b in zip(ours.parameters(), first.parameters()))
    assert moved > 1e-3  # the five steps moved the weights


def test_the_parameters_are_views_of_one_vector_that_a_step_updates():
    policy, _ = _twins()
    opt = AdamW(policy.parameters(), lr=1e-3)
    assert opt.flat.numel() == policy.num_parameters()
    assert all(p.untyped_storage().data_ptr() == opt.flat.untyped_storage().data_ptr() for p in policy.parameters())
    before = opt.flat.clone()
    next_char_loss(policy, _windows(0)).backward()
    opt.step()
    assert not torch.equal(before, opt.flat)
    assert torch.equal(torch.cat([p.detach().reshape(-1) for p in policy.parameters()]), opt.flat)


def test_a_state_dict_resumes_the_same_steps():
    ours, twin = _twins()
    straight = AdamW(ours.parameters(), lr=1e-2)
    for step in range(4):
        straight.zero_grad()
        next_char_loss(ours, _windows(step)).backward()
        straight.step()
        if step == 1:
            saved_weights, saved_state = {k: v.clone() for k, v in ours.state_dict().items()}, straight.state_dict()
    twin.load_state_dict(saved_weights)
    resumed = AdamW(twin.parameters(), lr=1.0)  # the saved settings replace these
    resumed.load_state_dict(saved_state)
    for step in (2, 3):
        resumed.zero_grad()
        next_char_loss(twin, _windows(step)).backward()
        resumed.step()
    assert resumed.steps == 4 and resumed.param_groups[0]["lr"] == 1e-2
    assert all(torch.equal(a, b) for a, b in zip(ours.parameters(), twin.parameters()))


def test_clear_errors():
    policy, _ = _twins()
    with pytest.raises(ValueError, match="at least one parameter"):
        AdamW([], lr=1e-3)
    with pytest.raises(ValueError, match="invalid AdamW settings"):
        AdamW(policy.parameters(), lr=-1.0)
    opt = AdamW(policy.parameters(), lr=1e-3)
    with pytest.raises(RuntimeError, match="no gradient"):
        opt.step()
    with pytest.raises(ValueError, match="holds 3 weights"):
        opt.load_state_dict({"steps": 1, "exp_avg": torch.zeros(3), "exp_avg_sq": torch.zeros(3), "settings": {}})
    AdamW(policy.parameters(), lr=1e-3)  # a second optimiser takes the weights over
    next_char_loss(policy, _windows(0)).backward()
    with pytest.raises(RuntimeError, match="another optimiser"):
        opt.step()


def test_zero_grad_forgets_or_zeroes_the_gradients():
    policy, _ = _twins()
    opt = AdamW(policy.parameters(), lr=1e-3)
    next_char_loss(policy, _windows(0)).backward()
    opt.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.any() for p in policy.parameters())
    opt.zero_grad()
    assert all(p.grad is None for p in policy.parameters())


def test_it_never_imports_torchs_compiler():
    code = (
        "import sys, torch; from rlbook.core.adamw import AdamW; from rlbook.core.policy import Policy; "
        "from rlbook.core.train import next_char_loss; p = Policy(); opt = AdamW(p.parameters(), lr=1e-3); "
        "next_char_loss(p, torch.zeros(2, 17, dtype=torch.long)).backward(); opt.step(); "
        "opt.load_state_dict(opt.state_dict()); assert 'torch._dynamo' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).resolve().parents[3])
