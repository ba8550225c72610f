"""The worked world's answer styles measured on a policy (rlbook.core.styles), with numbers worked by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from rlbook.core.evaluate import EvalResult
from rlbook.core.styles import choice_entropy, style_summary, worked_rows
from rlbook.core.world import STOI, TOKENS, WorkedTask, encode


class LastCharacterPolicy(nn.Module):
    """A policy whose next-character distribution depends on the last character only, as ``table`` writes it."""

    def __init__(self, table: dict[str, dict[str, float]]):
        super().__init__()
        self.logits = {}
        for after, probs in table.items():
            row = torch.full((len(TOKENS),), -60.0)
            for ch, p in probs.items():
                row[STOI[ch]] = math.log(p)
            self.logits[STOI[after]] = row

    def forward(self, ids: torch.Tensor):
        rows = [self.logits[int(i)] for i in ids[:, -1]]
        return torch.stack(rows)[:, None, :].expand(-1, ids.shape[1], -1), None


def binary(p: float) -> float:
    return -(p * math.log(p) + (1 - p) * math.log(1 - p))


def test_choice_entropy_by_hand():
    # After "=": the first character is 7 (a worked answer's units digit) w.p. 0.6, else 8 (the direct sum's).
    # After 7 the policy writes "+" w.p. 0.9; after 8, w.p. 0.25. So P(worked) = 0.6 * 0.9 + 0.4 * 0.25 = 0.64.
    table = {"=": {"7": 0.6, "8": 0.4}, **{d: {"+": 0.5, "5": 0.5} for d in "0123456789"}}
    table["7"], table["8"] = {"+": 0.9, "5": 0.1}, {"+": 0.25, "5": 0.75}
    policy = LastCharacterPolicy(table).train()
    got = choice_entropy(policy, [WorkedTask((47, 38)), WorkedTask((17, 68))])
    assert got["p_worked"] == pytest.approx(0.64, abs=1e-6)
    assert got["style"] == pytest.approx(binary(0.64), abs=1e-6)
    assert got["first_char"] == pytest.approx(binary(0.6), abs=1e-6)
    assert policy.training  # measured in eval mode, given back as it came


def test_a_sure_policy_has_no_style_entropy_left():
    table = {"=": {"7": 1.0}, **{d: {"+": 1.0} for d in "0123456789"}}
    got = choice_entropy(LastCharacterPolicy(table), [WorkedTask((47, 38))])
    assert got["p_worked"] == pytest.approx(1.0) and got["style"] == pytest.approx(0.0, abs=1e-6)
    assert got["first_char"] == pytest.approx(0.0, abs=1e-6)


def result_of(completions: list[list[str]], statuses: list[list[str]]) -> EvalResult:
    tasks = [WorkedTask((47, 38)), WorkedTask((12, 34))][: len(completions)]
    rewards = np.array([[float(s == "accepted") for s in row] for row in statuses])
    return EvalResult(tasks, rewards, statuses, completions)


def test_style_summary_counts_styles_their_accuracy_and_the_mean_length():
    result = result_of(
        [["85#", "7+8=15,4+3+1=8;85#", "84#"], ["2+4=6,1+3=4;46#", "2+4=6,1+3", "46#"]],
        [["accepted", "accepted", "incorrect"], ["accepted", "incomplete", "accepted"]],
    )
    summary = style_summary(result)
    assert {k: summary[k] for k in ("worked", "worked_accepted", "direct", "direct_accepted")} == {
        "worked": 3,
        "worked_accepted": 2,
        "direct": 3,
        "direct_accepted": 2,
    }
    assert summary["mean_length"] == pytest.approx((3 + 18 + 3 + 15 + 9 + 3) / 6)


def test_worked_rows_read_stored_tokens_as_answer_style_reads_text():
    texts = ["85#", "7+8=15;85#", "8", "#+"]  # the last one ends before its "+", which is not written
    width = max(map(len, texts))
    tokens = torch.tensor([encode(t + "#" * (width - len(t))) for t in texts], dtype=torch.uint8)
    lengths = torch.tensor([3, 10, 1, 1])
    assert worked_rows(tokens, lengths).tolist() == [False, True, False, False]
