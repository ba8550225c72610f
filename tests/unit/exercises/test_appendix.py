"""The appendix's exercise checks: model solutions and other spellings pass, plausible mistakes and junk get a message."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from rlbook.core import advantages
from rlbook.exercises import appendix as exa

SOLUTION = {"loss_type": "cispo", "epsilon_high": 4.0, "num_iterations": 4, "max_steps": 240, "warmup_steps": 40}


@pytest.mark.parametrize("answer", [
    SOLUTION,
    {"loss_type": "CISPO", "epsilon_high": 4, "num_iterations": 4.0, "max_steps": 240.0, "warmup_steps": 40},
    dict(SOLUTION, temperature=1.0, num_generations=16, beta=0.0),
    dict(SOLUTION, epsilon_high=np.float64(4.0), max_steps=torch.tensor(240)),
])
def test_translation_solution_and_other_spellings_pass(answer):
    result = exa.check_translation(answer, "cispo")
    assert result.passed, result.message


@pytest.mark.parametrize("answer, hint", [
    ({k: v for k, v in SOLUTION.items() if k != "warmup_steps"}, "optimiser steps"),
    (dict(SOLUTION, max_steps=60), "counts RL steps"),
    (dict(SOLUTION, warmup_steps=10), "counts RL steps"),
    (dict(SOLUTION, loss_type="grpo"), "not what cispo needs"),
    (dict(SOLUTION, epsilon_high=0.2), "not what cispo needs"),
    (dict(SOLUTION, epsilon_high="4.0"), "is text"),
    (dict(SOLUTION, cispo_cap=4.0), "not among the settings"),
    ({"loss_type": "cispo"}, "lacks 4"),
])
def test_translation_mistakes_are_named(answer, hint):
    result = exa.check_translation(answer, "cispo")
    assert not result.passed and hint in result.message


def test_a_missing_setting_is_described_not_named():
    result = exa.check_translation({k: v for k, v in SOLUTION.items() if k != "num_iterations"}, "cispo")
    assert not result.passed and "num_iterations" not in result.message and "gradient steps per batch" in result.message


@pytest.mark.parametrize("answer, run, hint", [
    ([("loss_type", "cispo")], "cispo", "give a dict"), ("cispo", "cispo", "give a dict"),
    ({1: 2}, "cispo", "give a dict"), (SOLUTION, "nope", "not one of the book's runs"),
    (SOLUTION, None, "not one of the book's runs"), (SOLUTION, "faults", "no TRL translation"),
])
def test_translation_junk_gets_a_message(answer, run, hint):
    result = exa.check_translation(answer, run)
    assert not result.passed and hint in result.message
    assert "no answer yet" in exa.check_translation(None).message


# ---------------------------------------------------------------- A.2, on a small run built by hand


def _stored(step: int, rewards: list[list[float]]) -> dict:
    return {"step": step, "prompts": [f"p{i}" for i in range(len(rewards))],
            "rewards": torch.tensor(rewards, dtype=torch.float32).reshape(-1)}


def _run() -> SimpleNamespace:
    """Four prompts of four answers per step; steps 1 and 2 share a fraction, as neighbouring TRL steps can."""
    steps = [_stored(1, [[1, 1, 1, 1], [0, 1, 0, 1], [0, 0, 0, 0], [1, 0, 0, 0]]),
             _stored(2, [[1, 0, 1, 0], [1, 1, 1, 1], [0, 0, 0, 0], [0, 1, 1, 0]]),
             _stored(3, [[1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [0, 1, 0, 0]])]
    metrics = [{"step": s["step"], "zero_variance_frac": float(advantages.zero_variance_fraction(
        s["rewards"].view(4, -1)))} for s in steps]
    return SimpleNamespace(rollouts=steps, metrics=metrics)


RUN = _run()


@pytest.mark.parametrize("right", [
    lambda s: advantages.zero_variance_fraction(s["rewards"].view(len(s["prompts"]), -1)),
    lambda s: float((s["rewards"].view(4, -1).std(dim=1) == 0).float().mean()),
    lambda s: np.mean([len(set(g)) == 1 for g in s["rewards"].view(4, -1).tolist()]),
    lambda s: (s["rewards"].view(4, -1).std(dim=1) == 0).float().mean(),  # a 0-d tensor
])
def test_zero_variance_solution_and_other_spellings_pass(right):
    result = exa.check_zero_variance(right, RUN, step=2)
    assert result.passed, result.message and "TRL logged" in result.message


@pytest.mark.parametrize("wrong, hint", [
    (lambda s: advantages.zero_variance_fraction(s["rewards"].view(-1, len(s["prompts"])).T), "group the"),
    (lambda s: 0.5, "group the"),
    (lambda s: float((s["rewards"].view(4, -1).std(dim=1) == 0).sum()), "count of groups"),
    (lambda s: float((s["rewards"].view(4, -1).mean(dim=1) == 1).float().mean()), "group the"),
    (lambda s: str(advantages.zero_variance_fraction(s["rewards"].view(4, -1))), "one number"),
])
def test_zero_variance_mistakes_are_caught(wrong, hint):
    result = exa.check_zero_variance(wrong, RUN, step=2)
    assert not result.passed and hint in result.message


def test_a_number_that_is_right_for_one_step_is_asked_for_as_a_function():
    result = exa.check_zero_variance(0.5, RUN, step=2)
    assert not result.passed and "must be a function" in result.message and "a number" in result.message


@pytest.mark.parametrize("run", [None, [], SimpleNamespace(rollouts=[]), SimpleNamespace(rollouts=[1, 2])])
def test_zero_variance_with_a_run_that_is_not_one(run):
    result = exa.check_zero_variance(lambda s: 0.0, run, step=2)
    assert not result.passed and "TRL run" in result.message
    assert "no answer yet" in exa.check_zero_variance(None, RUN).message
