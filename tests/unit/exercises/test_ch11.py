"""Chapter 11's exercise checks (the exact process rule, one score from the steps): the references pass, the named
mistakes fail with their words, and what a check adds about the runs is what the shown answers hold."""

from __future__ import annotations

import pytest

from rlbook.core import process_model
from rlbook.exercises import ch11

ANSWERS = {
    "worked": [
        {"prompt": "#47+38=", "answer": "7+8=15,4+3+1=8;85#", "steps": [0.9, 0.6, 0.8]},
        {"prompt": "#21+34=", "answer": "1+4=5,2+3=5;55#", "steps": [0.7, 0.7, 0.9]},
    ],
    "process-exact": [
        {"prompt": "#47+38=", "answer": "7+8=15,4+3=7;85#", "steps": [0.9, 0.5, 0.8]},
        {"prompt": "#21+34=", "answer": "55#", "steps": [0.6]},
    ],
    "prm": [
        {"prompt": "#47+38=", "answer": "2+1=2=211=2112119", "steps": [0.95]},
        {"prompt": "#21+34=", "answer": "2+1=2=211=2111199", "steps": [0.93]},
    ],
}


def test_the_references_pass_and_agree_with_the_package_s_rule():
    assert ch11.check_process_rule(ch11.process_right).passed
    assert ch11.check_step_aggregate(ch11.answer_score).passed
    for run in ANSWERS.values():
        for a in run:
            assert ch11.process_right(a["prompt"], a["answer"]) == process_model.process_right(a["prompt"], a["answer"])


@pytest.mark.parametrize(
    ("check", "name"), [(ch11.check_process_rule, "process-rule"), (ch11.check_step_aggregate, "step-aggregate")]
)
def test_each_named_mistake_is_refused_with_its_words(check, name):
    for mistake in ch11.MISTAKES[name]:
        result = check(mistake.wrong)
        assert not result.passed and mistake.says in result.message


def test_the_rule_check_counts_each_run_s_accepted_answers_beside_the_outcome_verifier():
    result = ch11.check_process_rule(ch11.process_right, ANSWERS)
    assert result.passed
    assert "worked 2 of 2 (the outcome verifier: 2)" in result.message
    assert "process-exact 1 of 2 (the outcome verifier: 2)" in result.message
    assert "prm 0 of 2 (the outcome verifier: 0)" in result.message


def test_the_aggregate_check_gives_each_run_s_mean_smallest_step_and_product_beside_the_guess():
    result = ch11.check_step_aggregate(ch11.answer_score, ANSWERS, 0.3)
    # worked: min (0.6 + 0.7) / 2, product (0.432 + 0.441) / 2; prm's one-step answers score alike both ways
    assert result.passed and "worked 0.65 and 0.44, process-exact 0.55 and 0.48, prm 0.94 and 0.94" in result.message
    assert "You predicted 0.3 for worked's mean product" in result.message
    assert "You predicted" not in ch11.check_step_aggregate(ch11.answer_score, ANSWERS).message


@pytest.mark.parametrize("junk", [None, 3, "x", lambda *a: "text", lambda *a: [1, 2]])
def test_junk_gets_a_message_not_a_traceback(junk):
    for check in (ch11.check_process_rule, ch11.check_step_aggregate):
        result = check(junk)
        assert not result.passed and result.message
