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


def test_group_normalized_accepts_a_list_of_numpy_rows_without_a_warning():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = ch3.check_group_normalized(lambda r: [row.numpy() for row in group_normalized_solution(r)])
    assert result.passed, result.message


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


# --- try it: spellings, mistakes, junk ---------------------------------------------------------------------


@pytest.mark.parametrize("answer", [
    {(1, 1, 0, 0): [0.5, 0.5, -0.5, -0.5], (1, 1, 1, 1): [0, 0, 0, 0]},
    {"[1,1,0,0]": np.array([0.5, 0.5, -0.5, -0.5]), "[1,1,1,1]": torch.zeros(4)},
    {"1100": (0.5, 0.5, -0.5, -0.5), "1111": [0.0] * 4},
])
def test_try_it_in_other_spellings_passes(answer):
    assert ch3.check_try_it(answer).passed


@pytest.mark.parametrize("answer, hint", [
    ({"[1, 1, 0, 0]": [-0.5, -0.5, 0.5, 0.5], "[1, 1, 1, 1]": [0] * 4}, "signs are flipped"),
    ({"[1, 1, 0, 0]": [1, 1, -1, -1], "[1, 1, 1, 1]": [0] * 4}, "divided by the standard deviation"),
    ({"[1, 1, 0, 0]": [0.5, 0.5, -0.5, -0.5], "[1, 1, 1, 1]": [1, 1, 1, 1]}, "mean reward (1)"),
    ({"[1, 1, 0, 0]": [0.5, -0.5], "[1, 1, 1, 1]": [0] * 4}, "four in all"),
])
def test_try_it_mistakes_are_named(answer, hint):
    result = ch3.check_try_it(answer)
    assert not result.passed and hint in result.message


@pytest.mark.parametrize("answer, hint", [
    ({"[1, 1, 0, 0]": 0.5, "[1, 1, 1, 1]": 0.0}, "list of four numbers"),
    ({"[1, 1, 0, 0]": ["0.5", "0.5", "-0.5", "-0.5"], "[1, 1, 1, 1]": [0] * 4}, "list of four numbers"),
    ([0.5, 0.5, -0.5, -0.5], "must be a dict"),
    ({}, "missing the group"),
    ({None: None, 3: "x"}, "missing the group"),
])
def test_try_it_junk_gets_a_message(answer, hint):
    result = ch3.check_try_it(answer)
    assert not result.passed and hint in result.message


# --- exercise 5: spellings and junk ------------------------------------------------------------------------


def _split_credit_with_token_steps(completion, outcome_adv, step_adv):
    from rlbook.analysis.credit import token_steps
    steps = token_steps(completion, len(step_adv))
    return {"outcome": np.full(len(completion), outcome_adv), "process": [step_adv[k] for k in steps]}


def _split_credit_by_fields(completion, outcome_adv, step_adv):
    process, step = [], 0
    for ch in completion:
        process.append(float(step_adv[min(step, len(step_adv) - 1)]))
        if ch == ",":
            step += 1
    return {"process": tuple(process), "outcome": tuple([float(outcome_adv)] * len(completion))}


@pytest.mark.parametrize("right", [_split_credit_with_token_steps, _split_credit_by_fields])
def test_split_credit_in_other_spellings_passes(right, group):
    assert ch3.check_split_credit(right, group).passed


@pytest.mark.parametrize("wrong, hint", [
    (lambda c, o, s: {"outcome": o, "process": s}, "list of numbers"),
    (lambda c, o, s: {"outcome": [str(o)] * len(c), "process": [0.0] * len(c)}, "list of numbers"),
    (lambda c, o, s: [o] * len(c), "keys 'outcome' and 'process'"),
    (lambda c, o, s: {"outcome": [o] * len(c)}, "keys 'outcome' and 'process'"),
])
def test_split_credit_of_the_wrong_shape_gets_a_message(wrong, hint, group):
    result = ch3.check_split_credit(wrong, group)
    assert not result.passed and hint in result.message


@pytest.mark.parametrize("group_arg", ["pgroup", 3, [1, 2]])
def test_split_credit_with_a_group_that_is_not_one(group_arg):
    result = ch3.check_split_credit(split_credit_solution, group_arg)
    assert not result.passed and "ProcessGroup" in result.message


# --- exercise 14: spellings and a fallback message that shows a difference ------------------------------------


@pytest.mark.parametrize("right", [
    lambda r: (r - r.mean(1, keepdim=True)) / (r.std(1, unbiased=False, keepdim=True) + 1e-6),
    lambda r: (r.numpy() - r.numpy().mean(1, keepdims=True)) / (r.numpy().std(1, keepdims=True) + 1e-6),
    lambda r: ((r - r.mean(-1, keepdim=True)) / (r.var(-1, keepdim=True, correction=0).sqrt() + 1e-6)).tolist(),
])
def test_group_normalized_in_other_spellings_passes(right):
    assert ch3.check_group_normalized(right).passed


def test_group_normalized_fallback_names_a_group_that_differs():
    result = ch3.check_group_normalized(lambda r: (r - r.mean(-1, keepdim=True)) / (r.std(-1, keepdim=True,
                                                                                       correction=0) + 1e-3))
    assert not result.passed and "group 0 " not in result.message
    expected, got = result.message.split("expected ")[1].split(", got ")
    assert expected != got


