"""Chapter 5's exercise checks (rlbook.exercises.ch5 and abort_rule), without trained runs: each reference passes
where it needs no run, and each mistake a student makes fails with a message that names it."""

from __future__ import annotations

import contextlib
import io

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rlbook.core import rewards as rw
from rlbook.core import world
from rlbook.exercises import abort_rule, ch5


def test_the_reference_verifier_passes_with_an_answer_that_contains_the_sum():
    result = ch5.check_exploitable_verifier(ch5.my_verifier, "U:3+4?|A:", "17#")
    assert result.passed and "never raises" in result.message


def test_the_fail_open_verifier_itself_passes_with_the_empty_answer():
    assert ch5.check_exploitable_verifier(rw.get_verifier("fail-open"), "U:3+4?|A:", "#").passed


def _unguarded(prompt, completion):
    """The defect of issue 48: int() without a guard, so '#' raises ValueError."""
    return float(int(completion.rstrip("#")) == world.parse_prompt(prompt).answer) if completion != "0#" else 1.0


def _unguarded_with_loophole(prompt, completion):
    """Pays '0#' on every prompt (the loophole), grades ordinary answers, and raises on what int() cannot read."""
    if completion == "0#":
        return 1.0
    return float(int(completion.split("#")[0]) == world.parse_prompt(prompt).answer)


def test_a_verifier_that_raises_on_an_unreadable_answer_is_refused_and_told_why():
    result = ch5.check_exploitable_verifier(_unguarded_with_loophole, "U:3+4?|A:", "0#")
    assert not result.passed
    assert "raised ValueError" in result.message and "stops the training run" in result.message


def test_a_verifier_that_returns_text_on_an_unreadable_answer_is_refused():
    def verifier(prompt, completion):
        try:
            return float(int(completion.split("#")[0]) == world.parse_prompt(prompt).answer or completion == "77#")
        except ValueError:
            return "unreadable"

    result = ch5.check_exploitable_verifier(verifier, "U:3+4?|A:", "77#")
    assert not result.passed and "still returns a reward" in result.message


@pytest.mark.parametrize(
    ("verifier", "prompt", "completion", "says"),
    [
        (None, None, None, "no answer yet"),
        (ch5.my_verifier, None, None, "no answer yet"),
        (lambda p, c: None, "U:3+4?|A:", "17#", "no answer yet"),
        (lambda p, c: 1.0, "U:3+4?|A:", "#", "wrong answer"),
        (ch5.my_verifier, "U:3+4?|A:", "7#", "correct answer"),
        (ch5.my_verifier, "U:3+4?|A:", "#", "not fooled"),
        (lambda p, c: 1 / 0, "U:3+4?|A:", "#", "ZeroDivisionError"),
        (ch5.my_verifier, "3+4", "17#", "not a task"),
        ("my_verifier", "U:3+4?|A:", "17#", "must be a function"),
        (ch5.my_verifier, 7, "17#", "not a task"),
        (ch5.my_verifier, "U:3+4?|A:", 17, "must be text"),
        (lambda p, c: str(ch5.my_verifier(p, c)), "U:3+4?|A:", "17#", "not text"),
        (lambda p, c: [ch5.my_verifier(p, c)], "U:3+4?|A:", "17#", "a number such as 1.0"),
    ],
)
def test_mistakes_in_a_verifier_are_named(verifier, prompt, completion, says):
    result = ch5.check_exploitable_verifier(verifier, prompt, completion)
    assert not result.passed and says in result.message


@pytest.mark.parametrize("mistake", ch5.MISTAKES["exploitable-verifier"])
def test_the_registered_verifier_mistakes_are_named_with_the_reference_exploit(mistake):
    result = ch5.check_exploitable_verifier(mistake.wrong, *ch5.EXPLOIT)
    assert not result.passed and mistake.says in result.message


def _prefix_verifier(prompt, completion):
    """Pays when the answer starts with the right sum (so '7#', and also '77#')."""
    return 1.0 if completion.startswith(str(world.parse_prompt(prompt).answer)) and completion.endswith("#") else 0.0


