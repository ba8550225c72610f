"""Chapter 7's exercise checks (rlbook.exercises.ch7): the outcome-only reward and the split of a gain, right in
several spellings, and the mistakes a student makes, each named."""

from __future__ import annotations

import pytest

from rlbook.analysis.working import Point, gain_split
from rlbook.core import rewards
from rlbook.exercises import ch7
from rlbook.exercises.registry import all_exercises

SHOWN = {
    "prompt": "#47+38=",
    "step": 60,
    "before": [{"text": "85#", "count": 9, "status": "accepted"}, {"text": "75#", "count": 7, "status": "incorrect"}],
    "after": [
        {"text": "7+8=15,4+3+1=8;85#", "count": 15, "status": "accepted"},
        {"text": "7+8=15,4+3+1=8;86#", "count": 1, "status": "incorrect"},
    ],
}


def _verifier(prompt, completion):
    return rewards.get_verifier("exact")(prompt, completion).reward


def test_the_reference_reward_passes_and_pays_the_shown_answers():
    result = ch7.check_outcome_reward(ch7.reward, SHOWN)
    assert result.passed
    assert "it pays 9 of 16 before RL and 15 of 16 after RL" in result.message


@pytest.mark.parametrize("right", [_verifier, lambda p, c: _verifier(p, c) == 1.0, lambda p, c: int(_verifier(p, c))])
def test_right_rewards_in_every_spelling_pass(right):
    assert ch7.check_outcome_reward(right).passed


def _first_number(prompt, completion):
    a, b = (int(x) for x in prompt.strip("#=").split("+"))
    head = completion.split("#")[0].split(";")[0].split("+")[0].split(",")[0]
    return float(completion.endswith("#") and head.isdigit() and int(head) == a + b)


@pytest.mark.parametrize(
    ("wrong", "says"),
    [
        *((m.wrong, m.says) for m in ch7.MISTAKES["outcome-reward"]),
        (_first_number, "not the first number"),
        (lambda p, c: ch7.reward(p, c.split("#")[0] + "#" if "#" in c else c), "text after the end mark"),
        (lambda p, c: ch7.reward(p, c.lstrip("0")), "leading zero"),
        (lambda p, c: None, "no answer yet"),
        (lambda p, c: "1.0", "return a number"),
        (lambda p, c: float("nan"), "return a number"),
        (lambda p, c: 1 / 0, "ZeroDivisionError"),
        (None, "no answer yet"),
        ("85", "must be a function"),
    ],
)
def test_reward_mistakes_are_named(wrong, says):
    result = ch7.check_outcome_reward(wrong)
    assert not result.passed and says in result.message


REAL = [({"share": 0.5, "worked": 0.7, "direct": 0.4}, {"share": 0.9, "worked": 0.9, "direct": 0.3})]


def test_the_reference_split_passes_and_applies_itself_to_the_runs_beside_the_tables():
    result = ch7.check_gain_split(ch7.split_other_way, REAL, [4])
    assert result.passed
    # the other way: switch +0.4 x (0.9 - 0.3) = +0.24; execution 0.5 x 0.2 + 0.5 x (-0.1) = +0.05
    # the table's way: switch +0.4 x (0.7 - 0.4) = +0.12; execution 0.9 x 0.2 + 0.1 x (-0.1) = +0.17
    assert "seed 4: switch +0.24, execution +0.05 (the table's: +0.12 and +0.17)" in result.message
    assert "Taken your way, the switch is the larger part on every seed" in result.message
    assert "taken the table's way, execution is the larger part on every seed" in result.message


def test_the_tables_way_is_the_chapters_gain_split():
    for before, after in ch7._split_cases(3):
        points = [
            Point(0, 0.0, p["share"], 0.0, p["worked"], p["direct"], 0.0, 0.0, p["share"], 1) for p in (before, after)
        ]
        want = gain_split(*points)
        switch, execution = ch7._chapters_way(before, after)
        assert switch == pytest.approx(want.switch) and execution == pytest.approx(want.execution)


