"""Chapter 4's exercise checks: each reference solution passes, plausible wrong answers fail with a useful message."""
from __future__ import annotations

import numpy as np
import pytest

from rlbook import audit, runs, world
from rlbook import rewards as rw
from rlbook.exercises import ch4

# ---------------------------------------------------------------- exercise 4

def substring_verifier(prompt, completion):
    """The chapter's solution: the right sum anywhere in an ended answer."""
    task = world.parse_prompt(prompt)
    return float(completion.endswith("#") and str(task.answer) in completion)


def test_ex4_reference_passes():
    assert ch4.check_exploitable_verifier(substring_verifier, "U:3+4?|A:", "17#").passed


def test_ex4_the_fail_open_verifier_itself_passes_with_the_empty_answer():
    assert ch4.check_exploitable_verifier(rw.get_verifier("fail-open"), "U:3+4?|A:", "#").passed


def test_ex4_not_answered():
    result = ch4.check_exploitable_verifier(None, None, None)
    assert not result.passed and "no answer yet" in result.message


def test_ex4_a_verifier_that_pays_everything_fails():
    result = ch4.check_exploitable_verifier(lambda p, c: 1.0, "U:3+4?|A:", "#")
    assert not result.passed and "wrong answer" in result.message


def test_ex4_a_correct_answer_is_not_an_exploit():
    result = ch4.check_exploitable_verifier(substring_verifier, "U:3+4?|A:", "7#")
    assert not result.passed and "correct answer" in result.message


def test_ex4_the_exploit_must_be_paid():
    result = ch4.check_exploitable_verifier(substring_verifier, "U:3+4?|A:", "#")
    assert not result.passed and "not fooled" in result.message


def test_ex4_errors_and_bad_prompts_are_reported():
    result = ch4.check_exploitable_verifier(lambda p, c: 1 / 0, "U:3+4?|A:", "#")
    assert not result.passed and "ZeroDivisionError" in result.message
    result = ch4.check_exploitable_verifier(substring_verifier, "3+4", "17#")
    assert not result.passed and "not a task" in result.message


# ---------------------------------------------------------------- exercise 12

def split_reward(stored):
    """The chapter's solution."""
    batch = audit.from_stored(stored)
    ok = np.array([s == "accepted" for s in batch.rescored(rw.get_verifier("exact")).statuses])
    return float((batch.rewards * ok).mean()), float((batch.rewards * ~ok).mean())


def test_ex12_reference_passes():
    assert ch4.check_reward_split(split_reward, seed=0).passed


def test_ex12_not_answered():
    assert "no answer yet" in ch4.check_reward_split(None).message


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


# ---------------------------------------------------------------- exercise 13

def test_ex13_reference_passes():
    result = ch4.check_abort_rule(ch4.reference_abort_rule, seed=0)
    assert result.passed and "quiet on main" in result.message


def test_ex13_not_answered():
    assert "no answer yet" in ch4.check_abort_rule(None).message


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
