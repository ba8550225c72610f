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


@pytest.mark.parametrize("change, needle", [
    ({"report_on": ["test", "train"]}, "trained on"),
    ({"select_on": ["validation"], "report_on": ("validation", "test")}, "must not overlap"),
    ({"verifier": "exact@2.0"}, "two different versions"),
    ({"verifier": "fail-open@1.0"}, "not with one a policy can game"),
    ({"n": 32.5}, "positive integer"), ({"n": True}, "positive integer"), ({"n": "32"}, "positive integer"),
    ({"token_budget": 64}, f"at most {ch5.max_token_budget()}"),
    ({"temperature": "1.0"}, "temperature > 0"), ({"temperature": float("inf")}, "temperature > 0"),
    ({"checkpoints": [10, 20]}, "'all' of them"), ({"checkpoints": None}, "'all' of them"),
    ({"base_same_settings": "yes"}, "pre-RL policy"),
    ({"report_on": None}, "name a split"), ({"report_on": []}, "name a split"),
    ({"report_on": "testing"}, "is not a split"),
])
def test_more_plan_mistakes_are_named(change, needle):
    result = ch5.check_independent_evaluation(dict(PLAN, **change))
    assert not result.passed and needle in result.message


@pytest.mark.parametrize("plan", [[PLAN], "plan", 3])
def test_a_plan_that_is_not_a_dict_gets_a_message(plan):
    result = ch5.check_independent_evaluation(plan)
    assert not result.passed and "must be a dict" in result.message


def test_a_list_of_every_checkpoint_counts_as_all():
    steps = ch5.main_checkpoint_steps()
    assert steps[0] == 0 and steps[-1] == 100 and len(steps) == 11
    assert not ch5._plan_problems(dict(PLAN, checkpoints=steps))
    assert not ch5._plan_problems(dict(PLAN, checkpoints=[float(s) for s in steps]))
    assert not ch5._plan_problems(dict(PLAN, report_on=["test"], n=32.0, verifier="exact@1.0", checkpoints="ALL"))


def test_the_largest_token_budget_fits_the_context():
    from rlbook.core.policy import PolicyConfig
    assert ch5.max_token_budget() == PolicyConfig().block_size + 1 - len(Task((3, 4)).prompt)


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


def _compare_by_normal_approximation(after, before):
    _reference_compare(after, before)
    d = after.per_prompt - before.per_prompt
    half = 1.96 * d.std(ddof=1) / np.sqrt(d.size)
    return [d.mean(), d.mean() - half, d.mean() + half]


def _compare_with_another_bootstrap(after, before):
    _reference_compare(after, before)
    est = difference_ci(after.per_prompt, before.per_prompt, paired=True, n_boot=4000, seed=123)
    return np.array([est.value, est.lo, est.hi])


@pytest.mark.parametrize("right", [_compare_by_normal_approximation, _compare_with_another_bootstrap])
def test_other_correct_comparisons_pass(right):
    assert ch5.check_matched_comparison(right).passed


def _checked_then(interval):
    def compare(after, before):
        _reference_compare(after, before)
        return tuple(interval(after, before))
    return compare


def _ignoring(*skipped):
    def compare(after, before):
        for key in ("n", "temperature", "token_budget", "decoding", "verifier", "template"):
            if key not in skipped and after.settings[key] != before.settings[key]:
                raise ValueError(key)
        if "prompts" not in skipped and [t.operands for t in after.tasks] != [t.operands for t in before.tasks]:
            raise ValueError("prompts")
        return tuple(difference_ci(after.per_prompt, before.per_prompt, paired=True))
    return compare


@pytest.mark.parametrize("wrong, hint", [
    (_checked_then(lambda a, b: difference_ci(a.per_prompt, b.per_prompt, level=0.9)), "90 % interval"),
    (_checked_then(lambda a, b: difference_ci(a.rewards.ravel(), b.rewards.ravel(), paired=False)),
     "every sample as independent"),
    (_checked_then(lambda a, b: difference_ci(a.rewards.ravel(), b.rewards.ravel(), paired=True)),
     "every sample as independent"),
    (_ignoring("prompts"), "different prompts"),
    (_ignoring("decoding"), "different decoding"),
    (_ignoring("template"), "different template"),
    (_checked_then(lambda a, b: (float(a.per_prompt.mean() - b.per_prompt.mean()), 0.0, 0.0)), "does not contain"),
])
def test_comparison_mistakes_are_named(wrong, hint):
    result = ch5.check_matched_comparison(wrong)
    assert not result.passed and hint in result.message


