"""Chapter 7's exercise checks (rlbook.exercises.ch7): the outcome-only reward and the split of a gain, right in
several spellings, and the mistakes a student makes, each named."""

from __future__ import annotations

import pytest

from rlbook.core import rewards
from rlbook.core.world import WorkedTask
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


def _checks_the_working(prompt, completion):
    if (
        ";" in completion
        and completion.split(";")[0] != WorkedTask(tuple(int(x) for x in prompt.strip("#=").split("+"))).working
    ):
        return 0.0
    return ch7.reward(prompt, completion)


def _first_number(prompt, completion):
    a, b = (int(x) for x in prompt.strip("#=").split("+"))
    head = completion.split("#")[0].split(";")[0].split("+")[0].split(",")[0]
    return float(completion.endswith("#") and head.isdigit() and int(head) == a + b)


def _last_number_anywhere(prompt, completion):
    """The loophole a student found: the last run of digits, wherever it stands."""
    import re

    a, b = (int(x) for x in prompt.strip("#=").split("+"))
    nums = re.findall(r"[0-9]+", completion)
    return 1.0 if completion.endswith("#") and nums and nums[-1] == str(a + b) else 0.0


def _after_the_first_separator(prompt, completion):
    a, b = (int(x) for x in prompt.strip("#=").split("+"))
    answer, mark, after = completion.partition("#")
    final = answer.split(";")[1] if ";" in answer else answer
    return float(bool(mark) and not after and final.isdigit() and not final.startswith("0") and int(final) == a + b)


@pytest.mark.parametrize(
    ("wrong", "says"),
    [
        (_last_number_anywhere, "character before its final number"),
        (_after_the_first_separator, "more than one ';'"),
        (_checks_the_working, "outcome-only"),
        (_first_number, "not the first number"),
        (lambda p, c: ch7.reward(p, c if c.endswith("#") else c + "#"), "never wrote the end mark"),
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


REAL = [({"share": 0.5, "worked": 0.7, "direct": 0.4}, {"share": 1.0, "worked": 0.9, "direct": 0.0})]


def test_the_reference_split_passes_and_applies_itself_to_the_runs():
    result = ch7.check_gain_split(ch7.split_gain, REAL)
    assert result.passed
    # switch: +0.5 x 0.7 - 0.5 x 0.4 = +0.15; execution: 1.0 x (0.9 - 0.7) = +0.20
    assert "+0.15 from the switch and +0.20 from execution" in result.message


def _by_difference(before, after):
    switch = (after["share"] - before["share"]) * (before["worked"] - before["direct"])
    total = (
        after["share"] * after["worked"]
        + (1 - after["share"]) * after["direct"]
        - before["share"] * before["worked"]
        - (1 - before["share"]) * before["direct"]
    )
    return [switch, total - switch]


@pytest.mark.parametrize("right", [_by_difference, lambda b, a: list(ch7.split_gain(b, a))])
def test_right_splits_in_every_spelling_pass(right):
    assert ch7.check_gain_split(right).passed


def _other_way(before, after):
    switch = (after["share"] - before["share"]) * (after["worked"] - after["direct"])
    execution = before["share"] * (after["worked"] - before["worked"]) + (1 - before["share"]) * (
        after["direct"] - before["direct"]
    )
    return switch, execution


@pytest.mark.parametrize(
    ("wrong", "says"),
    [
        (lambda b, a: ch7.split_gain(b, a)[::-1], "swapped"),
        (_other_way, "split it another way"),
        (lambda b, a: (ch7.split_gain(b, a)[0], 0.0), "must add up to the change"),
        (lambda b, a: 0.1, "return two numbers"),
        (lambda b, a: (0.1, float("inf")), "return two numbers"),
        (lambda b, a: b["missing"], "KeyError"),
        (None, "no answer yet"),
        ([0.1, 0.2], "must be a function"),
    ],
)
def test_split_mistakes_are_named(wrong, says):
    result = ch7.check_gain_split(wrong)
    assert not result.passed and says in result.message


def test_both_exercises_are_registered_for_the_chapter():
    found = {name: e for name, e in all_exercises().items() if e.chapter == "working"}
    assert set(found) == {"outcome-reward", "gain-split"}
    assert found["outcome-reward"].reference is ch7.reward and found["gain-split"].reference is ch7.split_gain
