"""Tests for rlbook.analysis.slices (chapter 8): slices by a property of the prompt, worked by hand."""

from __future__ import annotations

import numpy as np
import pytest

from rlbook.analysis import slices
from rlbook.core.world import Task

TASKS = [Task((1, 2)), Task((4, 4)), Task((5, 5)), Task((9, 3))]  # answers 3, 8, 10, 12


def test_masks_follow_the_prompt_alone():
    masks = slices.slice_masks(TASKS)
    assert masks["carry"].tolist() == [False, False, True, True]
    assert masks["no carry"].tolist() == [True, True, False, False]
    assert masks["both operands below 5"].tolist() == [True, True, False, False]
    assert masks["an operand 5 or more"].tolist() == [False, False, True, True]


def test_slice_rows_average_within_each_slice_and_pair_the_gain():
    before, after = [0.0, 0.5, 0.0, 0.25], [0.5, 1.0, 0.0, 0.75]
    rows = {r["slice"]: r for r in slices.slice_rows(TASKS, before, after)}
    assert rows["all"]["prompts"] == 4 and rows["all"]["before"].value == pytest.approx(0.1875)
    carry = rows["carry"]
    assert carry["prompts"] == 2 and carry["after"].value == pytest.approx(0.375)
    assert carry["gain"].value == pytest.approx(0.25)
    nocarry = rows["no carry"]["gain"]
    assert nocarry.value == nocarry.lo == nocarry.hi == pytest.approx(0.5)  # both prompts gained 0.5: no spread


def test_slice_rows_refuse_rates_that_do_not_match_the_tasks():
    with pytest.raises(ValueError, match="one rate per task"):
        slices.slice_rows(TASKS, np.zeros(3), np.zeros(4))


def test_never_right_needs_zero_at_both_ends():
    assert slices.never_right(TASKS, [0, 0, 0, 0.1], [0, 0.2, 0, 0]) == [Task((1, 2)), Task((5, 5))]
