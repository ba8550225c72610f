"""The single-step verdict breakdown (rlbook.analysis.disagreement.breakdown)."""

from __future__ import annotations

import numpy as np
import pytest

from rlbook.analysis import disagreement as d
from rlbook.core import rewards as rw
from rlbook.core.evaluate import EvalResult
from rlbook.core.world import Task


def test_first_number_and_right_number_rejected():
    assert d.first_number(" =7\n3") == "7" and d.first_number("#") == "" and d.first_number("12#4") == "12"
    tasks = [Task((3, 4)), Task((4, 5))]
    completions = [["7#", " =7\n", "77#"], ["9 #", "8#", "9"]]
    statuses = [[rw.ExactVerifier()(t.prompt, c).status for c in row] for t, row in zip(tasks, completions)]
    result = EvalResult(tasks, np.array([[1.0, 0, 0], [0, 0, 0]]), statuses, completions)
    # rejected, first number the sum: ' =7\n' (incomplete), '9 #' (malformed), '9' (incomplete)
    assert d.right_number_rejected(result) == 3
    row = d.breakdown(result)
    assert row["samples"] == 6 and row["expected_reward"] == pytest.approx(1 / 6)
    assert (row["accepted"], row["incorrect"], row["malformed"], row["incomplete"]) == (1, 2, 1, 2)
    assert row["right_number_rejected"] == 3
    assert d.format_share(row) == pytest.approx(3 / 5)
    assert d.format_share({"samples": 2, "accepted": 2, "malformed": 0, "incomplete": 0}) == 0.0
