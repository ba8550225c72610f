"""Chapter 4's exercise checks: each reference solution passes, plausible wrong answers fail with a useful message."""
from __future__ import annotations

import numpy as np
import pytest

from rlbook import audit, runs
from rlbook import rewards as rw
from rlbook.exercises import ch4


def split_reward(stored):
    """The chapter's solution."""
    batch = audit.from_stored(stored)
    ok = np.array([s == "accepted" for s in batch.rescored(rw.get_verifier("exact")).statuses])
    return float((batch.rewards * ok).mean()), float((batch.rewards * ~ok).mean())


def test_ex12_reference_passes():
    assert ch4.check_reward_split(split_reward, seed=0).passed


def test_ex12_trusting_the_training_verifier_fails():
    def naive(stored):
        return float(stored["rewards"].mean()), 0.0

    result = ch4.check_reward_split(naive, seed=0)
    assert not result.passed and "exact verifier accepts" in result.message


def test_ex12_averaging_over_paid_rollouts_only_fails():
    def paid_only(stored):
        task, loophole = split_reward(stored)
        paid = float((stored["rewards"] > 0).float().mean())
        return task / paid, loophole / paid

    result = ch4.check_reward_split(paid_only, seed=0)
    assert not result.passed and "add up to" in result.message


def test_ex13_reference_passes():
    result = ch4.check_abort_rule(ch4.reference_abort_rule, seed=0)
    assert result.passed and "quiet on main" in result.message


def test_ex13_a_rule_that_never_fires_fails():
    result = ch4.check_abort_rule(lambda history: False, seed=0)
    assert not result.passed and "never fires on 'faults'" in result.message


def test_ex13_a_rule_that_always_fires_fails_on_main():
    result = ch4.check_abort_rule(lambda history: True, seed=0)
    assert not result.passed and "healthy 'main' run" in result.message


def test_ex13_a_rule_that_reads_a_missing_loss_is_told_why():
    result = ch4.check_abort_rule(lambda history: history[-1]["loss"] != history[-1]["loss"], seed=0)
    assert not result.passed and "KeyError" in result.message and ".get()" in result.message


def test_ex13_a_rule_that_misses_the_exploit_fails():
    def faults_only(history):
        now = history[-1]
        return now["excluded"]

    if audit.first_hacked_seed({s: runs.load("exploit", s).rollouts for s in (0, 1, 2)}) is None:
        pytest.skip("the hack took over on none of the seeds")
    result = ch4.check_abort_rule(faults_only, seed=0)
    assert not result.passed and "never fires on 'exploit'" in result.message