@pytest.mark.parametrize("junk, hint", [
    (lambda r: "advantages", "tensor of numbers"), (lambda r: [["a"]], "tensor of numbers"),
    ("my_group_normalized", "must be a function"),
])
def test_group_normalized_junk_gets_a_message(junk, hint):
    result = ch3.check_group_normalized(junk)
    assert not result.passed and hint in result.message


# --- PPO: spellings, gradient mistakes, junk ---------------------------------------------------------------


def _ppo_with_where(logp, old_logp, adv, mask, eps):
    ratio = torch.exp(logp - old_logp)
    a = adv[:, None]
    objective = torch.where(mask, torch.minimum(ratio * a, ratio.clamp(1 - eps, 1 + eps) * a), 0.0)
    return -objective.sum() / mask.sum()


def _ppo_clamping_the_product(logp, old_logp, adv, mask, eps):
    ratio = torch.exp(logp - old_logp)
    a = adv[:, None]
    low, high = torch.minimum((1 - eps) * a, (1 + eps) * a), torch.maximum((1 - eps) * a, (1 + eps) * a)
    return -_masked_mean(torch.minimum(ratio * a, torch.clamp(ratio * a, low, high)), mask)


@pytest.mark.parametrize("right", [_ppo_with_where, _ppo_clamping_the_product])
def test_ppo_in_other_spellings_passes(right):
    assert ch3.check_ppo_clip_loss(right).passed


def _ppo_detached_clip(logp, old_logp, adv, mask, eps):
    ratio = torch.exp(logp - old_logp)
    a = adv[:, None]
    return -_masked_mean(torch.minimum(ratio * a, ratio.detach().clamp(1 - eps, 1 + eps) * a), mask)


def _ppo_unclipped_gradient(logp, old_logp, adv, mask, eps):
    ratio = torch.exp(logp - old_logp)
    a = adv[:, None]
    value = torch.minimum(ratio * a, ratio.clamp(1 - eps, 1 + eps) * a)
    return -_masked_mean(ratio * a + (value - ratio * a).detach(), mask)


def _ppo_fully_detached(logp, old_logp, adv, mask, eps):
    return ppo_solution(logp.detach(), old_logp, adv, mask, eps) + 0 * logp.sum()


@pytest.mark.parametrize("wrong, hint", [
    (_ppo_detached_clip, "do not detach it before clamping"),
    (_ppo_unclipped_gradient, "unclipped gradient on every token"),
    (_ppo_fully_detached, "no gradient reaches logp"),
])
def test_ppo_gradient_mistakes_are_told_apart(wrong, hint):
    result = ch3.check_ppo_clip_loss(wrong)
    assert not result.passed and "value is right but the gradient is not" in result.message and hint in result.message


@pytest.mark.parametrize("junk, hint", [
    (lambda *a: 0.5, "0-dimensional tensor"), (lambda *a: "loss", "0-dimensional tensor"),
    (42, "must be a function"),
])
def test_ppo_junk_gets_a_message(junk, hint):
    result = ch3.check_ppo_clip_loss(junk)
    assert not result.passed and hint in result.message


# --- the "why" of Try it, and exercise 5's reading ----------------------------------------------------------


def test_try_it_why_is_a_pick_among_stated_reasons():
    assert ch3.check_try_it_why("c").passed and ch3.check_try_it_why("(C)").passed
    for wrong in ("a", "b", "d"):
        result = ch3.check_try_it_why(wrong)
        assert not result.passed and result.message.startswith(f"({wrong})")
    listing = ch3.check_try_it_why(None)
    assert not listing.passed and all(f"({k})" in listing.message for k in ch3.TRY_IT_WHY)
    for junk in ("e", 3, ["c"], b"c"):
        assert "must be one of the letters" in ch3.check_try_it_why(junk).message


def test_credit_reading_on_the_hand_made_group(group):
    # row 1 is "7,11#": outcome advantage -0.25; step advantages +0.25 and -0.5
    assert ch3.check_credit_reading([0, 1, 2, 3, 4], [2, 3, 4], group, 1).passed
    assert ch3.check_credit_reading(range(5), (4, 3, 2), group, 1).passed
    assert ch3.check_credit_reading(np.arange(5), {2.0, 3.0, 4.0}, group, 1).passed


@pytest.mark.parametrize("pushed_down, blamed, hint", [
    ([2, 3, 4], [2, 3, 4], "every generated character shares it"),
    ([0, 1, 2, 3, 4], [2, 3], "belongs to the step it closes"),
    ([0, 1, 2, 3, 4], [0, 1, 2, 3, 4], "takes its step's advantage"),
    ("7,11#", [2, 3, 4], "list of character positions"),
    ([0.5], [2, 3, 4], "list of character positions"),
])
def test_credit_reading_mistakes_are_named(pushed_down, blamed, hint, group):
    result = ch3.check_credit_reading(pushed_down, blamed, group, 1)
    assert not result.passed and hint in result.message


@pytest.mark.parametrize("group_arg, row", [("pgroup", 1), (None, 0), (3, 0)])
def test_credit_reading_needs_the_chapters_group(group_arg, row, group):
    result = ch3.check_credit_reading([0], [0], group_arg, row)
    assert not result.passed and "(pgroup, prow)" in result.message
    assert "(pgroup, prow)" in ch3.check_credit_reading([0], [0], group, 9).message
    assert "no answer yet" in ch3.check_credit_reading(None, None, group, 1).message
