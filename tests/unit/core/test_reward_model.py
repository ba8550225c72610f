"""The learned judge of chapter 4 (rlbook.core.reward_model), on an untrained policy: no run needed."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rlbook.core import rewards as rw
from rlbook.core.policy import Policy, weights_hash
from rlbook.core.reward_model import (
    JudgeConfig,
    JudgeVerifier,
    RewardModel,
    auc,
    calibration_error,
    encode_pairs,
    judge_probabilities,
    train_judge,
)

TINY = JudgeConfig(labels=64, steps=5, batch=16)


def policy() -> Policy:
    torch.manual_seed(0)
    return Policy()


def test_padding_after_a_row_does_not_change_its_score():
    model = RewardModel(policy())
    torch.nn.init.normal_(model.score.weight)
    alone = judge_probabilities(model, [("U:3+4?|A:", "7#")])
    padded = judge_probabilities(model, [("U:3+4?|A:", "7#"), ("U:3+4?|A:", "1234")])
    assert np.allclose(alone[0], padded[0], atol=1e-6)
    ids, lengths = encode_pairs([("U:3+4?|A:", "7#"), ("U:3+4?|A:", "1234")])
    assert ids.shape == (2, 13) and lengths.tolist() == [11, 13]


def test_a_fresh_judge_says_one_half_and_the_policy_is_left_alone():
    p = policy()
    before = weights_hash(p)
    model = RewardModel(p)
    assert np.allclose(judge_probabilities(model, [("U:3+4?|A:", "7#")]), 0.5)
    train_judge(p, TINY, 0)
    assert weights_hash(p) == before


def test_training_is_deterministic_for_a_seed_and_differs_across_seeds():
    torch.set_num_threads(1)
    states = [train_judge(policy(), TINY, seed).state_dict() for seed in (0, 0, 1)]
    assert all(torch.equal(states[0][k], states[1][k]) for k in states[0])
    assert not all(torch.equal(states[0][k], states[2][k]) for k in states[0])


def test_auc_and_calibration_on_known_cases():
    labels = np.array([1.0, 1.0, 0.0, 0.0])
    assert auc(np.array([0.9, 0.8, 0.2, 0.1]), labels) == 1.0
    assert auc(np.array([0.1, 0.2, 0.8, 0.9]), labels) == 0.0
    assert auc(np.array([0.5, 0.5, 0.5, 0.5]), labels) == 0.5
    assert np.isnan(auc(np.array([0.5]), np.array([1.0])))
    assert calibration_error(np.array([0.95, 0.95, 0.05, 0.05]), labels) == pytest.approx(0.05)
    assert calibration_error(np.array([0.5, 0.5, 0.5, 0.5]), labels) == 0.0


def test_the_judge_as_a_verifier_pays_its_probability():
    model = RewardModel(policy())
    judge = JudgeVerifier(model)
    prompts, completions = ["U:3+4?|A:"] * 3, ["7#", "7#", "9#"]
    rewards, statuses = rw.score(judge, prompts, completions)
    assert np.allclose(rewards, 0.5) and statuses == ["accepted"] * 3
    verdict = judge("U:3+4?|A:", "7#")
    assert verdict.verifier == "judge" and "P(right)" in verdict.reason
