"""Chapter 2's exercise checks: the reference solutions pass, plausible wrong answers fail with useful messages."""

from __future__ import annotations

import numpy as np
import pytest

from rlbook import disagreement as d
from rlbook.core.world import Task, parse_prompt
from rlbook.exercises import ch2

P = Task((3, 4, 5)).prompt
# Rollouts of the kinds a multi-step policy writes, including malformed and budget-stopped ones.
PROMPTS = [P] * 12 + [Task((9, 9, 9)).prompt] * 4
COMPLETIONS = [
    "7,12#",
    "6,12#",
    "7,13#",
    "6,11#",
    "7,12#3",
    "7,12,12#",
    " 7,12#",
    "7,12,1",
    "7,1",
    "#",
    "07,12#",
    "7,012#",
    "18,27#",
    "18,28#",
    "17,26#",
    "27#",
]


# ---------------------------------------------------------------- Exercise 2.1


def test_reference_process_scorer_passes(capsys):
    result = ch2.check_process_scorer(ch2.reference_process_score, PROMPTS, COMPLETIONS)
    assert result.passed, result.message
    assert "all 16 distinct real rollouts" in result.message
    assert capsys.readouterr().out.startswith("PASSED")


@pytest.mark.parametrize("mistake", ch2.MISTAKES["process-scorer"])
def test_the_registered_process_scorer_mistakes_are_named(mistake):
    result = ch2.check_process_scorer(mistake.wrong, PROMPTS, COMPLETIONS)
    assert not result.passed and mistake.says in result.message


def test_scorer_judging_step_two_against_the_true_sum_fails():
    against_truth = ch2.MISTAKES["process-scorer"][0].wrong
    result = ch2.check_process_scorer(against_truth, PROMPTS, COMPLETIONS)
    assert not result.passed
    assert "6,11#" in result.message and "you said [False, False]" in result.message
    assert "own first sum" in result.message


def test_process_scorer_stub_crash_and_bad_return():
    assert "no answer yet" in ch2.check_process_scorer(None, PROMPTS, COMPLETIONS).message
    assert "still returns None" in ch2.check_process_scorer(lambda p, c: None, PROMPTS, COMPLETIONS).message
    crash = ch2.check_process_scorer(lambda p, c: [int(x) > 0 for x in c.rstrip("#").split(",")], PROMPTS, COMPLETIONS)
    assert not crash.passed and "raised ValueError" in crash.message
    number = ch2.check_process_scorer(lambda p, c: 0.5, PROMPTS, COMPLETIONS)
    assert not number.passed and "return a list of True/False, one per step" in number.message


# ---------------------------------------------------------------- Exercise 2.2


def test_reference_verifier_and_blind_spot_pass():
    assert ch2.check_verifier(ch2.reference_verifier).passed
    found = ch2.find_blind_spot(ch2.reference_verifier)
    assert found == "0,12#"
    result = ch2.check_blind_spot(found, ch2.reference_verifier)
    assert result.passed, result.message
    assert "'0,12#'" in result.message and "with a wrong step" in result.message
    assert ch2.check_blind_spot("6,12#", ch2.reference_verifier).passed


def test_sloppy_verifier_lists_what_slips_through():
    def sloppy(prompt, completion):
        return completion.split("#")[0].split(",")[-1].strip() == str(parse_prompt(prompt).answer)

    result = ch2.check_verifier(sloppy)
    assert not result.passed
    assert "slip through" in result.message and "space after the comma" in result.message
    assert "should be malformed" in result.message


@pytest.mark.parametrize("mistake", ch2.MISTAKES["verifier"])
def test_the_registered_verifier_mistakes_are_named(mistake):
    result = ch2.check_verifier(mistake.wrong)
    assert not result.passed and mistake.says in result.message


def test_a_verifier_that_raises_on_an_unreadable_answer_is_caught():
    def crashes(prompt, completion):
        return int(completion.rstrip("#").split(",")[-1]) == parse_prompt(prompt).answer

    result = ch2.check_verifier(crashes)
    assert not result.passed and "raised ValueError" in result.message and "every text" in result.message