def test_the_seeds_are_named_one_by_one_where_the_larger_part_differs():
    flat = {"share": 0.5, "worked": 0.6, "direct": 0.6}
    real = [*REAL, (flat, {"share": 0.5, "worked": 0.9, "direct": 0.9})]  # no switch at all: execution is larger
    message = ch7.check_gain_split(ch7.split_other_way, real, [0, 1]).message
    assert "the larger part is the switch on seed 0, execution on seed 1" in message


@pytest.mark.parametrize(
    ("predicted", "says"),
    [
        ("switch", "You predicted the switch; taken your way, it is the larger part on 1 of the 1 seeds"),
        (" Execution ", "You predicted execution; taken your way, it is the larger part on 0 of the 1 seeds"),
    ],
)
def test_the_prediction_is_compared_with_the_runs(predicted, says):
    result = ch7.check_gain_split(ch7.split_other_way, REAL, [0], predicted=predicted)
    assert result.passed and says in result.message


@pytest.mark.parametrize("predicted", ["both", 3, ["switch"]])
def test_a_prediction_that_names_neither_part_is_refused(predicted):
    result = ch7.check_gain_split(ch7.split_other_way, REAL, [0], predicted=predicted)
    assert not result.passed and "predict 'switch' or 'execution'" in result.message


def test_no_prediction_still_passes_and_says_nothing_of_one():
    result = ch7.check_gain_split(ch7.split_other_way, REAL, [0])
    assert result.passed and "predicted" not in result.message


def _by_difference(before, after):
    execution = before["share"] * (after["worked"] - before["worked"]) + (1 - before["share"]) * (
        after["direct"] - before["direct"]
    )
    total = (
        after["share"] * after["worked"]
        + (1 - after["share"]) * after["direct"]
        - before["share"] * before["worked"]
        - (1 - before["share"]) * before["direct"]
    )
    return [total - execution, execution]


@pytest.mark.parametrize("right", [_by_difference, lambda b, a: list(ch7.split_other_way(b, a))])
def test_right_splits_in_every_spelling_pass(right):
    assert ch7.check_gain_split(right).passed


def _both_after(before, after):
    switch = (after["share"] - before["share"]) * (after["worked"] - after["direct"])
    execution = after["share"] * (after["worked"] - before["worked"]) + (1 - after["share"]) * (
        after["direct"] - before["direct"]
    )
    return switch, execution


def _both_before(before, after):
    switch = (after["share"] - before["share"]) * (before["worked"] - before["direct"])
    execution = before["share"] * (after["worked"] - before["worked"]) + (1 - before["share"]) * (
        after["direct"] - before["direct"]
    )
    return switch, execution


@pytest.mark.parametrize(
    ("wrong", "says"),
    [
        *((m.wrong, m.says) for m in ch7.MISTAKES["gain-split"]),
        (lambda b, a: ch7._chapters_way(b, a)[::-1], "the chapter's split with its parts swapped"),
        (_both_after, "is counted twice"),
        (_both_before, "is left out"),
        (lambda b, a: (ch7.split_other_way(b, a)[0], 0.0), "must add up to the change"),
        (lambda b, a: (ch7.split_other_way(b, a)[0] + 0.01, ch7.split_other_way(b, a)[1] - 0.01), "another way"),
        (lambda b, a: 0.1, "return two numbers"),
        (lambda b, a: (0.1, float("inf")), "return two numbers"),
        (lambda b, a: b["missing"], "KeyError"),
        (None, "no answer yet"),
        ([0.1, 0.2], "must be a function"),
    ],
)
def test_split_mistakes_are_named(wrong, says):
    result = ch7.check_gain_split(wrong, REAL, [0])
    assert not result.passed and says in result.message


def test_both_exercises_are_registered_for_the_chapter():
    found = {name: e for name, e in all_exercises().items() if e.chapter == "working"}
    assert set(found) == {"outcome-reward", "gain-split"}
    assert found["outcome-reward"].reference is ch7.reward and found["gain-split"].reference is ch7.split_other_way
