"""Chapter 9's exercise checks (GSPO's ratio, groups with no signal, DAPO's length penalty): the references pass,
the named mistakes fail with their words, and what a check adds about the runs is what the runs hold."""

from __future__ import annotations

import pytest
import torch

from rlbook.core import losses
from rlbook.exercises import ch9

BATCH = {
    "logp": [[-0.1, -0.2, 0.0], [-0.3, -0.1, -0.2]],
    "old_logp": [[-0.2, -0.3, 0.0], [-0.3, -0.1, -0.2]],
    "mask": [[True, True, False], [True, True, True]],
    "eps": [3e-4, 4e-4],
}


def test_the_references_pass_without_the_runs():
    assert ch9.check_sequence_ratio(ch9.sequence_ratio).passed
    assert ch9.check_silent_groups(ch9.silent_groups).passed
    assert ch9.check_length_penalty(ch9.length_penalty).passed


@pytest.mark.parametrize(
    ("check", "name"),
    [
        (ch9.check_sequence_ratio, "sequence-ratio"),
        (ch9.check_silent_groups, "silent-groups-refill"),
        (ch9.check_length_penalty, "length-penalty"),
    ],
)
def test_each_named_mistake_is_refused_with_its_words(check, name):
    for mistake in ch9.MISTAKES[name]:
        result = check(mistake.wrong)
        assert not result.passed and mistake.says in result.message


def test_the_ratio_check_counts_the_answers_outside_the_range():
    result = ch9.check_sequence_ratio(ch9.sequence_ratio, BATCH, predicted=0.5)
    ratio = losses.sequence_ratio(*(torch.tensor(BATCH[k]) for k in ("logp", "old_logp", "mask")))
    assert ratio.flatten().tolist() == pytest.approx([torch.exp(torch.tensor(0.1)).item(), 1.0])
    assert result.passed and "1 of these 2 answers (50%) lie outside" in result.message
    assert "You predicted 50%" in result.message


def test_the_group_check_counts_main_s_silent_groups():
    batch = {"rewards": [1, 1, 0, 0, 0, 0, 1, 0], "group_size": 2}
    result = ch9.check_silent_groups(ch9.silent_groups, batch, predicted=3)
    assert result.passed
    assert "3 of its 4 groups are silent (1 all right, 2 all wrong)" in result.message
    assert "sample 6 more answers" in result.message and "You predicted 3" in result.message


def test_the_penalty_check_prices_the_worked_lengths_that_fit():
    lengths = {"budget": 18, "cache": 4, "worked": [15, 17, 18, 20]}
    result = ch9.check_length_penalty(ch9.length_penalty, lengths, predicted=0.25)
    assert result.passed
    assert "0.75 at 15 characters, 0.25 at 17 characters and 0.00 at 18 characters" in result.message
    assert "20 characters" not in result.message


def test_flags_that_are_arrays_are_asked_for_one_true_or_false_per_group():
    import numpy as np

    for flags in ([np.array([1.0, np.nan])], torch.zeros(2, 3)):
        result = ch9.check_silent_groups(lambda rewards, size, flags=flags: flags)
        assert not result.passed and result.message.startswith("return one True or False per group")


@pytest.mark.parametrize("junk", [None, 3, "x", lambda *a: "text", lambda *a: [1, 2, 3]])
def test_junk_gets_a_message_not_a_traceback(junk):
    for check in (ch9.check_sequence_ratio, ch9.check_silent_groups, ch9.check_length_penalty):
        result = check(junk)
        assert not result.passed and result.message
