"""Chapter 2's exercise checks: the reference solutions pass, plausible wrong answers fail with useful messages."""
from __future__ import annotations

from rlbook import disagreement as d
from rlbook.core.world import Task, parse_prompt
from rlbook.exercises import ch2

P = Task((3, 4, 5)).prompt
# Rollouts of the kinds a multi-step policy writes, including malformed and budget-stopped ones.
PROMPTS = [P] * 12 + [Task((9, 9, 9)).prompt] * 4
COMPLETIONS = ["7,12#", "6,12#", "7,13#", "6,11#", "7,12#3", "7,12,12#", " 7,12#", "7,12,1", "7,1", "#", "07,12#",
               "7,012#", "18,27#", "18,28#", "17,26#", "27#"]


# ---------------------------------------------------------------- exercise 2

def test_reference_process_scorer_passes(capsys):
    result = ch2.check_process_scorer(ch2.reference_process_score, PROMPTS, COMPLETIONS)
    assert result.passed, result.message
    assert "all 16 distinct real rollouts" in result.message
    assert capsys.readouterr().out.startswith("PASSED")


def test_scorer_judging_step_two_against_the_true_sum_fails():
    def against_truth(prompt, completion):
        task = parse_prompt(prompt)
        fields = completion.split("#")[0].split(",") + ["", ""]
        return [fields[0] == str(task.steps[0]), fields[1] == str(task.steps[1])]

    result = ch2.check_process_scorer(against_truth, PROMPTS, COMPLETIONS)
    assert not result.passed
    assert "6,11#" in result.message and "you said [False, False]" in result.message
    assert "own first sum" in result.message


def test_process_scorer_stub_crash_and_bad_return():
    assert "no answer yet" in ch2.check_process_scorer(None, PROMPTS, COMPLETIONS).message
    assert "still returns None" in ch2.check_process_scorer(lambda p, c: None, PROMPTS, COMPLETIONS).message
    crash = ch2.check_process_scorer(lambda p, c: [int(x) > 0 for x in c.rstrip("#").split(",")], PROMPTS,
                                     COMPLETIONS)
    assert not crash.passed and "raised ValueError" in crash.message
    number = ch2.check_process_scorer(lambda p, c: 0.5, PROMPTS, COMPLETIONS)
    assert not number.passed and "return one True/False per step" in number.message


# ---------------------------------------------------------------- exercise 6

def test_reference_verifier_and_blind_spot_pass():
    result = ch2.check_verifier(ch2.reference_verifier, ch2.REFERENCE_BLIND_SPOT)
    assert result.passed, result.message
    assert "'6,12#'" in result.message and "with a wrong step" in result.message


def test_sloppy_verifier_lists_what_slips_through():
    def sloppy(prompt, completion):
        return completion.split("#")[0].split(",")[-1].strip() == str(parse_prompt(prompt).answer)

    result = ch2.check_verifier(sloppy, "6,12#")
    assert not result.passed
    assert "slip through" in result.message and "space after the comma" in result.message
    assert "should be malformed" in result.message


def test_too_strict_verifier_is_told_what_it_refuses():
    def exact_match(prompt, completion):
        return completion == parse_prompt(prompt).completion

    result = ch2.check_verifier(exact_match, None)
    assert not result.passed and "right answer(s) are refused" in result.message
    assert "right final through a wrong first sum" in result.message


def test_blind_spot_must_be_accepted_and_wrong():
    assert "no answer yet" in ch2.check_verifier(ch2.reference_verifier, None).message
    right = ch2.check_verifier(ch2.reference_verifier, "7,12#")
    assert not right.passed and "right in every step" in right.message
    refused = ch2.check_verifier(ch2.reference_verifier, "6,13#")
    assert not refused.passed and "does not accept" in refused.message
    assert "no answer yet" in ch2.check_verifier(None, None).message
    assert "still returns None" in ch2.check_verifier(lambda p, c: None, "6,12#").message


def test_adversarial_cases_cover_both_verdicts_for_every_task():
    cases = ch2.adversarial_cases()
    assert len(cases) == 18 * len(ch2.ADVERSARIAL_TASKS)
    accepted = [c for c in cases if ch2.reference_verifier(c[1], c[2])]
    assert len(accepted) == 3 * len(ch2.ADVERSARIAL_TASKS)  # canonical, wrong first sum, final twice
    assert ("non-ASCII digit", P, "7,1\u0662#") in cases


# ---------------------------------------------------------------- exercise 11

def test_disagreement_pick():
    assert "no answer yet" in ch2.check_disagreement_pick(None, PROMPTS, COMPLETIONS).message
    out_of_range = ch2.check_disagreement_pick(16, PROMPTS, COMPLETIONS)
    assert not out_of_range.passed and "from 0 to 15" in out_of_range.message
    right_through_invalid = ch2.check_disagreement_pick(1, PROMPTS, COMPLETIONS)
    assert right_through_invalid.passed and d.RIGHT_INVALID in right_through_invalid.message
    assert ch2.check_disagreement_pick(4, PROMPTS, COMPLETIONS).passed   # valid steps, text after the end mark
    agree = ch2.check_disagreement_pick(0, PROMPTS, COMPLETIONS)
    assert not agree.passed and "they agree" in agree.message
    partial = ch2.check_disagreement_pick(3, PROMPTS, COMPLETIONS)
    assert not partial.passed and "partial credit" in partial.message


def test_exercise_rows_hold_the_first_disagreement():
    judged = d.judge([P] * 30, ["7,12#"] * 25 + ["6,12#"] + ["7,12#"] * 4)
    rows = ch2.exercise_rows(judged, k=12)
    assert rows == judged[24:30] and any(j.disagrees for j in rows)
    assert ch2.exercise_rows(judged[:10], k=4) == judged[:4]


def test_exercise_rows_avoid_a_prompt_when_they_can():
    q = Task((1, 2, 3)).prompt
    judged = d.judge([P] * 4 + [q] * 4, ["6,12#", "7,12#", "7,12#", "7,12#", "7,12#", "3,6#", "2,6#", "3,6#"])
    assert ch2.exercise_rows(judged, k=4) == judged[:4]
    assert ch2.exercise_rows(judged, k=4, avoid=frozenset({P})) == judged[4:]
    assert ch2.exercise_rows(judged[:4], k=4, avoid=frozenset({P})) == judged[:4]  # nothing else qualifies
