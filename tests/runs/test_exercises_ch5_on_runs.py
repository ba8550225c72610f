"""Chapter 5's exercise checks: every reference solution passes, plausible wrong answers fail with a useful message."""
from __future__ import annotations

import numpy as np

from rlbook import selection as sel
from rlbook.exercises import ch5

PLAN = {"select_on": "validation", "report_on": "test", "verifier": "exact", "verifier_version": "1.0", "n": 32,
        "temperature": 1.0, "token_budget": 4, "template": "U:a+b?|A:", "checkpoints": "all",
        "base_same_settings": True}


def test_plan_reference_passes_and_runs(capsys):
    result = ch5.check_independent_evaluation(PLAN, seed=0)
    assert result.passed, result.message
    assert "20 test prompts" in result.message and "difference" in capsys.readouterr().out


def test_retained_reference_passes():
    result = ch5.check_retained_test(sel.plain_equation_accuracy, seed=0)
    assert result.passed, result.message
    assert "before RL" in result.message and "random weights" in result.message


def test_retained_constant_test_fails():
    result = ch5.check_retained_test(lambda policy: 1.0, seed=0)
    assert not result.passed and "does not measure a capability" in result.message


def test_retained_random_test_fails_as_nondeterministic():
    rng = np.random.default_rng(0)
    result = ch5.check_retained_test(lambda policy: float(rng.random()), seed=0)
    assert not result.passed and "deterministic" in result.message


def test_retained_out_of_range_and_errors():
    assert "[0, 1]" in ch5.check_retained_test(lambda policy: 42.0, seed=0).message
    assert "ZeroDivisionError" in ch5.check_retained_test(lambda policy: 1 / 0, seed=0).message
    assert "no answer yet" in ch5.check_retained_test(None).message