@pytest.mark.parametrize("mistake", ch2.MISTAKES["blind-spot"])
def test_the_registered_blind_spot_mistakes_are_named(mistake):
    result = ch2.check_blind_spot(mistake.wrong(ch2.reference_verifier), ch2.reference_verifier)
    assert not result.passed and mistake.says in result.message


def test_blind_spot_must_be_accepted_and_wrong():
    assert "no answer yet" in ch2.check_blind_spot(None, ch2.reference_verifier).message
    refused = ch2.check_blind_spot("6,13#", ch2.reference_verifier)
    assert not refused.passed and "does not accept" in refused.message
    assert "no answer yet" in ch2.check_verifier(None).message
    assert "still returns None" in ch2.check_verifier(lambda p, c: None).message


def test_a_blind_spot_needs_a_verifier_that_works():
    for verify, hint in ((None, "no answer yet"), (lambda p, c: True, "slip through"), ("mine", "must be a function")):
        result = ch2.check_blind_spot("6,12#", verify)
        assert not result.passed and "first make `my_verifier` pass" in result.message and hint in result.message


def test_adversarial_cases_cover_both_verdicts_for_every_task():
    cases = ch2.adversarial_cases()
    assert len(cases) == 22 * len(ch2.ADVERSARIAL_TASKS)
    accepted = [c for c in cases if ch2.reference_verifier(c[1], c[2])]
    assert len(accepted) == 3 * len(ch2.ADVERSARIAL_TASKS)  # canonical, wrong first sum, final twice
    assert ("non-ASCII digit", P, "7,1\u0662#") in cases


# ---------------------------------------------------------------- Exercise 2.3, first half


def test_disagreement_pick():
    assert "no answer yet" in ch2.check_disagreement_pick(None, PROMPTS, COMPLETIONS).message
    out_of_range = ch2.check_disagreement_pick(16, PROMPTS, COMPLETIONS)
    assert not out_of_range.passed and "from 0 to 15" in out_of_range.message
    right_through_invalid = ch2.check_disagreement_pick(1, PROMPTS, COMPLETIONS)
    assert right_through_invalid.passed and d.RIGHT_INVALID in right_through_invalid.message
    assert ch2.check_disagreement_pick(4, PROMPTS, COMPLETIONS).passed  # valid steps, text after the end mark
    agree = ch2.check_disagreement_pick(0, PROMPTS, COMPLETIONS)
    assert not agree.passed and "they agree" in agree.message
    partial = ch2.check_disagreement_pick(3, PROMPTS, COMPLETIONS)
    assert not partial.passed and "partial credit" in partial.message


@pytest.mark.parametrize("mistake", ch2.MISTAKES["disagreement-pick"])
def test_the_registered_pick_mistakes_are_named(mistake):
    result = ch2.check_disagreement_pick(mistake.wrong(PROMPTS, COMPLETIONS), PROMPTS, COMPLETIONS)
    assert not result.passed and mistake.says in result.message


def test_reference_pick_is_a_disagreement():
    assert ch2.pick_disagreement(PROMPTS, COMPLETIONS) == 1
    assert ch2.pick_disagreement([P] * 2, ["7,12#", "6,13#"]) is None


# ---------------------------------------------------------------- Exercise 2.1: spellings, shortcuts, junk


def _scorer_by_regex(prompt, completion):
    import re

    a, b, c = parse_prompt(prompt).operands
    fields = completion.split("#", 1)[0].split(",") + ["", ""]
    ok = [re.fullmatch(r"0|[1-9][0-9]*", f) is not None for f in fields[:2]]
    first = ok[0] and int(fields[0]) == a + b
    return [first, ok[0] and ok[1] and int(fields[1]) == int(fields[0]) + c]


def _scorer_numpy(prompt, completion):
    return np.array(ch2.reference_process_score(prompt, completion))


