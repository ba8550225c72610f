"""Evaluation outside the training loop (rlbook.core.evaluate), on hand-made results and fixed policies."""

from __future__ import annotations

import pytest
import torch

from rlbook import runs
from rlbook.core.evaluate import evaluate, greedy_accuracy
from rlbook.core.rewards import get_verifier
from rlbook.core.world import split


def test_evaluation_reproduces_the_base_runs_recorded_numbers():
    """The cached base run of seed 0 was evaluated with the same function: same seed, same numbers."""
    run = runs.load("base", 0)
    before = torch.get_num_threads()
    torch.set_num_threads(run.threads)
    try:
        policy = run.policy(1)
        exact = get_verifier("exact")
        heldout = split("heldout")
        recorded = run.eval_at(1)
        assert greedy_accuracy(policy, heldout, 4, exact) == recorded["heldout_greedy_accuracy"]
        result = evaluate(policy, heldout, n=32, budget=4, verifier=exact, seed=10_000)
        assert result.expected_reward == pytest.approx(recorded["heldout_expected_reward"])
        assert result.per_prompt.round(5).tolist() == recorded["heldout_per_prompt"]
        assert result.status_counts() == recorded["heldout_status_counts"]
    finally:
        torch.set_num_threads(before)
