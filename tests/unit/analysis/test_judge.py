"""Best-of-n, proxy-and-gold curves and the exploit diagnosis of chapter 5 (rlbook.analysis.judge), on made-up
policies and runs: no trained run needed."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rlbook.analysis import judge
from rlbook.core.policy import Policy
from rlbook.core.reward_model import RewardModel
from rlbook.core.world import encode
from rlbook.runs import Run


def model_and_policy() -> tuple[RewardModel, Policy]:
    torch.manual_seed(0)
    policy = Policy()
    model = RewardModel(policy)
    torch.nn.init.normal_(model.score.weight)
    return model.eval(), policy


def test_best_of_n_proxy_never_falls_with_n_and_gold_is_a_share():
    model, policy = model_and_policy()
    result = judge.best_of_n(policy, model, seed=0, ns=(1, 2, 4))
    assert result.picks == 60 * 4 and result.ns == (1, 2, 4)
    assert np.all(np.diff(result.proxy) >= 0)
    assert np.all((result.gold >= 0) & (result.gold <= 1)) and result.peak in result.ns
    with pytest.raises(ValueError, match="divide"):
        judge.best_of_n(policy, model, seed=0, ns=(1, 3, 4))


def batch(step: int, answers: list[str], scores: list[float]) -> dict:
    rows = [encode(a.ljust(4, "#")) for a in answers]
    return {
        "step": step,
        "prompts": ["U:3+4?|A:"],
        "tokens": torch.tensor(rows, dtype=torch.uint8),
        "lengths": torch.tensor([len(a) for a in answers], dtype=torch.uint8),
        "rewards": torch.tensor(scores),
    }


def test_exploit_counts_wrong_answers_the_judge_scores_high():
    rollouts = [
        batch(1, ["7#", "7#", "9#", "12#"], [0.9, 0.9, 0.2, 0.4]),
        batch(2, ["9#", "9#", "9#", "7#"], [0.8, 0.8, 0.7, 0.9]),
    ]
    evals = [
        {"step": s, "train_reward": r, "train_exact_reward": g, "heldout_expected_reward": h}
        for s, r, g, h in ((0, 0.5, 0.6, 0.4), (2, 0.8, 0.3, 0.2))
    ]
    run = Run("fake", 0, 1, {}, {"rollouts": rollouts, "evals": evals}, None)
    found = judge.exploit(run)
    assert found.steps == [1, 2] and found.share.tolist() == [0.0, 0.75]
    assert found.single_digit.tolist() == [0.75, 1.0]
    text, times, score, prompts, right_for = found.top[0]
    assert (text, times, prompts) == ("9#", 3, 1) and score == pytest.approx(0.7667, abs=1e-3)
    assert right_for == sum(t.completion == "9#" for t in judge.split("train"))
    curves = judge.curves(run)
    assert curves.steps == [0, 2] and curves.gold.tolist() == [0.6, 0.3]
