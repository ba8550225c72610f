"""rlbook.exercises.ch1: each reference solution passes, and plausible wrong answers fail with a useful message."""
from __future__ import annotations

import numpy as np
import pytest

from rlbook.exercises import ch1

RECORD = {"prompt": "U:1+4?|A:", "completion": "5#", "token_ids": [5, 20], "logprobs": [-0.9, -0.01],
          "termination": "end-of-turn", "policy_version": "base@sft", "reward": 1.0, "status": "accepted",
          "reason": "answer 5 = 1+4"}


def test_reference_labels_worked_by_hand():
    labels = ch1.rollout_labels(RECORD)
    assert labels == {"state": "U:1+4?|A:5", "action": "#",
                      "trajectory": [("U:1+4?|A:", "5"), ("U:1+4?|A:5", "#")],
                      "rewards": [0.0, 1.0], "return": 1.0, "policy": "base@sft"}


def test_reference_labels_pass():
    assert ch1.check_rollout_labels(ch1.rollout_labels(RECORD), RECORD).passed


def test_unfilled_labels_are_not_answered():
    result = ch1.check_rollout_labels(dict.fromkeys(ch1.LABELS), RECORD)
    assert not result.passed and "no answer yet" in result.message


@pytest.mark.parametrize("key, wrong, hint", [
    ("state", "5", "includes the prompt"),
    ("state", "U:1+4?|A:5#", "already contains the action"),
    ("action", "5", "single character"),
    ("trajectory", "5#", "pairs each action with the state"),
    ("rewards", 1.0, "one reward per action"),
    ("rewards", [1.0, 1.0], "every earlier reward is 0"),
    ("return", 2.0, "sum of the episode's rewards"),
    ("policy", "transformer", "version recorded"),
])
def test_wrong_labels_fail_with_a_hint(key, wrong, hint):
    labels = dict(ch1.rollout_labels(RECORD), **{key: wrong})
    result = ch1.check_rollout_labels(labels, RECORD)
    assert not result.passed and result.message.startswith(f"{key}:") and hint in result.message


def test_a_partly_filled_answer_names_the_empty_labels():
    labels = dict(ch1.rollout_labels(RECORD), policy=None)
    result = ch1.check_rollout_labels(labels, RECORD)
    assert not result.passed and "policy: still empty" in result.message


def _reference_advantages(rewards):
    baseline = sum(rewards) / len(rewards)
    return [r - baseline for r in rewards]


def test_reference_advantages_pass():
    assert ch1.check_advantages(_reference_advantages).passed


@pytest.mark.parametrize("wrong, hint", [
    (lambda r: list(r), "rewards themselves"),
    (lambda r: ((np.array(r) - np.mean(r)) / (np.std(r) + 1e-12)).tolist(), "standard deviation"),
    (lambda r: [x - max(r) for x in r], "subtract the group's mean reward"),
    (lambda r: _reference_advantages(r)[:-1], "one advantage per reward"),
])
def test_wrong_advantages_fail_with_a_hint(wrong, hint):
    result = ch1.check_advantages(wrong)
    assert not result.passed and hint in result.message


def test_advantages_stub_and_crash():
    assert "no answer yet" in ch1.check_advantages(lambda r: None).message
    assert "no answer yet" in ch1.check_advantages(None).message
    crash = ch1.check_advantages(lambda r: 1 / 0)
    assert not crash.passed and "ZeroDivisionError" in crash.message


def test_reference_chance_passes():
    assert ch1.check_chance_of_a_right_answer(lambda p, n: 1 - (1 - np.asarray(p, float)) ** n).passed


@pytest.mark.parametrize("wrong, hint", [
    (lambda p, n: p * n, "between 0 and 1"),
    (lambda p, n: (1 - p) ** n, "complement"),
    (lambda p, n: p ** n, "every sample is right"),
    (lambda p, n: 1 - (1 - p) ** (2 * n), "1 minus it"),
])
def test_wrong_chance_fails_with_a_hint(wrong, hint):
    result = ch1.check_chance_of_a_right_answer(wrong)
    assert not result.passed and hint in result.message


def test_chance_stub_is_not_answered():
    assert "no answer yet" in ch1.check_chance_of_a_right_answer(lambda p, n: None).message