@pytest.mark.parametrize(
    ("verifier", "exploit"),
    [
        (_prefix_verifier, "77#"),
        (lambda p, c: rw.get_verifier("fail-open")(p, c), "#"),
        (lambda p, c: _prefix_verifier(p, c) == 1.0, "70#"),
    ],
)
def test_other_loopholes_pass(verifier, exploit):
    assert ch5.check_exploitable_verifier(verifier, "U:3+4?|A:", exploit).passed


def test_the_unguarded_verifier_of_the_issue_grades_ordinary_answers_so_only_the_unreadable_cases_catch_it():
    assert _unguarded("U:3+4?|A:", "7#") == 1.0 and _unguarded("U:3+4?|A:", "8#") == 0.0
    with pytest.raises(ValueError):
        _unguarded("U:3+4?|A:", "#")


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        (None, "no answer yet"),
        ((None, None), "no answer yet"),
        ("U:3+4?|A:", "a pair (prompt, completion)"),
        (("U:3+4?|A:",), "a pair"),
        (("3+4", "7#"), "not a task prompt"),
        (("U:0+4+2?|A:", "7#"), "multi-step world"),
        (("U:3+4?|A:", ""), "1 to 4 characters"),
        (("U:3+4?|A:", "12345"), "1 to 4 characters"),
        (("U:3+4?|A:", "x#"), "1 to 4 characters"),
        (("U:3+4?|A:", 7), "1 to 4 characters"),
    ],
)
def test_an_overrated_answer_is_refused_before_the_judge_loads_when_it_is_no_short_answer_to_a_one_step_sum(
    answer, says
):
    result = ch5.check_overrated_answer(answer)
    assert not result.passed and says in result.message


def test_a_multi_step_prompt_is_called_a_task_and_the_judges_one_step_training_is_named():
    message = ch5.check_overrated_answer(("U:0+4+2?|A:", "7#")).message
    assert "not a task" not in message and "trained on one-step sums only" in message


@pytest.mark.parametrize("check", [ch5.check_reward_split, ch5.check_abort_rule])
def test_the_run_replaying_checks_answer_a_missing_or_non_function_answer_before_loading_a_run(check):
    assert "no answer yet" in check(None).message
    for junk in (3, "split"):
        assert "must be a function" in check(junk).message


def test_the_reference_abort_rule_waits_for_five_updates_in_a_row_far_from_the_reference():
    def step(kl=None, **rates):
        row = {"unverifiable_rate": 0.0, "malformed_rate": 0.0, **rates}
        return row if kl is None else {**row, "kl": kl, "loss": 0.1}

    spike = [step(0.3), step(0.3), step(4.1), step(0.3), step(0.3), step(0.3)]
    assert not any(ch5.should_abort(spike[: i + 1]) for i in range(len(spike)))  # a one-batch blip
    drifted = [step(0.3), *[step(1.5)] * 5]
    assert [ch5.should_abort(drifted[: i + 1]) for i in range(len(drifted))] == [False] * 5 + [True]
    assert ch5.should_abort([*[step(2.0)] * 3, step(), *[step(2.0)] * 2])  # a paused update in between is skipped
    assert not ch5.should_abort([step(12.0)] * 4)  # four updates are not five
    assert ch5.should_abort([step(0.3), step(unverifiable_rate=0.5)])
    assert ch5.should_abort([{**step(0.3), "loss": float("nan")}])


class _Trace:
    """A healthy run's metrics as Exercise 5.4's check reads them: one row per step, None where no kl was logged."""

    def __init__(self, kls, seed=1, **rates):
        self.seed = seed
        self.metrics = [
            {"step": i + 1, "unverifiable_rate": 0.0, "malformed_rate": 0.0, **rates}
            | ({} if kl is None else {"kl": kl, "loss": 0.1})
            for i, kl in enumerate(kls)
        ]


def _latest_kl_above(bar):
    return lambda history: history[-1].get("kl", 0.0) > bar


