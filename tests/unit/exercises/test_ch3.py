"""Chapter 3's exercise checks: every reference solution passes, plausible mistakes fail with a useful message."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rlbook.analysis.credit import ProcessGroup
from rlbook.book.facts import freeze
from rlbook.exercises import ch3
from rlbook.exercises.registry import all_exercises

split_credit_solution = all_exercises()["split-credit"].reference
"""Exercise 3.1's reference solution, the one the registry holds and the solution box shows."""


@pytest.fixture
def group() -> ProcessGroup:
    """A hand-made group for ``U:3+4+5?|A:`` (s1 = 7, s2 = 12)."""
    completions = ["7,12#", "7,11#", "6,11#", "7,12"]
    rewards = np.array([1.0, 0.0, 0.0, 0.0])
    valid = np.array([[1.0, 1.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    return ProcessGroup(
        "U:3+4+5?|A:", completions, rewards, rewards - rewards.mean(), valid, valid - valid.mean(axis=0)
    )


@pytest.fixture
def as_facts(group):
    """The same group as the chapter's facts hold it (F.process): a read-only record of tuples."""
    return freeze(group.as_data())


# --- the Try it on a real run: the share of groups with a signal -----------------------------------------------

FIRST = [[1, 1, 0, 0], [1, 1, 1, 1], [0, 0, 0, 0], [1, 0, 0, 0]]
LAST = [[1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 0], [0, 0, 0, 0]]


def test_signal_reference_on_batches_worked_by_hand():
    assert ch3.measure_signal(FIRST, LAST) == {"first": (0.4375, 0.5), "last": (0.6875, 0.25)}


def test_signal_reference_passes_and_reports_the_run():
    result = ch3.check_signal(ch3.measure_signal(FIRST, LAST), FIRST, LAST)
    assert result.passed
    assert "mean reward 0.44" in result.message and "50% of its groups" in result.message
    assert "fewer groups carry a signal" in result.message


def test_signal_in_other_spellings_passes():
    answer = {"first": [0.4375, 0.5], "last": (np.float32(0.6875), torch.tensor(0.25))}
    assert ch3.check_signal(answer, FIRST, LAST).passed
    as_arrays = {"first": torch.stack([torch.tensor(0.4375), torch.tensor(0.5)]), "last": np.array([0.6875, 0.25])}
    assert ch3.check_signal(as_arrays, FIRST, LAST).passed


@pytest.mark.parametrize(
    "wrong, hint",
    [
        ({"first": (0.4375, 0.5), "last": (0.6875, 0.75)}, "last batch: that is the share of groups with no signal"),
        ({"first": (0.4375, 2), "last": (0.6875, 0.25)}, "first batch: that is a count of groups"),
        ({"first": (0.4375, 0.75), "last": (0.6875, 0.25)}, "all-wrong groups carry no signal either"),
        ({"first": (1.0, 0.5), "last": (0.6875, 0.25)}, "mean of all its rewards"),
        ({"first": 0.4375, "last": (0.6875, 0.25)}, "two numbers"),
        ({"first": (0.5, 0.4375), "last": (0.6875, 0.25)}, "first batch: the two numbers are the other way round"),
        ({"first": (43.75, 50.0), "last": (0.6875, 0.25)}, "fractions between 0 and 1, not as percentages"),
        ({"first": (0.4375, 0.5)}, "'last' is still empty"),
        ([0.4375, 0.5], "must be a dict"),
        ({"first": None, "last": None}, "no answer yet"),
    ],
)
def test_signal_mistakes_are_named(wrong, hint):
    result = ch3.check_signal(wrong, FIRST, LAST)
    assert not result.passed and hint in result.message


@pytest.mark.parametrize("mistake", ch3.MISTAKES["try-it-signal"])
def test_the_registered_signal_mistakes_are_named(mistake):
    result = ch3.check_signal(mistake.wrong(FIRST, LAST), FIRST, LAST)
    assert not result.passed and mistake.says in result.message


def test_signal_needs_real_batches():
    assert "F.rewards_first" in ch3.check_signal(ch3.measure_signal(FIRST, LAST), "batch", LAST).message


# --- the Try it on a real run: the size of the advantages --------------------------------------------------
# FIRST: |A| is 0.5 on each answer of [1, 1, 0, 0], 0.75 and 0.25 on [1, 0, 0, 0]: 3.5 over 16 answers, 8 mixed.
# LAST: 0.25 three times and 0.75 once on [1, 1, 1, 0]: 1.5 over 16 answers, 4 mixed.
SIZE = {"first": (3.5 / 16, 3.5 / 8), "last": (1.5 / 16, 1.5 / 4)}


def test_push_size_reference_on_batches_worked_by_hand():
    got = ch3.push_size(FIRST, LAST)
    assert all(np.allclose(got[k], SIZE[k]) for k in SIZE)


def test_push_size_reference_passes_and_reports_the_run():
    result = ch3.check_push_size(ch3.push_size(FIRST, LAST), FIRST, LAST)
    assert result.passed
    assert "mean |A| 0.219 over all answers, 0.438 over the groups with a signal" in result.message
    assert "push per answer fell by 57%" in result.message and "signal it fell by 14%" in result.message


def test_push_size_in_other_spellings_passes():
    answer = {"first": [np.float32(0.21875), torch.tensor(0.4375)], "last": np.array([0.09375, 0.375])}
    assert ch3.check_push_size(answer, torch.tensor(FIRST), np.array(LAST)).passed


@pytest.mark.parametrize(
    "first, hint",
    [
        ((0.0, 0.0), "their plain mean is 0: average their absolute values"),
        # divided by the std: [1, 1, 0, 0] has std 0.5 (sample: 1/sqrt(3)), [1, 0, 0, 0] sqrt(3)/4 (sample: 0.5)
        (((4 + 2 * 3**0.5) / 16, (4 + 2 * 3**0.5) / 8), "you divided by the group's standard deviation"),
        (((2 * 3**0.5 + 3) / 16, (2 * 3**0.5 + 3) / 8), "(sample) standard deviation"),
        ((3.5 / 16 * 4 / 3, 3.5 / 8 * 4 / 3), "leave-one-out (RLOO)"),
        ((1.75 / 16, 1.75 / 8), "you squared the advantages"),
        ((float("nan"), float("nan")), "0/0 on a group whose rewards are all equal"),
        ((3.5 / 16, 3.5 / 16), "the answers of the groups with a signal only"),
        ((3.5 / 8, 3.5 / 16), "the other way round"),
        ((1.5 / 16, 1.5 / 4), "the other batch's numbers"),
        ((0.4375, 0.5), "(mean reward, share of groups with a signal), the question above"),
        ((3.5 / 16, 0.5), "the second number differs"),
        ((0.3, 3.5 / 8), "the first number differs"),
        (0.2, "give two numbers"),
        (None, "'first' is still empty"),
    ],
)
def test_push_size_mistakes_are_named(first, hint):
    result = ch3.check_push_size({"first": first, "last": SIZE["last"]}, FIRST, LAST)
    assert not result.passed and result.message.startswith(("first batch:", "'first'")) and hint in result.message


def test_push_size_baseline_of_the_whole_batch_is_named():
    batch = torch.tensor(FIRST, dtype=torch.float32)
    wrong = (float((batch - batch.mean()).abs().mean()), float((batch - batch.mean())[[0, 3]].abs().mean()))
    result = ch3.check_push_size({"first": wrong, "last": SIZE["last"]}, FIRST, LAST)
    assert not result.passed and "subtracted the whole batch's mean reward" in result.message


@pytest.mark.parametrize("mistake", ch3.MISTAKES["try-it-advantages"])
def test_the_registered_push_size_mistakes_are_named(mistake):
    result = ch3.check_push_size(mistake.wrong(FIRST, LAST), FIRST, LAST)
    assert not result.passed and mistake.says in result.message


@pytest.mark.parametrize(
    "answer, hint",
    [({"first": None, "last": None}, "no answer yet"), ([0.2, 0.4], "must be a dict"), ("size", "must be a dict")],
)
def test_push_size_unanswered_or_not_a_dict(answer, hint):
    assert hint in ch3.check_push_size(answer, FIRST, LAST).message


def test_push_size_needs_real_batches():
    assert "F.rewards_first" in ch3.check_push_size(SIZE, "batch", LAST).message
    assert "F.rewards_first" in ch3.check_push_size(SIZE, FIRST).message


# --- Exercise 3.1: credit in a longer trajectory -------------------------------------------------------------


def test_split_credit_solution_passes(group, as_facts):
    assert ch3.check_split_credit(split_credit_solution, group).passed
    assert ch3.check_split_credit(split_credit_solution, as_facts).passed
    assert ch3.check_split_credit(split_credit_solution).passed


def test_split_credit_stub_is_not_answered(group):
    assert "no answer yet" in ch3.check_split_credit(None).message
    assert "no answer yet" in ch3.check_split_credit(lambda c, o, s: None, group).message


def test_split_credit_comma_in_the_next_step_fails(group):
    comma_opens_next = next(m.wrong for m in ch3.MISTAKES["split-credit"] if "closes" in m.says)
    result = ch3.check_split_credit(comma_opens_next, group)
    assert not result.passed
    assert "process credit differs at character(s) [1]" in result.message
    assert "belongs to the step it closes" in result.message


@pytest.mark.parametrize(
    "wrong, hint",
    [
        *((m.wrong, m.says) for m in ch3.MISTAKES["split-credit"]),
        (lambda c, o, s: 1 / 0, "ZeroDivisionError"),
        (lambda c, o, s: {"outcome": o, "process": s}, "list of numbers"),
        (lambda c, o, s: [o] * len(c), "keys 'outcome' and 'process'"),
    ],
)
def test_split_credit_mistakes_are_named(wrong, hint, group):
    result = ch3.check_split_credit(wrong, group)
    assert not result.passed and hint in result.message


@pytest.mark.parametrize("group_arg", ["pgroup", 3, [1, 2]])
def test_split_credit_with_a_group_that_is_not_one(group_arg):
    result = ch3.check_split_credit(split_credit_solution, group_arg)
    assert not result.passed and "F.process" in result.message


def test_credit_reading_on_the_hand_made_group(group, as_facts):
    # row 1 is "7,11#": outcome advantage -0.25; step advantages +0.25 and -0.5
    assert ch3.check_credit_reading({"pushed_down": [0, 1, 2, 3, 4], "blamed": [2, 3, 4]}, group, 1).passed
    assert ch3.check_credit_reading({"pushed_down": range(5), "blamed": (4, 3, 2)}, as_facts, 1).passed
    assert ch3.check_credit_reading({"pushed_down": np.arange(5), "blamed": {2.0, 3.0, 4.0}}, group, 1).passed
    assert ch3.check_credit_reading(ch3.credit_reading(as_facts, 1), as_facts, 1).passed


@pytest.mark.parametrize(
    "pushed_down, blamed, hint",
    [
        ([2, 3, 4], [2, 3, 4], "every generated character shares it"),
        ([0, 1, 2, 3, 4], [2, 3], "belongs to the step it closes"),
        ([0, 1, 2, 3, 4], [0, 1, 2, 3, 4], "takes its step's advantage"),
        ("7,11#", [2, 3, 4], "list of character positions"),
        ([0.5], [2, 3, 4], "list of character positions"),
    ],
)
def test_credit_reading_mistakes_are_named(pushed_down, blamed, hint, group):
    result = ch3.check_credit_reading({"pushed_down": pushed_down, "blamed": blamed}, group, 1)
    assert not result.passed and hint in result.message


@pytest.mark.parametrize(
    "pushed_down, blamed, hint",
    [
        ([1, 2, 3, 4, 5], [3, 4, 5], "counted from 1; count from 0"),
        ([0, 1, 2, 3, 4], [3, 4, 5], "counted from 1; count from 0"),
        ([11, 12, 13, 14, 15], [13, 14, 15], "count the prompt's 11 characters too"),
        ([12, 13, 14, 15, 16], [2, 3, 4], "count the prompt and start from 1"),
    ],
)
def test_credit_reading_says_positions_run_from_0(pushed_down, blamed, hint, group):
    result = ch3.check_credit_reading({"pushed_down": pushed_down, "blamed": blamed}, group, 1)
    assert not result.passed and hint in result.message
    assert "advantage of" not in result.message  # not the message about the advantage being one number


@pytest.mark.parametrize("mistake", ch3.MISTAKES["credit-reading"])
def test_the_registered_reading_mistakes_are_named(mistake, as_facts):
    result = ch3.check_credit_reading(mistake.wrong(as_facts, 1), as_facts, 1)
    assert not result.passed and mistake.says in result.message


@pytest.mark.parametrize("group_arg, row", [("pgroup", 1), (None, 0), (3, 0)])
def test_credit_reading_needs_the_chapters_group(group_arg, row, group):
    answer = {"pushed_down": [0], "blamed": [0]}
    assert "F.process" in ch3.check_credit_reading(answer, group_arg, row).message
    assert "F.process" in ch3.check_credit_reading(answer, group, 9).message
    assert "no answer yet" in ch3.check_credit_reading(None, group, 1).message
    assert "no answer yet" in ch3.check_credit_reading({"pushed_down": None, "blamed": None}, group, 1).message


# --- Exercise 3.2: where normalisation moves a batch's push ---------------------------------------------------

BATCH = [[1, 0, 0, 0], [1, 1, 1, 0], [1, 1, 0, 0], [1, 1, 1, 1], [0, 0, 0, 0], [0, 1, 0, 0]]


def test_push_shares_worked_by_hand():
    # centred push per group: 1.5, 1.5, 2, 0, 0, 1.5; the groups with one answer differing are 0, 1 and 5
    # normalised: divide by std sqrt(3)/4 = 0.433 for those, by 0.5 for group 2
    shares = ch3.push_shares(BATCH)
    assert shares["centred"] == pytest.approx(4.5 / 6.5)
    settled, even = 3 * 1.5 / (3**0.5 / 4), 2 / 0.5
    assert shares["normalised"] == pytest.approx(settled / (settled + even), rel=1e-4)


def test_push_shares_reference_passes_and_names_the_effect():
    result = ch3.check_push_shares(ch3.push_shares(BATCH), BATCH)
    assert result.passed and "times as much" in result.message


@pytest.mark.parametrize("mistake", ch3.MISTAKES["push-shares"])
def test_push_shares_mistakes_are_named(mistake):
    result = ch3.check_push_shares(mistake.wrong(BATCH), BATCH)
    assert not result.passed and mistake.says in result.message


@pytest.mark.parametrize(
    "answer, hint",
    [
        ({"centred": "0.7", "normalised": 0.8}, "must be a number"),
        ({"centred": 70, "normalised": 80}, "between 0 and 1"),
        ({"centred": 0.1, "normalised": 0.2}, "sum of its answers' |advantages|"),
        ([0.7, 0.8], "must be a dict"),
        ({"centred": None, "normalised": None}, "no answer yet"),
    ],
)
def test_push_shares_junk_and_wrong_values(answer, hint):
    result = ch3.check_push_shares(answer, BATCH)
    assert not result.passed and hint in result.message


def test_push_shares_needs_the_batch():
    assert "F.rewards_first" in ch3.check_push_shares({"centred": 0.5, "normalised": 0.5}, None).message
