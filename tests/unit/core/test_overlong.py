"""DAPO's length penalty against the paper's equation 13 and TRL's reward function, and the overlong filter."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from rlbook.core import overlong
from rlbook.core.config import RLConfig
from rlbook.core.sampling import Rollouts
from rlbook.core.world import EOT_ID


def _by_the_paper(length: int, budget: int, cache: int) -> float:
    """Yu et al. (2025), eq. 13, case by case."""
    if length <= budget - cache:
        return 0.0
    if length <= budget:
        return ((budget - cache) - length) / cache
    return -1.0


@pytest.mark.parametrize(("budget", "cache"), [(18, 4), (24, 1), (8, 8)])
def test_the_penalty_is_the_papers_ramp_at_every_length(budget, cache):
    lengths = torch.arange(1, budget + 1)
    got = overlong.length_penalty(lengths, budget, cache)
    assert got.tolist() == pytest.approx([_by_the_paper(n, budget, cache) for n in range(1, budget + 1)])
    assert got[-1] == -1.0


def test_the_penalty_equals_trls_soft_overlong_punishment():
    rewards = pytest.importorskip("trl.rewards")
    budget, cache = 18, 4
    punish = rewards.get_soft_overlong_punishment(max_completion_len=budget, soft_punish_cache=cache)
    lengths = list(range(1, budget + 1))
    theirs = punish(completion_ids=[[1] * n for n in lengths])
    ours = overlong.length_penalty(torch.tensor(lengths), budget, cache)
    assert ours.tolist() == pytest.approx(theirs)


def _rollouts(lengths: list[int], ended: list[bool], width: int = 6) -> Rollouts:
    tokens = torch.full((len(lengths), width), 3, dtype=torch.long)
    mask = torch.arange(width)[None, :] < torch.tensor(lengths)[:, None]
    for i, (n, e) in enumerate(zip(lengths, ended)):
        if e:
            tokens[i, n - 1 :] = EOT_ID
    return Rollouts(
        ["p"] * len(lengths),
        torch.zeros(len(lengths), 2, dtype=torch.long),
        tokens,
        torch.zeros(len(lengths), width),
        mask,
        "v",
    )


def test_shaping_adds_the_penalty_only_when_asked():
    rollouts = _rollouts([2, 5, 6], [True, True, False])
    rewards = np.array([1.0, 1.0, 0.0])
    cfg = replace(RLConfig(), budget=6, overlong="shape", overlong_cache=2)
    assert overlong.shaped(cfg, rewards, rollouts).tolist() == pytest.approx([1.0, 0.5, -1.0])
    assert overlong.shaped(replace(cfg, overlong="none"), rewards, rollouts) is rewards


def test_filtering_drops_only_the_answers_the_budget_cut_off():
    rollouts = _rollouts([2, 6, 6], [True, True, False])
    used = torch.tensor([True, False, True])
    cfg = replace(RLConfig(), budget=6, overlong="filter")
    assert overlong.filtered(cfg, used, rollouts).tolist() == [True, False, False]
    assert overlong.filtered(replace(cfg, overlong="shape"), used, rollouts) is used


def test_a_ramp_longer_than_the_budget_is_refused_with_its_reason():
    with pytest.raises(ValueError, match="overlong_cache"):
        RLConfig(budget=4, overlong="shape", overlong_cache=5)
    with pytest.raises(ValueError, match="overlong"):
        RLConfig(overlong="trim")
