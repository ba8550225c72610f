"""Chapter 5's exercise checks: every reference solution passes, plausible wrong answers fail with a useful message."""
from __future__ import annotations

import numpy as np
import pytest

from rlbook import runs
from rlbook import selection as sel
from rlbook.core.sampling import sample
from rlbook.core.world import split
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


def test_plan_in_other_spellings_passes_and_runs():
    spelled = dict(PLAN, report_on=["test"], n=32.0, verifier="exact@1.0", checkpoints=runs.load("main", 0).steps)
    result = ch5.check_independent_evaluation(spelled, seed=0)
    assert result.passed, result.message
    result = ch5.check_independent_evaluation(dict(PLAN, report_on=("test",), token_budget=ch5.max_token_budget()))
    assert result.passed, result.message


def _plain_by_hand(policy):
    tasks = split("all")
    texts = sample(policy, [f"{a}+{b}=" for a, b in (t.operands for t in tasks)], n=1, budget=4,
                   greedy=True).completions()
    return float(np.mean([text.split("\n")[0].replace(" ", "") == str(t.answer) for text, t in zip(texts, tasks)]))


def _plain_on_half(policy):
    return sel.plain_equation_accuracy(policy, split("all")[:50])


@pytest.mark.parametrize("right", [_plain_by_hand, _plain_on_half])
def test_retained_other_plain_format_tests_pass(right):
    result = ch5.check_retained_test(right, seed=0)
    assert result.passed, result.message


def _chat_accuracy(policy, name="heldout"):
    tasks = split(name)
    texts = sample(policy, [t.prompt for t in tasks], n=1, budget=4, greedy=True).completions()
    return float(np.mean([text == f"{t.answer}#" for text, t in zip(texts, tasks)]))


def _end_of_turn_rate(policy):
    texts = sample(policy, [t.prompt for t in split("all")], n=1, budget=4, greedy=True).completions()
    return float(np.mean([text.endswith("#") for text in texts]))


@pytest.mark.parametrize("wrong", [_chat_accuracy, _end_of_turn_rate, lambda p: _chat_accuracy(p, "train")])
def test_retained_tests_of_what_rl_rewards_are_refused(wrong):
    result = ch5.check_retained_test(wrong, seed=0)
    assert not result.passed and "chat template" in result.message and "measures the reward again" in result.message


@pytest.mark.parametrize("junk, hint", [(lambda p: "0.5", "return a number"), (lambda p: None, "return a number"),
                                        ("test", "must be a function")])
def test_retained_junk_gets_a_message(junk, hint):
    result = ch5.check_retained_test(junk, seed=0)
    assert not result.passed and hint in result.message