@pytest.mark.parametrize(
    "right", [_scorer_by_regex, _scorer_numpy, lambda p, c: tuple(ch2.reference_process_score(p, c))]
)
def test_other_correct_process_scorers_pass(right):
    assert ch2.check_process_scorer(right, PROMPTS, COMPLETIONS).passed


def _judging_after_an_unreadable_step(prompt, completion):
    a, b, c = parse_prompt(prompt).operands
    fields = completion.split("#")[0].split(",") + ["", ""]
    value = int(fields[0]) if fields[0].strip().isdigit() else a + b
    return [ch2.is_canonical(fields[0]) and value == a + b, ch2.is_canonical(fields[1]) and int(fields[1]) == value + c]


def _strings(prompt, completion):
    return [str(x) for x in ch2.reference_process_score(prompt, completion)]


@pytest.mark.parametrize(
    "wrong, hint",
    [(_judging_after_an_unreadable_step, "and so is the step after it"), (_strings, "return a list of True/False")],
)
def test_shortcuts_in_a_process_scorer_are_caught_on_constructed_cases(wrong, hint):
    result = ch2.check_process_scorer(wrong, PROMPTS, COMPLETIONS)
    assert not result.passed and hint in result.message


def test_a_one_row_list_does_not_let_a_wrong_scorer_pass():
    result = ch2.check_process_scorer(_judging_after_an_unreadable_step, [P], ["7,12#"])
    assert not result.passed and "constructed cases" in result.message


@pytest.mark.parametrize(
    "prompts, completions, hint",
    [
        ([], [], "non-empty"),
        (None, None, "lists of text"),
        ([P, P], ["7,12#"], "same length"),
        ([P], [7], "must be text"),
    ],
)
def test_process_scorer_with_broken_rollout_lists_gets_a_message(prompts, completions, hint):
    result = ch2.check_process_scorer(ch2.reference_process_score, prompts, completions)
    assert not result.passed and hint in result.message


def test_process_scorer_that_is_not_a_function():
    result = ch2.check_process_scorer("my scorer", PROMPTS, COMPLETIONS)
    assert not result.passed and "must be a function" in result.message


# ---------------------------------------------------------------- Exercise 2.2: the tricks students miss


def _fullmatch_verifier(prompt, completion):
    import re

    match = re.fullmatch(r"(?:0|[1-9][0-9]*),(0|[1-9][0-9]*)#", completion)
    return match is not None and match.group(1) == str(parse_prompt(prompt).answer)


@pytest.mark.parametrize(
    "right",
    [
        _fullmatch_verifier,
        lambda p, c: int(ch2.reference_verifier(p, c)),
        lambda p, c: np.bool_(ch2.reference_verifier(p, c)),
    ],
)
def test_other_correct_verifiers_pass(right):
    assert ch2.check_verifier(right).passed and ch2.check_blind_spot("6,12#", right).passed


@pytest.mark.parametrize(
    "answer", [lambda p, c: "yes" if ch2.reference_verifier(p, c) else "", lambda p, c: "accepted", lambda p, c: 0.5]
)
def test_a_verifier_must_answer_true_or_false(answer):
    result = ch2.check_verifier(answer)
    assert not result.passed and "return True to accept" in result.message


@pytest.mark.parametrize("blind_spot", [612, ["6,12#"], b"6,12#"])
def test_a_blind_spot_that_is_not_text_gets_a_message(blind_spot):
    result = ch2.check_blind_spot(blind_spot, ch2.reference_verifier)
    assert not result.passed and "must be a completion" in result.message


def test_verifier_that_is_not_a_function():
    assert "must be a function" in ch2.check_verifier(True).message


# ---------------------------------------------------------------- Exercise 2.3: index spellings, fabricated lists


def test_an_index_may_be_a_float_or_a_numpy_int_but_not_a_bool():
    assert ch2.check_disagreement_pick(1.0, PROMPTS, COMPLETIONS).passed
    assert ch2.check_disagreement_pick(np.int64(1), PROMPTS, COMPLETIONS).passed
    for junk in (True, 1.5, "1", [1], -1):
        result = ch2.check_disagreement_pick(junk, PROMPTS, COMPLETIONS)
        assert not result.passed and "not an index" in result.message


