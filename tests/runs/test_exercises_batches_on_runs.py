"""Exercise 1.2's second part and chapter 3's Try it on main's real first and last batches: the facts hold the
run's batches, each reference passes, and the commonest slips are named on the real data."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rlbook import book
from rlbook.core import advantages as adv
from rlbook.exercises import ch1, ch3
from rlbook.runs import MAIN


@pytest.fixture(scope="module")
def loop():
    return book.load("loop", check=False)


@pytest.fixture(scope="module")
def gradient():
    return book.load("gradient", check=False)


def test_chapter_1_holds_the_same_batches_as_chapter_3(loop, gradient):
    for name in ("rewards_first", "rewards_last"):
        batch = np.array(getattr(loop, name))
        assert batch.shape[1] == MAIN.group_size and set(np.unique(batch)) <= {0.0, 1.0}
        assert np.array_equal(batch, np.array(getattr(gradient, name)))


def test_pushes_on_the_real_batches(loop):
    first, last = loop.rewards_first, loop.rewards_last
    result = ch1.check_pushes(ch1.count_pushes(first, last), first, last)
    assert result.passed and "main's first batch" in result.message
    by_reward = (int((np.array(first) == 1).sum()), int((np.array(first) == 0).sum()), 0)  # right, wrong, none
    wrong = ch1.check_pushes({"first": by_reward, "last": ch1.count_pushes(first, last)["last"]}, first, last)
    assert not wrong.passed and "those are the right and the wrong answers" in wrong.message


def test_push_size_on_the_real_batches(gradient):
    first, last = gradient.rewards_first, gradient.rewards_last
    result = ch3.check_push_size(ch3.push_size(first, last), first, last)
    assert result.passed and "main's first batch: mean |A|" in result.message
    rewards = torch.tensor(first)
    mixed = rewards.max(dim=1).values > rewards.min(dim=1).values
    normed = adv.group_normalized(rewards).abs()
    slip = {"first": (float(normed.mean()), float(normed[mixed].mean())), "last": ch3.push_size(first, last)["last"]}
    wrong = ch3.check_push_size(slip, first, last)
    assert not wrong.passed and "divided by the group's standard deviation" in wrong.message
