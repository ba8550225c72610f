"""Chapter 10's named learners (rlbook.runs.preference): their settings derive from main's, unknown names and
the wrong kind are refused by name, and the module stays out of the RL runs' cache key."""

from __future__ import annotations

import functools
from types import SimpleNamespace

import pytest
import torch

from rlbook.core.source import import_closure
from rlbook.runs import MAIN, preference
from rlbook.runs.cache import TRAINING_ENTRY


def test_the_pairs_are_sampled_as_main_samples():
    cfg = preference.PAIRS
    assert (cfg.rounds, cfg.group_size, cfg.temperature, cfg.budget) == (
        MAIN.steps,
        MAIN.group_size,
        MAIN.temperature,
        MAIN.budget,
    )
    for learner in preference.LEARNERS.values():
        assert (learner.cfg.rounds, learner.cfg.group_size) == (cfg.rounds, cfg.group_size)


def test_unknown_learners_and_wrong_kinds_are_refused_by_name():
    with pytest.raises(KeyError, match="dpo-noisy"):
        preference.learner("nope")
    with pytest.raises(ValueError, match="reward model"):
        preference.train_policy("bt", 0)
    with pytest.raises(ValueError, match="DPO learner"):
        preference.train_reward_model("dpo", 0)


def test_the_learners_are_outside_the_rl_runs_cache_key():
    modules = import_closure(TRAINING_ENTRY)
    assert "rlbook.runs.preference" not in modules and "rlbook.core.preferences" not in modules


def test_the_noisy_pairs_swap_the_clean_ones_and_base_is_read_once_per_noise(monkeypatch):
    calls: list[float] = []
    drawn = preference.Pairs(
        torch.tensor([[1], [2], [3]]),
        torch.tensor([[4], [5], [6]]),
        torch.tensor([[7], [8], [9]]),
        torch.zeros(3, dtype=torch.bool),
        6,
        3,
        0,
    )
    monkeypatch.setattr(preference, "_drawn", lambda seed: (drawn, torch.tensor([0.1, 0.5, 0.9])))
    monkeypatch.setattr(preference, "pairs", functools.cache(preference.pairs.__wrapped__))
    monkeypatch.setattr(preference, "base_logprobs", functools.cache(preference.base_logprobs.__wrapped__))
    monkeypatch.setattr(preference, "load", lambda name, seed: SimpleNamespace(policy=lambda: name))

    def read(policy, pairs):
        calls.append(float(pairs.swapped.double().mean()))
        return pairs.chosen[:, 0].double(), pairs.rejected[:, 0].double()

    monkeypatch.setattr(preference, "pair_logprobs", read)
    noisy = preference.pairs(0, 0.2)
    assert noisy.swapped.tolist() == [True, False, False]
    assert noisy.chosen[:, 0].tolist() == [7, 5, 6] and noisy.rejected[:, 0].tolist() == [4, 8, 9]
    assert preference.pairs(0).chosen[:, 0].tolist() == [4, 5, 6]
    for _ in range(3):
        preference.base_logprobs(0)
        preference.base_logprobs(0, 0.2)
    assert sorted(calls) == [0.0, 1 / 3]
