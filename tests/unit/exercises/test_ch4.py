"""Chapter 4's exercise checks: each reference solution passes, plausible wrong answers fail with a useful message."""
from __future__ import annotations

import pytest

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


def _prefix_verifier(prompt, completion):
    """Pays when the answer starts with the right sum (so '7#', and also '77#')."""
    return 1.0 if completion.startswith(str(world.parse_prompt(prompt).answer)) and completion.endswith("#") else 0.0


def _verdict_verifier(prompt, completion):
    """Returns a Verdict-like object whose reward is the fail-open verifier's."""
    return rw.get_verifier("fail-open")(prompt, completion)


@pytest.mark.parametrize("verifier, exploit", [
    (_prefix_verifier, "77#"), (_verdict_verifier, "#"),
    (lambda p, c: _prefix_verifier(p, c) == 1.0, "70#"),
])
def test_ex4_other_loopholes_pass(verifier, exploit):
    assert ch4.check_exploitable_verifier(verifier, "U:3+4?|A:", exploit).passed


@pytest.mark.parametrize("verifier, hint", [
    (lambda p, c: str(substring_verifier(p, c)), "not text"),
    (lambda p, c: "1.0" if substring_verifier(p, c) else "0.0", "not text"),
    (lambda p, c: [substring_verifier(p, c)], "a number such as 1.0"),
])
def test_ex4_a_reward_must_be_a_number(verifier, hint):
    result = ch4.check_exploitable_verifier(verifier, "U:3+4?|A:", "17#")
    assert not result.passed and hint in result.message


@pytest.mark.parametrize("args, hint", [
    (("my_verifier", "U:3+4?|A:", "17#"), "must be a function"),
    ((substring_verifier, 7, "17#"), "not a task"),
    ((substring_verifier, "U:3+4?|A:", 17), "must be text"),
    ((substring_verifier, ["U:3+4?|A:"], "17#"), "not a task"),
])
def test_ex4_junk_gets_a_message(args, hint):
    result = ch4.check_exploitable_verifier(*args)
    assert not result.passed and hint in result.message


@pytest.mark.parametrize("junk", [3, "split"])
def test_ex12_and_ex13_junk_is_not_a_function(junk):
    assert "must be a function" in ch4.check_reward_split(junk).message
    assert "must be a function" in ch4.check_abort_rule(junk).message


@pytest.mark.parametrize(("prompt", "completion", "says"), [
    (None, "7#", "no answer yet"), ("3+4", "7#", "not a task"), ("U:3+4+5?|A:", "7#", "not a task"),
    ("U:3+4?|A:", "", "1 to 4 characters"), ("U:3+4?|A:", "12345", "1 to 4 characters"),
    ("U:3+4?|A:", "x#", "1 to 4 characters"), ("U:3+4?|A:", 7, "1 to 4 characters"),
])
def test_overrated_answer_refuses_what_is_not_a_prompt_and_a_short_answer_before_loading_the_judge(prompt, completion,
                                                                                                    says):
    result = ch4.check_overrated_answer(prompt, completion)
    assert not result.passed and says in result.message


def test_the_reference_abort_rule_waits_for_two_updates_in_a_row_far_from_the_reference():
    def step(kl=None, **rates):
        row = {"unverifiable_rate": 0.0, "malformed_rate": 0.0, **rates}
        return row if kl is None else {**row, "kl": kl, "loss": 0.1}

    spike = [step(0.3), step(4.1), step(0.3)]
    assert not any(ch4.reference_abort_rule(spike[:i + 1]) for i in range(len(spike)))  # a one-batch blip
    assert ch4.reference_abort_rule([step(0.3), step(5.0), step(12.0)])
    assert ch4.reference_abort_rule([step(5.0), step(), step(12.0)])  # a paused update in between is skipped
    assert not ch4.reference_abort_rule([step(12.0)])  # one update is not two
    assert ch4.reference_abort_rule([step(0.3), step(unverifiable_rate=0.5)])
    assert ch4.reference_abort_rule([{**step(0.3), "loss": float("nan")}])
