"""Chapter 10's exercise checks (DPO's loss, a preference's Bradley–Terry probability): the references pass, the
named mistakes fail with their words, and what a check adds about the runs is what the pairs hold."""

from __future__ import annotations

import math

import pytest

from rlbook.exercises import ch10

PAIRS = {
    "ref_chosen": [-1.0, -2.0, -0.5],
    "ref_rejected": [-1.5, -1.0, -3.0],
    "policy_chosen": [-0.8, -2.5, -0.4],
    "policy_rejected": [-3.0, -0.5, -4.0],
    "beta": 1.0,
}


def test_the_references_pass_without_the_runs():
    assert ch10.check_dpo_loss(ch10.dpo_loss).passed
    assert ch10.check_preference_probability(ch10.preference_probability).passed


@pytest.mark.parametrize(
    ("check", "name"),
    [(ch10.check_dpo_loss, "dpo-loss"), (ch10.check_preference_probability, "preference-probability")],
)
def test_each_named_mistake_is_refused_with_its_words(check, name):
    for mistake in ch10.MISTAKES[name]:
        result = check(mistake.wrong)
        assert not result.passed and mistake.says in result.message


def test_the_loss_check_counts_the_pairs_dpo_ranks_right():
    result = ch10.check_dpo_loss(ch10.dpo_loss, PAIRS, predicted=2)
    # margins after training: (0.2 + 1.5) > 0, (-0.5 - 0.5) < 0, (0.1 + 1.0) > 0
    assert result.passed and "ranks 2 of the 3 chosen answers above the rejected" in result.message
    assert f"{math.log(2):.3f} (log 2) before training" in result.message and "You predicted 2" in result.message


def test_the_probability_check_reads_dpo_s_implicit_rewards():
    result = ch10.check_preference_probability(ch10.preference_probability, PAIRS, predicted=0.6)
    margins = [1.7, -1.0, 1.1]
    mean = sum(1 / (1 + math.exp(-m)) for m in margins) / 3
    assert result.passed and f"mean probability of {mean:.3f}" in result.message
    assert "You predicted 0.6" in result.message


@pytest.mark.parametrize("junk", [None, 3, "x", lambda *a: "text", lambda *a: [1, 2]])
def test_junk_gets_a_message_not_a_traceback(junk):
    for check in (ch10.check_dpo_loss, ch10.check_preference_probability):
        result = check(junk)
        assert not result.passed and result.message
