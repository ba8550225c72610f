"""Chapter 10's named learners (rlbook.runs.preference): their settings derive from main's, unknown names and
the wrong kind are refused by name, and the module stays out of the RL runs' cache key."""

from __future__ import annotations

import pytest

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