@pytest.mark.parametrize(
    "prompts, completions, hint",
    [
        ([P], ["6,12#"], "not a list of your own"),
        ([P] * 4, ["6,12#"] * 4, "nothing to pick"),
        ([Task((3, 4)).prompt] * 4, ["7#", "8#", "7#", "6#"], "not a list of your own"),
        ([], [], "non-empty"),
        (PROMPTS, COMPLETIONS[:-1], "same length"),
    ],
)
def test_a_fabricated_list_of_rollouts_is_refused(prompts, completions, hint):
    result = ch2.check_disagreement_pick(0, prompts, completions)
    assert not result.passed and hint in result.message


# ---------------------------------------------------------------- Exercise 2.1, second question: the disagreements

# On PROMPTS/COMPLETIONS the verdicts differ on 4 rollouts: '6,12#' (accepted, a step invalid), '7,12#3' and
# '7,12,12#' (every step valid, malformed end) and '7,12,1' (every step valid, stopped by the budget). They agree on
# the other 12. Counting one direction only gives 1 or 3; "some step valid", or the scores compared as numbers,
# gives 10 (the 6 partial credits count as well).


def test_the_reference_disagreement_count_passes_and_names_the_cells():
    assert ch2.count_disagreements(PROMPTS, COMPLETIONS) == 4
    result = ch2.check_disagreement_count(4, PROMPTS, COMPLETIONS)
    assert result.passed
    assert "differ on 4 of the 16 rollouts (right answer through an invalid step: 1; " in result.message
    assert "valid steps, malformed end: 2; valid steps, stopped by the budget: 1)" in result.message


@pytest.mark.parametrize("spelling", [4, 4.0, np.int64(4), np.float32(4.0)])
def test_a_right_disagreement_count_passes_in_every_spelling(spelling):
    assert ch2.check_disagreement_count(spelling, PROMPTS, COMPLETIONS).passed


@pytest.mark.parametrize("mistake", ch2.MISTAKES["disagreement-count"])
def test_the_registered_disagreement_count_mistakes_are_named(mistake):
    result = ch2.check_disagreement_count(mistake.wrong(PROMPTS, COMPLETIONS), PROMPTS, COMPLETIONS)
    assert not result.passed and mistake.says in result.message


@pytest.mark.parametrize(
    "answer, hints",
    [
        (12, ["counting the rollouts the two verdicts agree on"]),
        (1, ["counting right answers only"]),
        (3, ["counting rejected answers only"]),
        (10, ["'some step valid'", "comparing the two scores as numbers"]),
        (5, ["5 is not right. Count the rollouts where exactly one verdict passes"]),
        (17, ["17 is not a count of the 16 rollouts"]),
        (-4, ["-4 is not a count of the 16 rollouts"]),
        (4.5, ["must be a whole number of rollouts"]),
        ("4", ["must be a whole number of rollouts"]),
        (True, ["must be a whole number of rollouts"]),
        ([4], ["must be a whole number of rollouts"]),
        (None, ["no answer yet"]),
    ],
)
def test_wrong_disagreement_counts_are_told_their_mistake(answer, hints):
    result = ch2.check_disagreement_count(answer, PROMPTS, COMPLETIONS)
    assert not result.passed and all(hint in result.message for hint in hints)


def test_a_disagreement_count_skipping_repeats_is_told_to_count_them():
    prompts, completions = [P] * 4, ["6,12#", "6,12#", "7,12#", "7,12#3"]
    assert ch2.check_disagreement_count(3, prompts, completions).passed
    distinct = ch2.check_disagreement_count(2, prompts, completions)
    assert not distinct.passed and "repeats included" in distinct.message


@pytest.mark.parametrize(
    "prompts, completions, hint",
    [
        (PROMPTS, COMPLETIONS[:-1], "same length"),
        ("prompts", "completions", "lists of text"),
        ([Task((3, 4)).prompt] * 4, ["7#"] * 4, "real multi-step rollouts"),
    ],
)
def test_a_disagreement_count_on_lists_that_are_not_the_chapters_gets_a_message(prompts, completions, hint):
    result = ch2.check_disagreement_count(4, prompts, completions)
    assert not result.passed and hint in result.message