@pytest.mark.parametrize("junk, hint", [
    ("compare", "must be a function"), (lambda a, b: "0.1, 0, 0.2", "three numbers"),
    (lambda a, b: (0.1, float("nan"), 0.2), "three numbers"), (lambda a, b: None, "three numbers"),
])
def test_comparison_junk_gets_a_message(junk, hint):
    result = ch5.check_matched_comparison(junk)
    assert not result.passed and hint in result.message


GROUPED = {q: [f for f, fq in ch5.FIELD_QUESTION.items() if fq == q] for q in ch5.RECORD_QUESTIONS}


def test_every_required_field_has_a_question():
    assert set(ch5.FIELD_QUESTION) == set(rec.RUN_RECORD_FIELDS)
    assert set(ch5.FIELD_QUESTION.values()) == set(ch5.RECORD_QUESTIONS)


def test_record_fields_grouped_pass_in_several_spellings():
    assert ch5.check_record_fields(GROUPED).passed
    spaced = {q.upper(): [f.replace("_", " ").title() for f in fs] for q, fs in GROUPED.items()}
    assert ch5.check_record_fields(spaced).passed
    dotted = {q: tuple(f"{f}.value" if f == "update" else f for f in fs) for q, fs in GROUPED.items()}
    assert ch5.check_record_fields(dotted).passed


def test_record_fields_from_the_prose_pass_without_the_bookkeeping():
    prose = {q: [f for f in fs if f not in ch5.BOOKKEEPING] for q, fs in GROUPED.items()}
    result = ch5.check_record_fields(prose)
    assert result.passed and "would complete the identity" in result.message


@pytest.mark.parametrize("answer", [list(rec.RUN_RECORD_FIELDS), tuple(rec.RUN_RECORD_FIELDS),
                                    dict.fromkeys(rec.RUN_RECORD_FIELDS)])
def test_a_copied_list_of_keys_is_asked_to_be_grouped(answer):
    result = ch5.check_record_fields(answer)
    assert not result.passed
    assert "group the fields" in result.message or "not one of the questions" in result.message


def test_missing_fields_are_described_not_named():
    gaps = {q: fs[:1] for q, fs in GROUPED.items()}
    result = ch5.check_record_fields(gaps)
    assert not result.passed and "field(s) missing" in result.message
    named = [f for fs in GROUPED.values() for f in fs[1:] if "_" in f and f not in ch5.BOOKKEEPING]
    assert named and not any(f in result.message for f in named)
    assert "rejected (what was rejected, failed or interrupted?) lacks 5" in result.message


def test_a_field_under_the_wrong_question_is_named():
    moved = {q: list(fs) for q, fs in GROUPED.items()}
    moved["reward"].remove("verifier")
    moved["outcome"].append("verifier")
    result = ch5.check_record_fields(moved)
    assert not result.passed and "'verifier' is under 'outcome'" in result.message


@pytest.mark.parametrize("answer, hint", [
    ({"identity": ["run_name", "wandb_url"]}, "not a top-level field"),
    ({"who": ["run_name"]}, "not one of the questions"),
    ({"identity": "run_name, seed"}, "give a list of field names"),
    ("run_name, seed", "group the fields"),
    (42, "group the fields"),
    ({None: [1, 2]}, "not one of the questions"),
])
def test_record_fields_junk_gets_a_message(answer, hint):
    result = ch5.check_record_fields(answer)
    assert not result.passed and hint in result.message
    assert "no answer yet" in ch5.check_record_fields(None).message


def _evaluation(rows: list[list[str]], version: str) -> EvalResult:
    tasks = [Task((3, 4)), Task((2, 5))]
    verifier = rw.ExactVerifier("1.0")
    rewards = np.array([[verifier(t.prompt, c).reward for c in row] for t, row in zip(tasks, rows)])
    statuses = [[verifier(t.prompt, c).status for c in row] for t, row in zip(tasks, rows)]
    settings = {"n": 2, "temperature": 1.0, "token_budget": 4, "decoding": "sample", "verifier": "exact@1.0",
                "template": "U:a+b?|A:", "policy_version": version}
    return EvalResult(tasks, rewards, statuses, rows, settings)


BEFORE = _evaluation([["7#", "6#"], ["07#", "1#"]], "before")  # 1.0: 1/4; 2.0: 2/4
AFTER = _evaluation([["7#", "7#"], ["7#", "1#"]], "after")  # no flips at all, like the book's seed 0


