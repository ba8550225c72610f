"""The disagreement matrix, its cells and summaries (rlbook.analysis.disagreement.counts)."""

from __future__ import annotations

import pytest
import torch
from hand_rollouts import HAND, P

from rlbook.analysis import disagreement as d
from rlbook.core.world import encode


def test_matrix_counts_and_kind_counts():
    judged = d.judge([P] * len(HAND), list(HAND))
    counts, rows, columns = d.matrix(judged)
    assert rows == list(d.OUTCOME_ROWS) and columns == [1.0, 0.5, 0.0]
    assert counts.tolist() == [
        [1, 0, 2],  # accepted
        [0, 2, 1],  # incorrect: never all steps valid
        [2, 0, 1],  # malformed
        [1, 1, 0],
    ]  # incomplete
    assert d.kind_counts(judged) == {
        d.RIGHT_INVALID: 2,
        d.VALID_MALFORMED: 2,
        d.VALID_INCOMPLETE: 1,
        d.PARTIAL_CREDIT: 3,
        d.AGREE: 3,
    }
    assert d.rate(judged, d.RIGHT_INVALID) == pytest.approx(2 / 11)


def test_bounded_sample_is_distinct_bounded_and_reproducible():
    completions = ["6,12#"] * 5 + ["12,12#", "5,12#", "4,12#", "3,12#"]
    judged = d.judge([P] * len(completions), completions)
    everything = d.bounded_sample(judged, d.RIGHT_INVALID, k=10)
    assert [j.completion for j in everything] == ["6,12#", "12,12#", "5,12#", "4,12#", "3,12#"]
    three = d.bounded_sample(judged, d.RIGHT_INVALID, k=3, seed=1)
    assert len(three) == 3 and three == d.bounded_sample(judged, d.RIGHT_INVALID, k=3, seed=1)
    assert [j.completion for j in three] == [j.completion for j in everything if j in three]  # order kept
    assert d.bounded_sample(judged, d.VALID_MALFORMED) == []


def test_right_invalid_and_partial_credit_summaries():
    completions = ["6,12#", "8,12#", "12,12#", "2,12#", "7,12#", "7,13#", "6,11#", "6,13#", "7,1"]
    judged = d.judge([P] * len(completions), completions)
    assert d.right_invalid_summary(judged) == {"total": 4, "off_by_one": 2}
    # partial credit: '7,13#' and '7,1' (first step valid), '6,11#' (second step consistent with 6)
    assert d.partial_credit_summary(judged) == {"total": 3, "first_valid": 2, "second_valid": 1}


def test_kind_rate_over_training_reads_every_nth_logged_step():
    def step_log(step, texts):
        tokens = torch.full((len(texts), 8), 20, dtype=torch.uint8)
        for i, t in enumerate(texts):
            tokens[i, : len(t)] = torch.tensor(encode(t), dtype=torch.uint8)
        return {
            "step": step,
            "prompts": [P],
            "tokens": tokens,
            "lengths": torch.tensor([len(t) for t in texts], dtype=torch.uint8),
        }

    class LoggedRun:
        rollouts = (
            step_log(1, ["6,12#", "7,12#"]),
            step_log(2, ["7,12#", "7,12#"]),
            step_log(3, ["6,12#", "8,12#"]),
            step_log(4, ["7,13#", "7,12#"]),
        )

    assert d.kind_rate_over_training(LoggedRun()) == ([1, 2, 3, 4], [0.5, 0.0, 1.0, 0.0])
    assert d.kind_rate_over_training(LoggedRun(), every=2) == ([2, 4], [0.0, 0.0])
    assert d.kind_rate_over_training(LoggedRun(), d.PARTIAL_CREDIT, every=2) == ([2, 4], [0.0, 0.5])


def test_valid_end_summary():
    judged = d.judge([P] * 5, ["7,12#3", "7,12,12#", "7,12,1", "7,12#", "7,12 "])
    assert d.valid_end_summary(judged) == {"malformed": 2, "incomplete": 1, "extra_number": 2}
