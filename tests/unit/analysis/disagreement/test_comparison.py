"""Outcome-only against shaped RL over seeds (rlbook.analysis.disagreement.comparison)."""

from __future__ import annotations

import pytest

from rlbook.analysis import disagreement as d


class FakeRun:
    def __init__(self, seed, acc, val):
        self.seed = seed
        self.evals = [
            {"step": s, "heldout_expected_reward": a, "heldout_step_validity": v, "heldout_greedy_accuracy": a}
            for s, a, v in zip((0, 80), acc, val)
        ]


def test_compare_spread_and_wins():
    table = d.compare(
        {
            "outcome": [FakeRun(0, (0.4, 0.5), (0.6, 0.4)), FakeRun(1, (0.4, 0.7), (0.6, 0.5))],
            "shaped": [FakeRun(1, (0.4, 0.6), (0.6, 0.9)), FakeRun(0, (0.4, 0.6), (0.6, 0.8))],
        }
    )
    assert table["outcome"][1] == {
        "seed": 1,
        "start_accuracy": 0.4,
        "end_accuracy": 0.7,
        "start_validity": 0.6,
        "end_validity": 0.5,
        "end_greedy": 0.7,
    }
    assert d.wins(table, "shaped", "outcome", "end_validity") == 2
    assert d.wins(table, "shaped", "outcome", "end_accuracy") == 1  # seed 0: 0.6 > 0.5; seed 1: 0.6 < 0.7
    assert d.spread([0.5, 0.7]) == pytest.approx((0.6, 0.5, 0.7))
    assert d.eval_curve(FakeRun(0, (0.4, 0.5), (0.6, 0.4)), "heldout_step_validity") == ([0, 80], [0.6, 0.4])
    claims = d.comparison_claims(table, "shaped", "outcome")
    assert (claims["seeds"], claims["shaped_validity_wins"], claims["shaped_accuracy_wins"]) == (2, 2, 1)
    assert (claims["outcome_validity_fell"], claims["shaped_validity_fell"]) == (2, 0)
    assert (claims["outcome_accuracy_rose"], claims["shaped_accuracy_rose"]) == (2, 2)
    assert claims["outcome_end_validity"] == pytest.approx(0.45)
    assert claims["shaped_end_accuracy"] == pytest.approx(0.6)
    # shaped minus outcome at the end: validity 0.4 (seed 0), 0.4 (seed 1); accuracy 0.1, -0.1
    assert (claims["validity_gap"], claims["validity_gap_min"]) == pytest.approx((0.4, 0.4))
    assert (claims["accuracy_gap"], claims["accuracy_gap_min"], claims["accuracy_gap_max"]) == pytest.approx(
        (0.0, -0.1, 0.1)
    )
    with pytest.raises(ValueError, match="different seeds"):
        d.wins(
            d.compare({"a": [FakeRun(0, (0, 0), (0, 0))], "b": [FakeRun(1, (0, 0), (0, 0))]}), "a", "b", "end_accuracy"
        )
