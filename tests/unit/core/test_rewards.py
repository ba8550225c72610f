"""Unit tests of rlbook.core.rewards with values worked by hand."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rlbook.core.rewards import (
    PROCESS_STATUSES,
    STATUSES,
    VERIFIERS,
    ExactVerifier,
    FailOpenVerifier,
    ProcessScore,
    ShapedVerifier,
    Verdict,
    get_verifier,
    outcome_plus_process,
    process_score,
    read_number,
    score,
)
from rlbook.core.world import EOT

S = "U:3+4?|A:"  # single-step, answer 7


M = "U:3+4+5?|A:"  # multi-step, steps 7 then 12


exact = ExactVerifier()


exact2 = ExactVerifier("2.0")


fail_open = FailOpenVerifier()


def test_verdict_to_dict_round_trips_through_json():
    v = Verdict(1.0, "accepted", "answer 7 = 3+4", "exact", "1.0")
    d = v.to_dict()
    assert d == {"reward": 1.0, "status": "accepted", "reason": "answer 7 = 3+4", "verifier": "exact", "version": "1.0"}
    assert Verdict(**json.loads(json.dumps(d))) == v


def test_verdict_rejects_unknown_status():
    with pytest.raises(ValueError, match="unknown status"):
        Verdict(0.0, "wrong", "x", "exact", "1.0")


def test_statuses_are_the_five_of_the_design():
    assert STATUSES == ("accepted", "incorrect", "malformed", "incomplete", "unverifiable")


@pytest.mark.parametrize(
    "prompt, completion",
    [(S, "7#"), ("U:9+8?|A:", "17#"), ("U:0+0?|A:", "0#"), (M, "7,12#"), ("U:9+9+9?|A:", "18,27#")],
)
def test_exact_accepts_right_canonical_answers(prompt, completion):
    v = exact(prompt, completion)
    assert (v.reward, v.status, v.verifier, v.version) == (1.0, "accepted", "exact", "1.0")


def test_exact_incorrect_reason_names_answer_and_sum():
    v = exact("U:3+8?|A:", "12#")
    assert (v.reward, v.status) == (0.0, "incorrect")
    assert v.reason == "answer 12 != 3+8 = 11"


def test_exact_multi_judges_only_the_final_number():
    assert exact(M, "6,12#").status == "accepted"  # wrong step, right final: outcome is blind to s1
    wrong = exact(M, "7,13#")
    assert wrong.status == "incorrect" and wrong.reason == "answer 13 != 3+4+5 = 12"
    assert exact(M, "6,11#").status == "incorrect"


def test_exact_budget_stopped_is_incomplete():
    for completion in ("7", "", "7,12", "77777"):
        v = exact(S, completion)
        assert (v.reward, v.status) == (0.0, "incomplete")
        assert "token budget" in v.reason


@pytest.mark.parametrize(
    "completion, words",
    [
        ("#", "empty answer"),
        (" 7#", "SPACE"),
        ("07#", "leading zero"),
        ("\u0663#", "non-ASCII digit"),
        ("-7#", "HYPHEN-MINUS"),
        ("7##", "after the end-of-turn mark"),
        ("7,7#", "expected one number, got 2"),
    ],
)
def test_exact_malformed_reason_names_the_problem(completion, words):
    v = exact(S, completion)
    assert (v.reward, v.status) == (0.0, "malformed")
    assert words in v.reason


def test_exact_multi_needs_two_numbers():
    assert exact(M, "12#").status == "malformed"
    assert exact(M, "7,12,12#").status == "malformed"
    assert "number 2 '012' has a leading zero" == exact(M, "7,012#").reason


def test_exact_unverifiable_prompts_and_non_text():
    for prompt in ("U:13+4?|A:", "U:3+4?", "", "what is 3+4?", "U:1+2+3+4?|A:"):
        v = exact(prompt, "7#")
        assert (v.reward, v.status) == (0.0, "unverifiable") and prompt[:5] in v.reason
    assert exact(None, "7#").status == "unverifiable"  # type: ignore[arg-type]
    assert exact(S, 7).status == "unverifiable"  # type: ignore[arg-type]
    assert "int" in exact(S, 7).reason  # type: ignore[arg-type]


def test_prompt_is_checked_before_the_end_of_turn_mark():
    assert exact("nonsense", "7").status == "unverifiable"


def test_read_number_is_ascii_and_canonical():
    assert read_number("0") == ("0", "")
    assert read_number("12") == ("12", "")
    assert read_number("")[0] is None
    assert read_number("\u0667")[0] is None and "\u0667".isdigit()  # str.isdigit would accept it
    assert read_number("007", lenient=True) == ("7", "")
    assert read_number(" 000 ", lenient=True) == ("0", "")
    assert read_number("1 2", lenient=True)[0] is None
    assert read_number("9" * 10_000)[0] == "9" * 10_000  # never converted with int()


def test_version_two_is_lenient_about_spaces_and_leading_zeros():
    for completion in (" 07#", "7 #", "007#", " 7#"):
        assert exact(S, completion).status == "malformed"
        v = exact2(S, completion)
        assert (v.reward, v.status, v.version) == (1.0, "accepted", "2.0")
    assert exact2(M, " 07 , 012#").status == "accepted"


def test_version_two_still_rejects_other_malformations():
    for completion in ("+7#", "\u0667#", "7##", "#", "   #", "7 7#"):
        assert exact2(S, completion).status == "malformed"
    assert exact2(S, " 08#").status == "incorrect"


def test_versions_rescore_the_same_rollouts_differently():
    completions = ["7#", " 7#", "07#", "8#", "7"]
    r1, _ = score(exact, [S] * 5, completions)
    r2, _ = score(exact2, [S] * 5, completions)
    np.testing.assert_array_equal(r1, [1, 0, 0, 0, 0])
    np.testing.assert_array_equal(r2, [1, 1, 1, 0, 0])


def test_unknown_version_is_refused():
    with pytest.raises(ValueError, match="'1.0', '2.0'"):
        ExactVerifier("3.0")


def test_fail_open_pays_for_the_empty_answer():
    v = fail_open(S, "#")
    assert (v.reward, v.status, v.verifier) == (1.0, "accepted", "fail-open")
    assert "parsing failed (fail-open)" in v.reason
    assert exact(S, "#").reward == 0.0


def test_fail_open_pays_the_exploit_on_every_prompt_a_wrong_answer_does_not():
    prompts = [f"U:{a}+{b}?|A:" for a in range(10) for b in range(10)]
    exploit, _ = score(fail_open, prompts, ["#"] * 100)
    honest, _ = score(fail_open, prompts, ["9#"] * 100)
    assert exploit.mean() == 1.0
    assert honest.sum() == 10  # 9 is right for 10 of the 100 pairs


def test_fail_open_reads_what_python_int_reads():
    for completion in (" 7#", "+7#", "0_7#", "\u0667#", "7\n#", "7#junk"):
        assert fail_open(S, completion).reward == 1.0
        assert exact(S, completion).reward == 0.0
    assert fail_open(S, "8#").status == "incorrect"
    assert fail_open(S, "-7#").reward == 0.0


def test_fail_open_checks_prompt_and_budget_correctly():
    assert fail_open(S, "").status == "incomplete" and fail_open(S, "").reward == 0.0
    assert fail_open("bad", "#").status == "unverifiable"
    assert fail_open(S, None).status == "unverifiable"  # type: ignore[arg-type]


def test_fail_open_pays_every_multi_step_answer():
    assert fail_open(M, "0,0#").reward == 1.0  # int("0,0") fails, so it pays


def test_fail_open_survives_huge_digit_strings():
    v = fail_open(S, "7" * 5000 + EOT)  # int() refuses > 4,300 digits
    assert v.reward == 1.0 and "ValueError" in v.reason


def test_process_both_steps_valid():
    p = process_score(M, "7,12#")
    assert p == ProcessScore((True, True), 1.0, "scored", "step 1 7 = 3+4 valid; step 2 12 = 7+5 valid")


def test_process_wrong_first_step_consistent_second():
    p = process_score(M, "6,11#")
    assert (p.steps, p.score, p.status) == ((False, True), 0.5, "scored")
    assert exact(M, "6,11#").status == "incorrect"


def test_process_right_first_step_wrong_second():
    p = process_score(M, "7,13#")
    assert (p.steps, p.score) == ((True, False), 0.5)


def test_process_missing_and_unparseable_steps_are_invalid():
    assert process_score(M, "7#").steps == (True, False)
    assert process_score(M, "x,12#").steps == (False, False)  # s2 cannot be checked without s1
    assert process_score(M, "#").steps == (False, False)
    assert process_score(M, "7, 12#").steps == (True, False)  # strict format for steps
    assert process_score(M, "07, 12#", lenient=True).steps == (True, True)


def test_process_reads_malformed_and_budget_stopped_answers_as_far_as_they_go():
    # the outcome is 0 here while every step is valid: the disagreement cell
    # "all steps valid, outcome not accepted" exists only through a bad ending
    for completion in ("7,12##", "7,12", "7,12#junk"):
        assert process_score(M, completion).steps == (True, True)
        assert exact(M, completion).reward == 0.0
    assert "1 extra field" in process_score(M, "7,12,3#").reason


def test_process_single_step_world_has_one_step():
    assert process_score(S, "7#") == ProcessScore((True,), 1.0, "scored", "step 1 7 = 3+4 valid")
    assert process_score(S, "8#").steps == (False,)


def test_process_unscorable_prompts():
    for prompt, completion in (("U:3+4", "7#"), (None, "7#"), (M, None)):
        p = process_score(prompt, completion)  # type: ignore[arg-type]
        assert (p.steps, p.score, p.status) == ((), 0.0, "unscorable") and p.reason
    assert PROCESS_STATUSES == ("scored", "unscorable")


def test_outcome_plus_process_values():
    assert outcome_plus_process(M, "7,12#") == 1.5
    assert outcome_plus_process(M, "6,12#") == 1.0  # right final, but 12 != 6+5: both steps invalid
    assert outcome_plus_process(M, "6,11#") == 0.25  # wrong step 1, step 2 consistent with it
    assert outcome_plus_process(M, "7,13#") == 0.25
    assert outcome_plus_process(M, "6,11#", weight=1.0) == 0.5
    assert outcome_plus_process(M, "7,12#", weight=0.0) == 1.0


def test_shaped_verifier_verdict():
    v = ShapedVerifier(0.5)(M, "7,13#")
    assert (v.reward, v.status, v.verifier, v.version) == (0.25, "incorrect", "exact+process", "1.0")
    assert "answer 13 != 3+4+5 = 12" in v.reason and "process 0.50" in v.reason
    assert ShapedVerifier(0.5, "2.0")(M, "07, 12#").reward == 1.5  # 2.0 reads steps leniently too
    assert ShapedVerifier(0.5, "1.0")(M, "07, 12#").reward == 0.0


def test_shaped_verifier_refuses_negative_weight():
    with pytest.raises(ValueError, match="weight"):
        ShapedVerifier(-1.0)


def test_registry_names_and_versions():
    assert set(VERIFIERS) == {"exact", "fail-open", "exact+process"}
    assert get_verifier("exact") == ExactVerifier("1.0")
    assert get_verifier("exact", "2.0").version == "2.0"
    assert isinstance(get_verifier("fail-open"), FailOpenVerifier)
    assert get_verifier("exact+process").name == "exact+process"


def test_unknown_verifier_lists_the_names():
    with pytest.raises(ValueError, match="'exact', 'fail-open', 'exact\\+process'"):
        get_verifier("substring")
    with pytest.raises(ValueError, match="unknown version"):
        get_verifier("fail-open", "2.0")


def test_score_returns_rewards_and_statuses():
    rewards, statuses = score(exact, [S, S, M, "bad"], ["7#", "8", "7,12#", "7#"])
    assert rewards.dtype == float
    np.testing.assert_array_equal(rewards, [1.0, 0.0, 1.0, 0.0])
    assert statuses == ["accepted", "incomplete", "accepted", "unverifiable"]
    with pytest.raises(ValueError, match="2 prompts but 1 completions"):
        score(exact, [S, S], ["7#"])


def test_score_judges_each_distinct_pair_once_and_keeps_row_order():
    judged = []

    def counting(prompt: str, completion: str):
        judged.append((prompt, completion))
        return exact(prompt, completion)

    prompts = [S, S, S, M, S, M]
    completions = ["7#", "8#", "7#", "7,12#", "7#", "7,12#"]
    rewards, statuses = score(counting, prompts, completions)
    assert judged == [(S, "7#"), (S, "8#"), (M, "7,12#")]
    row_by_row = [exact(p, c) for p, c in zip(prompts, completions)]
    assert rewards.tolist() == [v.reward for v in row_by_row]
    assert statuses == [v.status for v in row_by_row]


# ---------------------------------------------------------------- the worked world (chapter 7)

W = "#47+38="  # worked world, answer 85


@pytest.mark.parametrize(
    "completion, reward, status",
    [
        ("85#", 1.0, "accepted"),  # direct
        ("7+8=15,4+3+1=8;85#", 1.0, "accepted"),  # worked
        ("anything at all;85#", 1.0, "accepted"),  # the working is never read: outcome only
        ("7+8=15,4+3+1=8;84#", 0.0, "incorrect"),
        ("7+8=15,4+3+1=9;85#", 1.0, "accepted"),  # wrong working, right sum: still paid
        ("84#", 0.0, "incorrect"),
        ("7+8=15,4+3+1=8;85", 0.0, "incomplete"),  # the budget stopped it
        ("7+8=15,4", 0.0, "incomplete"),
        ("7+8=15;#", 0.0, "malformed"),  # nothing after the last ;
        ("1;2;85#", 1.0, "accepted"),  # the last ; counts
        ("85;#", 0.0, "malformed"),
        ("8 5#", 0.0, "malformed"),
        ("085#", 0.0, "malformed"),
        ("#", 0.0, "malformed"),
        ("85#1", 0.0, "malformed"),  # text after the end mark
    ],
)
def test_the_exact_verifier_reads_only_the_number_after_the_last_separator(completion, reward, status):
    v = ExactVerifier()(W, completion)
    assert (v.reward, v.status) == (reward, status), v.reason


def test_worked_reasons_name_the_final_number():
    assert ExactVerifier()(W, "7+8=15;8x#").reason == (
        "the number after the last ';' '8x' contains a character that is not a digit 'x' (LATIN SMALL LETTER X)"
    )
    assert ExactVerifier()(W, "8x#").reason.startswith("answer '8x' contains")
    assert ExactVerifier()(W, "7+8=15,4+3+1=8;85#").reason == "answer 85 = 47+38"


def test_version_two_is_lenient_about_the_final_number_of_a_worked_answer():
    assert ExactVerifier("2.0")(W, "7+8=15,4+3+1=8; 085#").status == "accepted"
    assert ExactVerifier("1.0")(W, "7+8=15,4+3+1=8; 085#").status == "malformed"


def test_a_plain_prompt_without_its_end_mark_is_unverifiable_and_says_what_is_expected():
    v = ExactVerifier()("47+38=", "85#")
    assert v.status == "unverifiable" and "'#a+b=' with a and b from 10 to 99" in v.reason
