"""Evaluation outside the training loop (rlbook.core.evaluate), on hand-made results and fixed policies."""

from __future__ import annotations

import numpy as np
import pytest
from policies import constant_policy

from rlbook.core.evaluate import EvalResult, evaluate, greedy_accuracy, step_validity
from rlbook.core.stats import pass_at_k_curve
from rlbook.core.world import Task, split


def hand_result() -> EvalResult:
    """Three prompts, four samples each, statuses as an exact verifier would give them."""
    tasks = [Task((3, 4)), Task((9, 8)), Task((1, 1))]
    completions = [["7#"] * 4, ["17#", "18#", "18#", "U#"], ["3#", "3#", "3#", "22"]]
    statuses = [
        ["accepted"] * 4,
        ["accepted", "incorrect", "incorrect", "malformed"],
        ["incorrect"] * 3 + ["incomplete"],
    ]
    rewards = np.array([[1.0] * 4, [1.0, 0, 0, 0], [0.0] * 4])
    return EvalResult(tasks, rewards, statuses, completions, {"n": 4})


def test_per_prompt_and_expected_reward_by_hand():
    r = hand_result()
    assert r.per_prompt.tolist() == [1.0, 0.25, 0.0]
    assert r.expected_reward == pytest.approx(5 / 12)


def test_answers_most_frequent_first():
    r = hand_result()
    assert r.answers(0) == [("7#", 4, "accepted")]
    assert r.answers(1) == [("18#", 2, "incorrect"), ("17#", 1, "accepted"), ("U#", 1, "malformed")]
    assert r.answers(2) == [("3#", 3, "incorrect"), ("22", 1, "incomplete")]


def test_status_counts_leave_out_absent_statuses():
    assert hand_result().status_counts() == {"accepted": 5, "incorrect": 5, "malformed": 1, "incomplete": 1}


def test_pass_at_k_by_hand():
    # Correct counts (4, 1, 0) of n = 4.  pass@1 = c/n; pass@2 for c = 1 is 1 - C(3,2)/C(4,2) = 0.5;
    # pass@4 is 1 whenever one sample is right.
    curve = pass_at_k_curve(4, hand_result().correct_counts(), [1, 2, 4])
    assert curve == pytest.approx([(1 + 0.25 + 0) / 3, (1 + 0.5 + 0) / 3, 2 / 3])


def test_correct_counts_count_accepted_samples():
    assert hand_result().correct_counts().tolist() == [4, 1, 0]


def test_step_validity_by_hand():
    task = Task((2, 5, 9))
    # 7,16 both steps valid (1); 8,17: s1 wrong, s2 = 8 + 9 consistent (0.5); 7,15: s2 wrong (0.5); U#: none (0).
    result = EvalResult([task], np.zeros((1, 4)), [["accepted"] * 4], [["7,16#", "8,17#", "7,15#", "U#"]])
    assert step_validity(result) == pytest.approx(0.5)


def test_evaluate_a_policy_that_writes_sevens():
    policy = constant_policy({"7": 0.5, "#": 0.5})
    policy.version = "sevens@0"
    tasks = [Task((3, 4)), Task((1, 1))]
    r = evaluate(policy, tasks, n=200, seed=1)
    assert r.rewards.shape == (2, 200) and len(r.statuses[0]) == len(r.completions[1]) == 200
    assert set(r.completions[0]) <= {"#", "7#", "77#", "777#", "7777"}
    for text, status in zip(r.completions[0], r.statuses[0]):
        assert (status == "accepted") == (text == "7#")
        if text == "7777":
            assert status == "incomplete"
    # P("7#") = 0.5 * 0.5 = 0.25; 1+1 is never answered right.
    assert 0.15 < r.per_prompt[0] < 0.35 and r.per_prompt[1] == 0.0
    assert r.settings == {
        "n": 200,
        "temperature": 1.0,
        "token_budget": 4,
        "decoding": "sample",
        "seed": 1,
        "verifier": "exact@1.0",
        "policy_version": "sevens@0",
        "template": "U:a+b?|A:",
    }
    # The rollouts behind the result, kept so that another verifier can score the very same answers.
    assert r.rollouts.completions() == [text for row in r.completions for text in row]
    assert r.rollouts.prompts == [t.prompt for t in tasks for _ in range(200)]


def test_evaluate_is_seeded():
    policy = constant_policy({"7": 0.5, "#": 0.5})
    tasks = [Task((3, 4))]
    assert evaluate(policy, tasks, n=16, seed=3).completions == evaluate(policy, tasks, n=16, seed=3).completions
    assert evaluate(policy, tasks, n=16, seed=3).completions != evaluate(policy, tasks, n=16, seed=4).completions


def test_greedy_evaluation_takes_one_answer():
    policy = constant_policy({"7": 0.6, "#": 0.4})
    r = evaluate(policy, [Task((3, 4)), Task((1, 1))], n=32, greedy=True)
    assert r.rewards.shape == (2, 1)
    assert r.completions == [["7777"], ["7777"]] and r.statuses == [["incomplete"], ["incomplete"]]
    assert r.settings["temperature"] is None and r.settings["decoding"] == "greedy"
    assert greedy_accuracy(policy, [Task((3, 4))]) == 0.0


def test_multi_world_template_and_budget():
    policy = constant_policy({"7": 0.5, ",": 0.25, "#": 0.25})
    r = evaluate(policy, split("test", "multi")[:3], n=4, budget=5, seed=0)
    assert r.settings["template"] == "U:a+b+c?|A:" and r.settings["token_budget"] == 5
    assert all(len(c) <= 5 for row in r.completions for c in row)
