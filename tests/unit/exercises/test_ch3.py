"""Chapter 3's exercise checks: every reference solution passes, plausible mistakes fail with a useful message."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from rlbook.analysis.credit import ProcessGroup
from rlbook.exercises import ch3

# --- the solutions, as the chapter gives them -----------------------------------------------------------


def split_credit_solution(completion, outcome_adv, step_adv):
    outcome, process, commas = [], [], 0
    for ch in completion:
        outcome.append(outcome_adv)
        process.append(step_adv[min(commas, len(step_adv) - 1)])
        commas += ch == ","
    return {"outcome": outcome, "process": process}


def group_normalized_solution(rewards):
    centred = rewards - rewards.mean(dim=-1, keepdim=True)
    return centred / (rewards.std(dim=-1, keepdim=True, correction=0) + 1e-6)


def ppo_solution(logp, old_logp, adv, mask, eps):
    ratio = torch.exp(logp - old_logp)
    a = adv[:, None]
    objective = torch.minimum(ratio * a, ratio.clamp(1 - eps, 1 + eps) * a)
    return -(objective * mask).sum() / mask.sum()


@pytest.fixture
def group() -> ProcessGroup:
    """A hand-made group for ``U:3+4+5?|A:`` (s1 = 7, s2 = 12)."""
    completions = ["7,12#", "7,11#", "6,11#", "7,12"]
    rewards = np.array([1.0, 0.0, 0.0, 0.0])
    valid = np.array([[1.0, 1.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    return ProcessGroup("U:3+4+5?|A:", completions, rewards, rewards - rewards.mean(), valid,
                        valid - valid.mean(axis=0))


# --- try it ------------------------------------------------------------------------------------------------


def test_try_it():
    assert not ch3.check_try_it(None).passed
    good = {"[1, 1, 0, 0]": [0.5, 0.5, -0.5, -0.5], "[1, 1, 1, 1]": [0, 0, 0, 0]}
    assert ch3.check_try_it(good).passed
    raw = {"[1, 1, 0, 0]": [1, 1, 0, 0], "[1, 1, 1, 1]": [0, 0, 0, 0]}
    result = ch3.check_try_it(raw)
    assert not result.passed and "subtract the group's mean reward (0.5)" in result.message
    assert "missing the group" in ch3.check_try_it({"[1, 1, 0, 0]": [0.5, 0.5, -0.5, -0.5]}).message


# --- exercise 5 --------------------------------------------------------------------------------------------


def test_split_credit_solution_passes(group):
    assert ch3.check_split_credit(split_credit_solution, group).passed
    assert ch3.check_split_credit(split_credit_solution).passed


def test_split_credit_stub_is_not_answered(group):
    assert "no answer yet" in ch3.check_split_credit(None).message
    assert "no answer yet" in ch3.check_split_credit(lambda c, o, s: None, group).message


def test_split_credit_comma_in_the_next_step_fails(group):
    def comma_opens_next(completion, outcome_adv, step_adv):
        steps, commas = [], 0
        for ch in completion:
            commas += ch == ","
            steps.append(step_adv[min(commas, len(step_adv) - 1)])
        return {"outcome": [outcome_adv] * len(completion), "process": steps}

    result = ch3.check_split_credit(comma_opens_next, group)
    assert not result.passed
    assert "process credit differs at character(s) [1]" in result.message
    assert "belongs to the step it closes" in result.message


def test_split_credit_skipping_the_end_mark_fails(group):
    def digits_only(completion, outcome_adv, step_adv):
        full = split_credit_solution(completion.rstrip("#"), outcome_adv, step_adv)
        return full

    result = ch3.check_split_credit(digits_only, group)
    assert not result.passed and "the end mark and commas count" in result.message


def test_split_credit_outcome_only_on_the_last_token_fails(group):
    def last_token_only(completion, outcome_adv, step_adv):
        full = split_credit_solution(completion, outcome_adv, step_adv)
        full["outcome"] = [0.0] * (len(completion) - 1) + [outcome_adv]
        return full

    result = ch3.check_split_credit(last_token_only, group)
    assert not result.passed and "every generated character gets the same advantage" in result.message


def test_split_credit_reports_a_crash(group):
    result = ch3.check_split_credit(lambda c, o, s: 1 / 0, group)
    assert not result.passed and "ZeroDivisionError" in result.message


# --- exercise 14 -------------------------------------------------------------------------------------------


def test_group_normalized_solution_passes():
    assert ch3.check_group_normalized(group_normalized_solution).passed


@pytest.mark.parametrize("wrong, hint", [
    (lambda r: (r - r.mean(-1, keepdim=True)) / (r.std(-1, keepdim=True) + 1e-6), "sample standard deviation"),
    (lambda r: (r - r.mean(-1, keepdim=True)) / r.std(-1, keepdim=True, correction=0), "add eps"),
    (lambda r: r - r.mean(-1, keepdim=True), "now divide each group by its standard deviation"),
    (lambda r: (r - r.mean(-1, keepdim=True)) / (r.std(correction=0) + 1e-6), "whole batch"),
    (lambda r: r / (r.std(-1, keepdim=True, correction=0) + 1e-6), "subtract each group's mean"),
    (lambda r: r.flatten(), "expected shape"),
])
def test_group_normalized_mistakes_fail_with_a_hint(wrong, hint):
    result = ch3.check_group_normalized(wrong)
    assert not result.passed
    assert hint in result.message


def test_group_normalized_stub():
    assert "no answer yet" in ch3.check_group_normalized(lambda r: None).message


# --- the PPO-clip token loss -------------------------------------------------------------------------------


def test_ppo_solution_passes():
    assert ch3.check_ppo_clip_loss(ppo_solution).passed


def _masked_mean(x, mask):
    return (x * mask).sum() / mask.sum()


@pytest.mark.parametrize("wrong, hint", [
    (lambda lp, old, a, m, e: -ppo_solution(lp, old, a, m, e), "the sign"),
    (lambda lp, old, a, m, e: -_masked_mean(torch.exp(lp - old).clamp(1 - e, 1 + e) * a[:, None], m),
     "clipped term alone"),
    (lambda lp, old, a, m, e: -_masked_mean(torch.maximum(torch.exp(lp - old) * a[:, None],
                                                          torch.exp(lp - old).clamp(1 - e, 1 + e) * a[:, None]), m),
     "max instead of min"),
    (lambda lp, old, a, m, e: -torch.minimum(torch.exp(lp - old) * a[:, None],
                                             torch.exp(lp - old).clamp(1 - e, 1 + e) * a[:, None]).mean(),
     "masked (generated) tokens only"),
    (lambda lp, old, a, m, e: -_masked_mean(torch.exp(lp - old) * a[:, None], m), "no clipping at all"),
    (lambda lp, old, a, m, e: ppo_solution(lp, old, a, m, e).detach(), "no gradient"),
    (lambda lp, old, a, m, e: ppo_solution(lp, old, a, m, e).reshape(1), "0-dimensional"),
])
def test_ppo_mistakes_fail_with_a_hint(wrong, hint):
    result = ch3.check_ppo_clip_loss(wrong)
    assert not result.passed
    assert hint in result.message


def test_ppo_stub():
    assert not ch3.check_ppo_clip_loss(None).passed
    assert "no answer yet" in ch3.check_ppo_clip_loss(lambda *args: None).message
