"""The appendix's exercise checks: model solutions and other spellings pass, each plausible mistake is named, junk gets a
message."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from rlbook.exercises import appendix as exa

SOLUTION = {"loss_type": "cispo", "epsilon_high": 4.0, "num_iterations": 4, "max_steps": 240, "warmup_steps": 40}


@pytest.mark.parametrize(
    "answer",
    [
        SOLUTION,
        {"loss_type": "CISPO", "epsilon_high": 4, "num_iterations": 4.0, "max_steps": 240.0, "warmup_steps": 40},
        dict(SOLUTION, temperature=1.0, num_generations=16, beta=0.0),
        dict(SOLUTION, epsilon_high=np.float64(4.0), max_steps=torch.tensor(240)),
    ],
)
def test_translation_solution_and_other_spellings_pass(answer):
    result = exa.check_translation(answer, "cispo")
    assert result.passed, result.message


@pytest.mark.parametrize(
    "answer, hint",
    [
        ({k: v for k, v in SOLUTION.items() if k != "warmup_steps"}, "optimiser steps"),
        (dict(SOLUTION, max_steps=60), "counts RL steps"),
        (dict(SOLUTION, warmup_steps=10), "counts RL steps"),
        (dict(SOLUTION, loss_type="grpo"), "not what cispo needs"),
        (dict(SOLUTION, epsilon_high=0.2), "not what cispo needs"),
        (dict(SOLUTION, epsilon_high="4.0"), "is text"),
        (dict(SOLUTION, cispo_cap=4.0), "not among the settings"),
        ({"loss_type": "cispo"}, "lacks 4"),
    ],
)
def test_translation_mistakes_are_named(answer, hint):
    result = exa.check_translation(answer, "cispo")
    assert not result.passed and hint in result.message


@pytest.mark.parametrize("mistake", exa.MISTAKES["trl-translation"])
def test_the_registered_translation_mistakes_are_named(mistake):
    result = exa.check_translation(mistake.wrong("cispo"), "cispo")
    assert not result.passed and mistake.says in result.message


def test_a_missing_setting_is_described_not_named():
    result = exa.check_translation({k: v for k, v in SOLUTION.items() if k != "num_iterations"}, "cispo")
    assert not result.passed and "num_iterations" not in result.message and "updates per batch" in result.message


@pytest.mark.parametrize(
    "answer, run, hint",
    [
        ([("loss_type", "cispo")], "cispo", "give a dict"),
        ("cispo", "cispo", "give a dict"),
        ({1: 2}, "cispo", "give a dict"),
        (SOLUTION, "nope", "not one of the book's runs"),
        (SOLUTION, None, "not one of the book's runs"),
        (SOLUTION, "faults", "no TRL translation"),
    ],
)
def test_translation_junk_gets_a_message(answer, run, hint):
    result = exa.check_translation(answer, run)
    assert not result.passed and hint in result.message
    assert "no answer yet" in exa.check_translation(None).message


# ---------------------------------------------------------------- A.2, on batches built by hand


def _batches() -> tuple[list[list[int]], list[float]]:
    """Three steps of six prompts with four answers each, in TRL's order (a prompt's four answers in a row).

    Built so that every mistake of the check gives other numbers than the
    right answer and than every other mistake: the all-right and all-wrong
    shares differ, and grouping by position finds some equal rows.
    """
    steps = [
        [[1, 1, 1, 1], [0, 1, 0, 1], [0, 0, 0, 0], [1, 0, 0, 0], [1, 1, 1, 1], [1, 1, 1, 1]],
        [[1, 0, 1, 0], [1, 1, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 1, 1, 0]],
        [[1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [0, 1, 0, 0], [1, 1, 1, 1], [1, 0, 1, 1]],
    ]
    rewards = [[r for group in step for r in group] for step in steps]
    logged = [sum(len(set(g)) == 1 for g in step) / len(step) for step in steps]
    return rewards, logged


REWARDS, LOGGED = _batches()


def check(fn):
    return exa.check_silent_groups(fn, REWARDS, LOGGED, 4)


def split(r, g):
    return exa.silent_groups(r, g)


@pytest.mark.parametrize(
    "right",
    [
        exa.silent_groups,
        lambda r, g: torch.tensor(split(r, g)),
        lambda r, g: list(split(r, g)),
        lambda r, g: np.array(split(r, g)),
        lambda r, g: ((r.view(-1, g).amin(1) == 1).float().mean(), (r.view(-1, g).amax(1) == 0).float().mean()),
        lambda r, g: tuple(float(np.mean([set(x) == {v} for x in r.view(-1, g).tolist()])) for v in (1.0, 0.0)),
    ],
)
def test_the_split_and_other_spellings_pass(right):
    result = check(right)
    said = " ".join(result.message.split())  # the message is folded to fit a solution box
    assert result.passed, result.message
    assert "right on all 3 steps" in said and "cannot tell the two apart" in said
    assert max(len(line) for line in result.message.splitlines()) <= exa.BOX


@pytest.mark.parametrize(
    "wrong, hint",
    [
        *((m.wrong, m.says) for m in exa.MISTAKES["silent-groups"]),
        (lambda r, g: [len(r) // g * x for x in split(r, g)], "counts of groups"),
        (lambda r, g: split(r.view(g, -1).reshape(-1), len(r) // g), "grouped the rewards by position"),
        (lambda r, g: split(r.view(g, -1).T.reshape(-1), g), "every 6th reward"),
        (lambda r, g: (float((r == 1).all()), float((r == 0).all())), "no group without a signal"),
        (lambda r, g: (split(r, g)[0], 1 - split(r, g)[0]), "not all right, including those with a signal"),
        (lambda r, g: (sum(split(r, g)), 1 - sum(split(r, g))), "(without a signal, with a signal)"),
        (lambda r, g: 1 - sum(split(r, g)), "share of groups with a signal"),
        (lambda r, g: split(r, g)[0], "the all-right share alone"),
        (lambda r, g: split(r, g)[1], "the all-wrong share alone"),
        (lambda r, g: 100 * sum(split(r, g)), "a percentage of the groups without a signal"),
        (lambda r, g: len(r) // g * sum(split(r, g)), "a count of the groups without a signal"),
        (lambda r, g: r.mean().item(), "the batch's mean reward"),
    ],
)
def test_each_mistake_is_named(wrong, hint):
    result = check(wrong)
    assert not result.passed and hint in result.message, result.message


def test_a_right_grouping_is_never_told_to_group_by_prompt():
    """Issue 48: every wrong fraction was told to group by prompt, even when the grouping was right."""
    for wrong in (
        lambda r, g: split(r, g)[::-1],
        lambda r, g: 1 - sum(split(r, g)),
        lambda r, g: split(r, g)[1],
        lambda r, g: 100 * sum(split(r, g)),
    ):
        assert "view(-1" not in check(wrong).message


def test_shares_that_match_no_known_mistake_are_held_against_trls_log():
    result = check(lambda r, g: (0.5, 0.25))
    assert not result.passed and "at step 1 your shares add up to 0.7500, but TRL logged 0.6667" in result.message
    even = check(lambda r, g: (sum(split(r, g)) / 2, sum(split(r, g)) / 2))
    assert not even.passed and "add up to TRL's 0.6667, but split it otherwise" in even.message


def test_a_function_right_on_some_steps_only_is_caught_at_the_first_wrong_step():
    def first_step_only(r, g):
        return split(r, g) if r.sum() == sum(REWARDS[0]) else (0.0, 1.0)

    result = check(first_step_only)
    assert not result.passed and "at step 2" in result.message


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (0.5, "must be a function"),
        (lambda r, g: 1 / 0, "raised ZeroDivisionError at step 1"),
        (lambda r, g: "0.1, 0.2", "return two numbers"),
        (lambda r, g: (0.1, float("nan")), "return two numbers"),
        (lambda r, g: (0.1, 0.2, 0.3), "yours has 3 numbers"),
    ],
)
def test_answers_that_are_not_a_pair_of_shares_get_a_message(wrong, hint):
    result = check(wrong)
    assert not result.passed and hint in result.message
    assert "no answer yet" in exa.check_silent_groups(None, REWARDS, LOGGED, 4).message
    assert "no answer yet" in exa.check_silent_groups(lambda r, g: None, REWARDS, LOGGED, 4).message


@pytest.mark.parametrize(
    "rewards, logged, group",
    [
        (None, None, 4),
        ([], [], 4),
        (REWARDS, LOGGED[:1], 4),
        (REWARDS, LOGGED, 5),
        (REWARDS, LOGGED, True),
        ([["a"] * 24], [0.1], 4),
        (REWARDS, ["x"] * 3, 4),
    ],
)
def test_inputs_that_are_not_the_appendixs_batches_are_named(rewards, logged, group):
    result = exa.check_silent_groups(exa.silent_groups, rewards, logged, group)
    assert not result.passed and "F.a2.rewards" in result.message


atoms = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 30),
    st.floats(allow_nan=True),
    st.text(max_size=6),
    st.just(torch.zeros(2)),
    st.lists(st.integers(0, 1), max_size=8),
)


@settings(max_examples=150, deadline=None)
@given(
    rewards=st.one_of(atoms, st.lists(atoms, max_size=3)),
    logged=st.one_of(atoms, st.lists(atoms, max_size=3)),
    group=atoms,
)
def test_junk_in_the_other_arguments_gets_a_message(rewards, logged, group):
    result = exa.check_silent_groups(exa.silent_groups, rewards, logged, group)
    assert result.message and "could not read" not in result.message


def test_the_references_pass_their_own_checks():
    assert exa.check_translation(exa.cispo_translation("cispo"), "cispo").passed
    assert check(exa.silent_groups).passed