# ---------------------------------------------------------------- Exercise 2.3, second half: the rule change

# On PROMPTS/COMPLETIONS the true-sum rule gains '6,12#' (right total after a wrong first sum), ' 7,12#' and
# '07,12#' (unreadable first step, right second sum), and loses '6,11#' and '17,26#' (a wrong first sum carried
# forward): 3 and 2. Partial credit: '7,13#', '6,11#', '7,1', '7,012#', '18,28#' and '17,26#' (6 rollouts).
RIGHT = {"gained": 3, "lost": 2}


def test_the_reference_rescoring_passes_and_agrees_with_the_analysis():
    assert ch2.rule_change_counts(PROMPTS, COMPLETIONS) == RIGHT
    result = ch2.check_rule_change(RIGHT, PROMPTS, COMPLETIONS)
    assert result.passed and "3 rollouts gain and 2 lose: 1 of the gains are right answers" in result.message
    only = ch2.check_rule_change({"gained": 1, "lost": 1}, [P] * 3, ["6,12#", "6,11#", "7,12#"])
    assert only.passed and "every gain is a right answer reached through a wrong first sum" in only.message


@pytest.mark.parametrize(
    "spelling",
    [
        {"gained": 3, "lost": 2},
        {"lost": 2.0, "gained": 3.0},
        {"Gained": np.int64(3), " LOST ": np.int32(2)},
        (3, 2),
        [3.0, 2],
        {"gained": 3, "lost": 2, "note": "counted by hand"},
    ],
)
def test_right_counts_pass_in_every_spelling(spelling):
    assert ch2.check_rule_change(spelling, PROMPTS, COMPLETIONS).passed


def test_repeats_count():
    prompts, completions = [P] * 4, ["6,12#", "6,12#", "6,11#", "7,12#"]
    assert ch2.check_rule_change({"gained": 2, "lost": 1}, prompts, completions).passed
    distinct = ch2.check_rule_change({"gained": 1, "lost": 1}, prompts, completions)
    assert not distinct.passed and "repeats included" in distinct.message


@pytest.mark.parametrize("mistake", ch2.MISTAKES["rule-change"])
def test_the_registered_rule_change_mistakes_are_named(mistake):
    result = ch2.check_rule_change(mistake.wrong(PROMPTS, COMPLETIONS), PROMPTS, COMPLETIONS)
    assert not result.passed and mistake.says in result.message


@pytest.mark.parametrize(
    "answer, hint",
    [
        ({"gained": 2, "lost": 3}, "swapped"),
        ({"gained": 3, "lost": 6}, "counts every wrong answer with partial credit"),
        ({"gained": 0, "lost": 2}, "`gained` cannot be 0"),
        ({"gained": 4, "lost": 2}, "`gained` is not right"),
        ({"gained": 3, "lost": 0}, "`lost` is not right"),
        ({"gained": None, "lost": 2}, "no answer yet"),
        ({"gain": 3, "lost": 2}, "needs the keys 'gained' and 'lost'"),
        ({"gained": 2.5, "lost": 2}, "whole number"),
        ({"gained": -3, "lost": 2}, "a count is never negative"),
        ({"gained": 212, "lost": -360}, "a count is never negative"),
        ({"gained": "3", "lost": 2}, "whole number"),
        (3, "must be a dict"),
        ((1, 2, 3), "must be a dict"),
    ],
)
def test_wrong_counts_are_told_their_mistake(answer, hint):
    result = ch2.check_rule_change(answer, PROMPTS, COMPLETIONS)
    assert not result.passed and hint in result.message


def test_rule_change_stub_and_broken_lists():
    assert "no answer yet" in ch2.check_rule_change(None, PROMPTS, COMPLETIONS).message
    assert "same length" in ch2.check_rule_change(RIGHT, PROMPTS, COMPLETIONS[:-1]).message