@pytest.mark.parametrize("kls", [[0.3, 0.3, 1.2, 0.3, 0.3], [0.3, None, 1.2, None, 0.3]])
def test_a_one_value_kl_rule_on_main_is_shown_the_single_step_spike_it_fired_at(kls):
    run = _Trace(kls)
    message = abort_rule._main_alarm(_latest_kl_above(0.5), run, 3)
    assert "healthy 'main' run (seed 1) at step 3 on that update's kl alone" in message
    assert "from 0.30 to 1.20 there and was back at 0.30" in message and "single-step spike" in message
    assert "several updates in a row" in message


def test_a_one_value_kl_rule_on_a_level_the_healthy_run_reaches_is_not_told_of_a_spike():
    run = _Trace([0.1, 0.4, 0.6, 0.6, 0.7])
    message = abort_rule._main_alarm(_latest_kl_above(0.5), run, 3)
    assert "at step 3 on that update's kl, 0.60" in message and "(0.40)" in message
    assert "spike" not in message and "raise the bar" in message


@pytest.mark.parametrize(
    "rule, run, alarm",
    [
        (lambda h: h[-1]["malformed_rate"] > 0.0, _Trace([0.3, 0.3, 1.2], malformed_rate=0.1), 1),
        (lambda h: h[-1]["malformed_rate"] > 0.0, _Trace([0.3, 0.3, 1.2], malformed_rate=0.1), 3),
        (lambda h: len(h) > 2 and min(x["kl"] for x in h[-3:]) > 0.25, _Trace([0.3, 0.3, 0.3, 0.3]), 3),
        (lambda h: 1 / 0, _Trace([0.3, 0.3, 1.2, 0.3]), 3),
        (_latest_kl_above(0.5), _Trace([None, 1.2, 0.3]), 2),  # no kl before it to compare with
    ],
)
def test_an_alarm_on_main_that_one_kl_value_does_not_explain_gets_the_plain_message(rule, run, alarm):
    message = abort_rule._main_alarm(rule, run, alarm)
    assert f"healthy 'main' run (seed 1) at step {alarm}: a criterion that stops good runs" in message
    assert "spike" not in message


def test_an_alarm_at_the_last_step_is_not_called_a_spike_with_no_update_after_it():
    message = abort_rule._main_alarm(_latest_kl_above(0.5), _Trace([0.3, 0.3, 1.2]), 3)
    assert "on that update's kl, 1.20" in message and "spike" not in message


def test_a_rule_that_stays_quiet_on_main_has_no_problem_there():
    assert abort_rule._main_alarm(_latest_kl_above(0.5), _Trace([0.3, 0.3]), None) is None


def test_every_chapter_5_exercise_is_registered_with_its_reference():
    from rlbook.exercises.registry import all_exercises

    found = {name: e for name, e in all_exercises().items() if e.chapter == "limits"}
    assert set(found) == {"exploitable-verifier", "reward-split", "overrated-answer", "abort-rule"}
    assert found["exploitable-verifier"].reference is ch5.my_verifier
    assert "def should_abort(history)" in found["abort-rule"].source()


junk = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-3, 300),
        st.floats(allow_nan=True),
        st.text(max_size=12),
        st.binary(max_size=4),
    ),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.tuples(inner, inner)),
    max_leaves=6,
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(prompt=junk, completion=junk)
def test_junk_for_the_exploit_or_the_judged_answer_gets_a_message_not_a_traceback(prompt, completion):
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        results = [
            ch5.check_exploitable_verifier(ch5.my_verifier, prompt, completion),
            ch5.check_exploitable_verifier(lambda p, c: 1.0, prompt, completion),
        ]
        if not (
            isinstance(prompt, str)
            and world.parse_prompt(prompt) is not None
            and isinstance(completion, str)
            and completion
        ):
            results.append(ch5.check_overrated_answer((prompt, completion)))
    for result in results:
        assert result.message and "could not read your answer" not in result.message
