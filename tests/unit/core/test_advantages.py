"""Advantages on groups of rewards worked by hand (rlbook.core.advantages)."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from rlbook.core.advantages import (
    ADVANTAGE_METHODS,
    batch_normalized,
    compute_advantages,
    group_centered,
    group_normalized,
    leave_one_out,
    token_advantages,
    zero_variance_fraction,
    zero_variance_mask,
    zero_variance_split,
)


def close(actual, expected, tol=1e-4):
    return torch.allclose(
        torch.as_tensor(actual, dtype=torch.float32), torch.tensor(expected, dtype=torch.float32), atol=tol
    )


def test_group_centered_by_hand():
    assert close(group_centered([1, 0, 0, 0]), [0.75, -0.25, -0.25, -0.25])
    assert close(group_centered([1, 1, 0, 0]), [0.5, 0.5, -0.5, -0.5])
    assert close(group_centered([1, 1, 1, 1]), [0, 0, 0, 0])
    assert close(group_centered([0, 0, 0, 0]), [0, 0, 0, 0])


def test_each_row_is_its_own_group():
    rewards = torch.tensor([[1.0, 0, 0, 0], [1, 1, 0, 0]])
    assert close(group_centered(rewards), [[0.75, -0.25, -0.25, -0.25], [0.5, 0.5, -0.5, -0.5]])


def test_integer_rewards_give_float_advantages_of_the_same_shape():
    adv = group_centered(torch.tensor([1, 0, 0, 0]))
    assert adv.is_floating_point() and adv.shape == (4,)


def test_bad_shape_is_rejected():
    with pytest.raises(ValueError, match="shape"):
        group_centered(torch.zeros(2, 2, 2))


def test_group_normalized_population_std():
    # mean 0.25, variance (0.75**2 + 3 * 0.25**2) / 4 = 0.1875, std 0.4330
    std = math.sqrt(0.1875)
    adv = group_normalized([1, 0, 0, 0], ddof=0)
    assert close(adv, [0.75 / std, -0.25 / std, -0.25 / std, -0.25 / std])
    assert close(adv, [1.7321, -0.5774, -0.5774, -0.5774])


def test_group_normalized_sample_std():
    # ddof=1: variance 0.75 / 3 = 0.25, std 0.5 (TRL's convention)
    assert close(group_normalized([1, 0, 0, 0], eps=0.0, ddof=1), [1.5, -0.5, -0.5, -0.5])


def test_group_normalized_keeps_all_equal_groups_at_zero():
    adv = group_normalized([[1, 1, 1, 1], [0, 0, 0, 0]])
    assert torch.equal(adv, torch.zeros(2, 4))


def test_batch_normalized_uses_one_scale_for_the_whole_batch():
    # all 8 rewards: mean 5/8, population variance 5/8 - (5/8)**2 = 0.234375
    std = math.sqrt(0.234375)
    adv = batch_normalized([[1, 0, 0, 0], [1, 1, 1, 1]])
    assert close(adv, [[0.75 / std, -0.25 / std, -0.25 / std, -0.25 / std], [0, 0, 0, 0]])


def test_zero_variance_groups():
    rewards = torch.tensor([[1.0, 1, 1, 1], [0, 0, 0, 0], [1, 0, 1, 0]])
    assert zero_variance_mask(rewards).tolist() == [True, True, False]
    assert zero_variance_fraction(rewards) == pytest.approx(2 / 3)
    assert zero_variance_split(rewards) == pytest.approx({"all_right": 1 / 3, "all_wrong": 1 / 3, "mixed": 1 / 3})


def test_one_group_given_as_a_vector():
    assert zero_variance_mask([1, 1, 1, 1]).tolist() == [True]
    assert zero_variance_fraction([1, 0, 0, 0]) == 0.0
    assert zero_variance_split([0.5, 0.5]) == {"all_right": 1.0, "all_wrong": 0.0, "mixed": 0.0}
    assert zero_variance_split([0.5, 0.5], right_from=1.0) == {"all_right": 0.0, "all_wrong": 1.0, "mixed": 0.0}
    assert zero_variance_split([1.5, 1.5], right_from=1.0)["all_right"] == 1.0


def test_compute_advantages_by_name():
    rewards = torch.tensor([[1.0, 0, 0, 0], [1, 1, 0, 1]])
    for name, method in ADVANTAGE_METHODS.items():
        assert torch.equal(compute_advantages(rewards, name), method(rewards))
    assert set(ADVANTAGE_METHODS) == {"centered", "group_std", "batch_std", "rloo"}


def test_unknown_method_is_named_in_the_error():
    with pytest.raises(ValueError, match="'mean_std'.*centered"):
        compute_advantages([1, 0], "mean_std")


def test_token_advantages_spread_over_generated_tokens_only():
    mask = torch.tensor([[1, 1, 0], [1, 0, 0]])
    out = token_advantages(torch.tensor([0.75, -0.25]), mask)
    assert close(out, [[0.75, 0.75, 0], [-0.25, 0, 0]])
    assert torch.equal(token_advantages(torch.tensor([2.0, 3.0]), mask.bool()), torch.tensor([[2.0, 2, 0], [3, 0, 0]]))


def test_token_advantages_read_groups_row_by_row():
    adv = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    out = token_advantages(adv, torch.ones(4, 2))
    assert out[:, 0].tolist() == [1.0, 2.0, 3.0, 4.0]


def test_token_advantages_reject_a_count_mismatch():
    with pytest.raises(ValueError, match="3 advantages for 2 sequences"):
        token_advantages(torch.zeros(3), torch.ones(2, 4))


rows = st.lists(st.floats(-5, 5, allow_nan=False), min_size=2, max_size=8)


@settings(max_examples=50, deadline=None)
@given(rows, st.floats(-5, 5))
def test_every_method_sums_to_zero_and_ignores_a_shift(row, shift):
    rewards = torch.tensor(row, dtype=torch.float64)
    for name in ADVANTAGE_METHODS:
        adv = compute_advantages(rewards, name)
        assert abs(adv.sum().item()) < 1e-6
        assert torch.allclose(compute_advantages(rewards + shift, name), adv, atol=1e-6)


def test_leave_one_out_by_hand_and_its_relation_to_centring():
    # [1, 0, 0, 0]: the right answer's others average 0, each wrong answer's others average 1/3.
    group = torch.tensor([1.0, 0.0, 0.0, 0.0])
    assert leave_one_out(group).tolist() == pytest.approx([1.0, -1 / 3, -1 / 3, -1 / 3])
    rows = torch.tensor([[1.0, 1.0, 0.0], [0.5, 0.0, 0.0]])
    assert torch.allclose(leave_one_out(rows), torch.tensor([[0.5, 0.5, -1.0], [0.5, -0.25, -0.25]]))
    assert torch.allclose(leave_one_out(rows), 3 / 2 * group_centered(rows))
    with pytest.raises(ValueError):
        leave_one_out(torch.tensor([1.0]))