def test_versioning_reference_worked_by_hand():
    answer = ch5.versioning_answer(BEFORE, _evaluation([["7#", " 7#"], ["7#", "7 #"]], "after"))
    assert answer == {"flipped": 3, "gain_same_version": 0.25, "gain_mixed": 0.75, "record_field": "verifier"}


def _versioning_by_hand(before, after):
    v1, v2 = rw.ExactVerifier("1.0"), rw.ExactVerifier("2.0")

    def mean(result, verifier):
        return float(np.mean([verifier(t.prompt, c).reward for t, row in zip(result.tasks, result.completions)
                              for c in row]))

    def flips(result):
        return sum(v1(t.prompt, c).reward != v2(t.prompt, c).reward
                   for t, row in zip(result.tasks, result.completions) for c in row)

    return {"flipped": flips(before) + flips(after), "gain_same_version": mean(after, v1) - mean(before, v1),
            "gain_mixed": mean(after, v2) - mean(before, v1), "record_field": "verifier.version"}


@pytest.mark.parametrize("right", [ch5.versioning_answer, _versioning_by_hand,
                                   lambda b, a: dict(ch5.versioning_answer(b, a), flipped=float(
                                       ch5.versioning_answer(b, a)["flipped"]), record_field="Verifier")])
def test_versioning_functions_pass(right):
    result = ch5.check_reward_versioning(right, BEFORE, AFTER)
    assert result.passed, result.message


def _wrong(**change):
    def versioning(before, after):
        good = ch5.versioning_answer(before, after)
        return dict(good, **{k: (v(before, after, good) if callable(v) else v) for k, v in change.items()})
    return versioning


@pytest.mark.parametrize("wrong, hint", [
    (_wrong(flipped=0, gain_mixed=lambda b, a, g: g["gain_same_version"]), "flipped: count the samples"),
    (_wrong(gain_mixed=lambda b, a, g: ch5.versioning_answer(a, b)["gain_mixed"] * -1), "after under 2.0"),
    (_wrong(flipped=lambda b, a, g: g["flipped"] / (b.rewards.size + a.rewards.size)), "not a share"),
    (lambda b, a: ch5.versioning_answer(a, a), "flipped"),
    (lambda b, a: ch5.versioning_answer(b, b), "flipped"),
    (_wrong(record_field="sampling"), "names the verifier"),
    (_wrong(flipped="5"), "not a share, not text"),
])
def test_versioning_mistakes_are_caught_on_the_constructed_cases(wrong, hint):
    result = ch5.check_reward_versioning(wrong, BEFORE, AFTER)
    assert not result.passed and hint in result.message


def test_wrong_functions_fail_even_where_the_chapters_evaluations_have_no_flips():
    def zeros(before, after):
        return {"flipped": 0, "gain_same_version": 0.0, "gain_mixed": 0.0, "record_field": "verifier"}

    def same_twice(before, after):
        return ch5.versioning_answer(after, after)

    for wrong in (zeros, same_twice, _wrong(gain_mixed=lambda b, a, g: g["gain_same_version"])):
        result = ch5.check_reward_versioning(wrong, AFTER, AFTER)
        assert not result.passed and "constructed case" in result.message


@pytest.mark.parametrize("answer, hint", [
    (ch5.versioning_answer(BEFORE, AFTER), "as a function"), ("verifier", "must be a function"),
    (lambda b, a: None, "return a dict"), (lambda b, a: {"flipped": 3}, "return a dict"),
])
def test_versioning_junk_gets_a_message(answer, hint):
    result = ch5.check_reward_versioning(answer, BEFORE, AFTER)
    assert not result.passed and hint in result.message
    assert "before_eval and after_eval" in ch5.check_reward_versioning(ch5.versioning_answer, None, []).message
    assert "no answer yet" in ch5.check_reward_versioning(None, BEFORE, AFTER).message


def test_random_policy_is_seeded():
    a, b = ch5.random_policy(3), ch5.random_policy(3)
    assert all((x == y).all() for x, y in zip(a.state_dict().values(), b.state_dict().values()))
    assert len(split("all")) == 100


def test_versioning_why_is_a_pick_among_stated_reasons():
    assert ch5.check_versioning_why("d").passed and ch5.check_versioning_why("(D)").passed
    for wrong, hint in (("a", "same prompts"), ("b", "re-scored"), ("c", "no sampling noise")):
        result = ch5.check_versioning_why(wrong)
        assert not result.passed and hint in result.message
    assert all(f"({k})" in ch5.check_versioning_why(None).message for k in ch5.VERSIONING_WHY)
    for junk in ("e", 4, None.__class__, ["d"]):
        assert not ch5.check_versioning_why(junk).passed
