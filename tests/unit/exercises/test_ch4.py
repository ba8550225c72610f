"""Chapter 4's exercise checks: each reference solution passes, plausible wrong answers fail with a useful message."""
from __future__ import annotations

from rlbook import rewards as rw
from rlbook import world
from rlbook.exercises import ch4


def substring_verifier(prompt, completion):
    """The chapter's solution: the right sum anywhere in an ended answer."""
    task = world.parse_prompt(prompt)
    return float(completion.endswith("#") and str(task.answer) in completion)


def test_ex4_reference_passes():
    assert ch4.check_exploitable_verifier(substring_verifier, "U:3+4?|A:", "17#").passed


def test_ex4_the_fail_open_verifier_itself_passes_with_the_empty_answer():
    assert ch4.check_exploitable_verifier(rw.get_verifier("fail-open"), "U:3+4?|A:", "#").passed


def test_ex4_not_answered():
    result = ch4.check_exploitable_verifier(None, None, None)
    assert not result.passed and "no answer yet" in result.message


def test_ex4_a_verifier_that_pays_everything_fails():
    result = ch4.check_exploitable_verifier(lambda p, c: 1.0, "U:3+4?|A:", "#")
    assert not result.passed and "wrong answer" in result.message


def test_ex4_a_correct_answer_is_not_an_exploit():
    result = ch4.check_exploitable_verifier(substring_verifier, "U:3+4?|A:", "7#")
    assert not result.passed and "correct answer" in result.message


def test_ex4_the_exploit_must_be_paid():
    result = ch4.check_exploitable_verifier(substring_verifier, "U:3+4?|A:", "#")
    assert not result.passed and "not fooled" in result.message


def test_ex4_errors_and_bad_prompts_are_reported():
    result = ch4.check_exploitable_verifier(lambda p, c: 1 / 0, "U:3+4?|A:", "#")
    assert not result.passed and "ZeroDivisionError" in result.message
    result = ch4.check_exploitable_verifier(substring_verifier, "3+4", "17#")
    assert not result.passed and "not a task" in result.message


def test_ex12_not_answered():
    assert "no answer yet" in ch4.check_reward_split(None).message


def test_ex13_not_answered():
    assert "no answer yet" in ch4.check_abort_rule(None).message
