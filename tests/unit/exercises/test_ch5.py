"""Chapter 5's exercise checks: every reference solution passes, plausible wrong answers fail with a useful message."""
from __future__ import annotations

import numpy as np
import pytest

from rlbook import record as rec
from rlbook import rewards as rw
from rlbook.core.evaluate import EvalResult
from rlbook.core.stats import difference_ci
from rlbook.core.world import Task, split
from rlbook.exercises import ch5

PLAN = {"select_on": "validation", "report_on": "test", "verifier": "exact", "verifier_version": "1.0", "n": 32,
        "temperature": 1.0, "token_budget": 4, "template": "U:a+b?|A:", "checkpoints": "all",
        "base_same_settings": True}


@pytest.mark.parametrize("change, needle", [
    ({"report_on": "train"}, "trained on"),
    ({"select_on": "test"}, "must not overlap"),
    ({"select_on": "heldout"}, "must not overlap"),
    ({"verifier": "fail-open"}, "not with one a policy can game"),
    ({"verifier_version": "latest"}, "pin one of"),
    ({"n": 0}, "positive integer"),
    ({"token_budget": 2}, "at least 3"),
    ({"template": "a+b="}, "trained with"),
    ({"checkpoints": "best"}, "'all' of them"),
    ({"base_same_settings": False}, "pre-RL policy"),
])
def test_plan_mistakes_are_named(change, needle):
    result = ch5.check_independent_evaluation(dict(PLAN, **change))
    assert not result.passed and needle in result.message


def test_plan_missing_keys_and_stub():
    result = ch5.check_independent_evaluation({"report_on": "test"})
    assert not result.passed and "'select_on'" in result.message
    assert "no answer yet" in ch5.check_independent_evaluation(None).message


def _reference_compare(after: EvalResult, before: EvalResult):
    for key in ("n", "temperature", "token_budget", "decoding", "verifier", "template"):
        if after.settings[key] != before.settings[key]:
            raise ValueError(f"{key} differs")
    if [t.operands for t in after.tasks] != [t.operands for t in before.tasks]:
        raise ValueError("different prompts")
    return tuple(difference_ci(after.per_prompt, before.per_prompt, paired=True))


def test_compare_reference_passes():
    result = ch5.check_matched_comparison(_reference_compare)
    assert result.passed, result.message


def test_compare_that_ignores_settings_fails():
    def naive(after, before):
        return tuple(difference_ci(after.per_prompt, before.per_prompt, paired=True))

    result = ch5.check_matched_comparison(naive)
    assert not result.passed and "different temperature" in result.message and "ValueError" in result.message


def test_unpaired_compare_fails_on_its_interval():
    def unpaired(after, before):
        _reference_compare(after, before)
        return tuple(difference_ci(after.per_prompt, before.per_prompt, paired=False))

    result = ch5.check_matched_comparison(unpaired)
    assert not result.passed and "paired=True" in result.message


def test_compare_wrong_direction_and_shape():
    result = ch5.check_matched_comparison(lambda after, before: _reference_compare(before, after))
    assert not result.passed and "minus" in result.message
    assert "three numbers" in ch5.check_matched_comparison(lambda a, b: 0.1).message
    assert "no answer yet" in ch5.check_matched_comparison(None).message


def test_record_fields_reference_passes():
    assert ch5.check_record_fields(list(rec.RUN_RECORD_FIELDS)).passed
    assert ch5.check_record_fields([f.replace("_", " ").upper() for f in rec.RUN_RECORD_FIELDS]).passed


def test_record_fields_from_the_source_sketch_fail_with_the_gaps():
    result = ch5.check_record_fields(["base_policy", "verifier", "advantage", "evaluations", "checkpoints"])
    assert not result.passed and "23 of 28 fields missing" in result.message
    assert "schema_version (version of this record format" in result.message


def test_record_dict_is_validated():
    record = {name: None for name in rec.RUN_RECORD_FIELDS}
    result = ch5.check_record_fields(record)
    assert not result.passed and "does not validate" in result.message
    assert "no answer yet" in ch5.check_record_fields(None).message
    assert "list of field names" in ch5.check_record_fields("run_name, seed").message


def _evaluation(rows: list[list[str]], version: str) -> EvalResult:
    tasks = [Task((3, 4)), Task((2, 5))]
    verifier = rw.ExactVerifier("1.0")
    rewards = np.array([[verifier(t.prompt, c).reward for c in row] for t, row in zip(tasks, rows)])
    statuses = [[verifier(t.prompt, c).status for c in row] for t, row in zip(tasks, rows)]
    settings = {"n": 2, "temperature": 1.0, "token_budget": 4, "decoding": "sample", "verifier": "exact@1.0",
                "template": "U:a+b?|A:", "policy_version": version}
    return EvalResult(tasks, rewards, statuses, rows, settings)


BEFORE = _evaluation([["7#", "6#"], ["07#", "1#"]], "before")  # 1.0: 1/4; 2.0: 2/4


AFTER = _evaluation([["7#", " 7#"], ["7#", "7 #"]], "after")  # 1.0: 2/4; 2.0: 4/4


def test_versioning_reference_passes():
    answer = ch5.versioning_answer(BEFORE, AFTER)
    assert answer == {"flipped": 3, "gain_same_version": 0.25, "gain_mixed": 0.75, "record_field": "verifier"}
    result = ch5.check_reward_versioning(answer, BEFORE, AFTER)
    assert result.passed and "+0.5000" in result.message


def test_versioning_mistakes_are_named():
    good = ch5.versioning_answer(BEFORE, AFTER)
    swapped = dict(good, gain_mixed=good["gain_same_version"])
    result = ch5.check_reward_versioning(swapped, BEFORE, AFTER)
    assert not result.passed and "after under 2.0, before under 1.0" in result.message
    one_side = dict(good, flipped=2)
    assert "both evaluations" in ch5.check_reward_versioning(one_side, BEFORE, AFTER).message
    field = dict(good, record_field="sampling")
    assert "names the verifier" in ch5.check_reward_versioning(field, BEFORE, AFTER).message
    assert "keys" in ch5.check_reward_versioning({"flipped": 3}, BEFORE, AFTER).message
    assert "no answer yet" in ch5.check_reward_versioning(None, BEFORE, AFTER).message
    assert ch5.check_reward_versioning(dict(good, record_field="verifier.version"), BEFORE, AFTER).passed


def test_versioning_without_flips_says_so():
    plain = _evaluation([["7#", "6#"], ["7#", "1#"]], "after")
    answer = ch5.versioning_answer(BEFORE, plain)
    assert answer["flipped"] == 1  # only BEFORE's "07#"
    quiet = ch5.versioning_answer(plain, plain)
    result = ch5.check_reward_versioning(quiet, plain, plain)
    assert result.passed and "move nothing here" in result.message


def test_random_policy_is_seeded():
    a, b = ch5.random_policy(3), ch5.random_policy(3)
    assert all((x == y).all() for x, y in zip(a.state_dict().values(), b.state_dict().values()))
    assert len(split("all")) == 100
