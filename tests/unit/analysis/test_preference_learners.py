"""Chapter 10's measurements (rlbook.analysis.preference_learners): rows keyed alike when equal, rankings counting
strict wins only, and the exercise's pairs as the first pairs of dpo's data with their log-probabilities."""

from __future__ import annotations

import pytest
import torch

from rlbook.analysis import preference_learners as pl
from rlbook.core.policy import Policy, PolicyConfig
from rlbook.core.preferences import Pairs, sequence_logprobs


def test_keys_tell_rows_apart_and_equal_rows_alike():
    prompts = torch.tensor([[1, 2], [1, 2], [3, 4]])
    tokens = torch.tensor([[5, 6], [5, 6], [5, 6]])
    keys = pl._keys(prompts, tokens)
    assert keys[0] == keys[1] != keys[2]


def test_ranking_counts_only_strict_wins():
    assert pl._ranked(torch.tensor([1.0, 2.0, 0.0, 3.0]), torch.tensor([0.0, 2.0, 1.0, 2.0])) == 0.5


def test_the_exercise_hands_the_first_pairs_with_their_log_probabilities_under_both_policies(monkeypatch):
    torch.manual_seed(0)
    base = Policy(PolicyConfig(d_model=16, n_layer=1, n_head=2)).eval()
    trained = Policy(PolicyConfig(d_model=16, n_layer=1, n_head=2)).eval()

    class Run:
        def policy(self):
            return base

    monkeypatch.setattr(pl, "load", lambda name, seed: Run())
    g = torch.Generator().manual_seed(1)
    n = pl.EXERCISE_PAIRS + 4
    pairs = Pairs(
        torch.randint(1, 10, (n, 9), generator=g),
        torch.randint(1, 10, (n, 4), generator=g),
        torch.randint(1, 10, (n, 4), generator=g),
        torch.zeros(n, dtype=torch.bool),
        0,
        0,
        0,
    )
    got = pl._exercise(0, pairs, trained)
    assert set(got) == {"policy_chosen", "policy_rejected", "ref_chosen", "ref_rejected", "beta"}
    assert all(len(got[k]) == pl.EXERCISE_PAIRS for k in got if k != "beta")
    first = slice(0, pl.EXERCISE_PAIRS)
    with torch.no_grad():
        expected = sequence_logprobs(trained, pairs.prompt_ids[first], pairs.chosen[first]).tolist()
        ref = sequence_logprobs(base, pairs.prompt_ids[first], pairs.rejected[first]).tolist()
    assert got["policy_chosen"] == pytest.approx(expected) and got["ref_rejected"] == pytest.approx(ref)
