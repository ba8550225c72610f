"""Fresh samples at several temperatures (rlbook.analysis.audit.temperature)."""

from __future__ import annotations

import pytest
import torch
from audit_batches import P1, P2
from policies import constant_policy

from rlbook.analysis import audit
from rlbook.core.world import Task


def test_mixed_group_rate_by_hand():
    # n=4 samples, c=2 right, groups of k=2: 6 pairs, 1 all-wrong, 1 all-right -> 4/6 mixed.
    assert audit.mixed_group_rate(4, 2, 2) == pytest.approx(4 / 6)
    assert audit.mixed_group_rate(4, 0, 3) == 0.0 and audit.mixed_group_rate(4, 4, 3) == 0.0
    assert audit.mixed_group_rate(4, 1, 1) == 0.0  # a group of one never mixes
    with pytest.raises(ValueError):
        audit.mixed_group_rate(4, 5, 2)


def test_temperature_audit_on_a_tiny_policy():
    from rlbook.core.policy import Policy, PolicyConfig

    torch.manual_seed(0)
    policy = Policy(PolicyConfig())
    rows = audit.temperature_audit(policy, [P1, P2], [0.5, 2.0], n=4, rounds=2, seed=1)
    assert [r["temperature"] for r in rows] == [0.5, 2.0]
    for r in rows:
        assert sum(r[c] for c in audit.CATEGORIES) == pytest.approx(1.0)
        assert 0.0 <= r["novel_share"] <= 1.0 and 1.0 <= r["tokens_per_rollout"] <= 4.0
        assert r["duplicate_accepted"] + r["duplicate_incorrect"] <= r["duplicate"] + 1e-12


def test_own_format_accuracy_needs_the_sum_and_a_line_end():
    # '7' then a line end (0.5 x 0.5) is the only right ending of "3+4="; '7' alone never ends the line.
    halves = constant_policy({"7": 0.5, "\n": 0.5})
    share = audit.own_format_accuracy(halves, [Task((3, 4)), Task((2, 2))], n=4000, seed=0)
    assert share[0] == pytest.approx(0.25, abs=0.02) and share[1] == 0.0
    assert audit.own_format_accuracy(constant_policy({"7": 1.0}), [Task((3, 4))], greedy=True).tolist() == [0.0]


def test_own_format_accuracy_ignores_spaces():
    # Budget 3 for "2+2=": '4\n?' (1/16), ' 4\n' (1/32) and '4 \n' (1/32) are right, 1/8 in all.
    policy = constant_policy({" ": 0.5, "4": 0.25, "\n": 0.25})
    assert audit.own_format_accuracy(policy, [Task((2, 2))], n=8000, seed=1)[0] == pytest.approx(0.125, abs=0.01)


def test_own_format_accuracy_of_a_chain_expects_its_partial_sums():
    # "1+2+3=" expects '3,6': the final sum alone is wrong.
    assert audit.own_format_accuracy(constant_policy({"6": 0.5, "\n": 0.5}), [Task((1, 2, 3))], n=200).max() == 0.0
