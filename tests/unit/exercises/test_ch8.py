"""Chapter 8's exercise checks without the runs: plans, comparisons and versioning, right answers in every
spelling pass and plausible wrong ones fail with a message that names the mistake."""

from __future__ import annotations

import numpy as np
import pytest

from rlbook import rewards as rw
from rlbook.analysis import selection as sel
from rlbook.core.evaluate import EvalResult
from rlbook.core.stats import difference_ci
from rlbook.core.world import Task, split
from rlbook.exercises import ch8, matched, reporting, versioning


def _evals(validation, test, train=None):
    """Checkpoint records, one per step 0, 10, ..., with every validation and every test prompt at the given rates."""
    valid, tested = sel.heldout_positions("validation"), sel.heldout_positions("test")
    entries = []
    for i, (v, t) in enumerate(zip(validation, test)):
        rates = [0.0] * (len(valid) + len(tested))
        for k in valid:
            rates[k] = v
        for k in tested:
            rates[k] = t
        entries.append({"step": 10 * i, "heldout_per_prompt": rates, "train_per_prompt": [(train or test)[i]]})
    return entries


# validation picks step 20, the test prompts step 10: the gap is 0.6 - 0.4
EVALS = _evals(validation=[0.3, 0.5, 0.7, 0.6], test=[0.2, 0.6, 0.4, 0.5], train=[0.1, 0.2, 0.3, 0.9])


def test_the_gap_is_the_test_picks_test_accuracy_minus_the_validation_picks():
    facts = ch8._gap_facts(EVALS)
    assert (facts["test_pick"], facts["validation_pick"]) == (10, 20)
    assert facts["gaps"] == [pytest.approx(0.2)]
    assert ch8.pick_gap(EVALS) == pytest.approx(0.2)


def test_a_tie_in_validation_accepts_the_gap_of_either_step():
    facts = ch8._gap_facts(_evals(validation=[0.3, 0.7, 0.7], test=[0.2, 0.6, 0.4]))
    assert facts["validation_pick"] == 10 and facts["gaps"] == [pytest.approx(0.0), pytest.approx(0.2)]


@pytest.mark.parametrize(
    ("got", "says"),
    [
        (-0.2, "wrong sign"),
        (0.6 - 0.5, "with the last checkpoint"),
        (0.7 - 0.4, "from its own validation accuracy"),
        (0.6 - 0.7, "the best validation accuracy from the best test accuracy"),
        (0.6 - 0.5 + 1e-9, "with the last checkpoint"),
        (10 - 20, "a difference of steps"),
        (0.33, "take the step with the best test accuracy"),
    ],
)
def test_the_likely_wrong_gaps_are_named(got, says):
    assert says in ch8._gap_mistake(EVALS, got)


def test_a_pick_on_the_held_out_or_training_scores_is_named():
    # the test prompts pick step 10 (0.6), validation step 20 (0.4); all the held-out prompts together pick step 30
    # (0.58) and the training reward step 0 (0.2): each gap differs from every other candidate's
    evals = _evals(
        validation=[0.3, 0.5, 0.7, 0.65, 0.2], test=[0.2, 0.6, 0.4, 0.58, 0.1], train=[0.9, 0.2, 0.3, 0.4, 0.5]
    )
    assert "all the held-out prompts" in ch8._gap_mistake(evals, 0.6 - 0.58)
    assert "training reward" in ch8._gap_mistake(evals, 0.6 - 0.2)


@pytest.mark.parametrize(
    ("answer", "predicted", "says"),
    [
        (None, None, "no answer yet"),
        (0.1, None, "must be a function"),
        (ch8.pick_gap, "small", "predict a number"),
        (ch8.pick_gap, float("nan"), "predict a number"),
        (ch8.pick_gap, [0.1], "predict a number"),
        (ch8.pick_gap, -0.05, "cannot be negative"),
    ],
)
def test_the_gap_check_refuses_a_missing_answer_or_prediction_before_reading_a_run(answer, predicted, says):
    result = ch8.check_test_pick_gap(answer, seeds=(), predicted=predicted)
    assert not result.passed and says in result.message


def _reference_compare(after: EvalResult, before: EvalResult):
    for key in ("n", "temperature", "token_budget", "decoding", "verifier", "template"):
        if after.settings[key] != before.settings[key]:
            raise ValueError(f"{key} differs")
    if [t.operands for t in after.tasks] != [t.operands for t in before.tasks]:
        raise ValueError("different prompts")
    return tuple(difference_ci(after.per_prompt, before.per_prompt, paired=True))


def test_compare_reference_passes():
    result = ch8.check_matched_comparison(_reference_compare)
    assert result.passed, result.message


@pytest.mark.parametrize("mistake", matched.MISTAKES)
def test_the_registered_comparison_mistakes_are_named(mistake):
    result = ch8.check_matched_comparison(mistake.wrong)
    assert not result.passed and mistake.says in result.message


def test_compare_wrong_direction_and_shape():
    result = ch8.check_matched_comparison(lambda after, before: _reference_compare(before, after))
    assert not result.passed and "minus" in result.message
    assert "three numbers" in ch8.check_matched_comparison(lambda a, b: 0.1).message
    assert "no answer yet" in ch8.check_matched_comparison(None).message


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
    assert ch8.check_matched_comparison(right).passed


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


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (
            _checked_then(lambda a, b: difference_ci(a.rewards.ravel(), b.rewards.ravel(), paired=False)),
            "every sample as independent",
        ),
        (_ignoring("prompts"), "different prompts"),
        (_ignoring("decoding"), "different decoding"),
        (_ignoring("template"), "different template"),
        (_checked_then(lambda a, b: (float(a.per_prompt.mean() - b.per_prompt.mean()), 0.0, 0.0)), "does not contain"),
    ],
)
def test_comparison_mistakes_are_named(wrong, hint):
    result = ch8.check_matched_comparison(wrong)
    assert not result.passed and hint in result.message


@pytest.mark.parametrize(
    "junk, hint",
    [
        ("compare", "must be a function"),
        (lambda a, b: "0.1, 0, 0.2", "three numbers"),
        (lambda a, b: (0.1, float("nan"), 0.2), "three numbers"),
        (lambda a, b: None, "three numbers"),
    ],
)
def test_comparison_junk_gets_a_message(junk, hint):
    result = ch8.check_matched_comparison(junk)
    assert not result.passed and hint in result.message


def _evaluation(rows: list[list[str]], version: str) -> EvalResult:
    tasks = [Task((3, 4)), Task((2, 5))]
    verifier = rw.ExactVerifier("1.0")
    rewards = np.array([[verifier(t.prompt, c).reward for c in row] for t, row in zip(tasks, rows)])
    statuses = [[verifier(t.prompt, c).status for c in row] for t, row in zip(tasks, rows)]
    settings = {
        "n": 2,
        "temperature": 1.0,
        "token_budget": 4,
        "decoding": "sample",
        "verifier": "exact@1.0",
        "template": "U:a+b?|A:",
        "policy_version": version,
    }
    return EvalResult(tasks, rewards, statuses, rows, settings)


BEFORE = _evaluation([["7#", "6#"], ["07#", "1#"]], "before")  # 1.0: 1/4; 2.0: 2/4
AFTER = _evaluation([["7#", "7#"], ["7#", "1#"]], "after")  # no flips at all, like the book's seed 0


def test_versioning_reference_worked_by_hand():
    answer = ch8.versioning(BEFORE, _evaluation([["7#", " 7#"], ["7#", "7 #"]], "after"))
    assert answer == {"flipped": 3, "gain_same_version": 0.25, "gain_mixed": 0.75, "record_field": "verifier"}


def _versioning_by_hand(before, after):
    v1, v2 = rw.ExactVerifier("1.0"), rw.ExactVerifier("2.0")

    def mean(result, verifier):
        return float(
            np.mean([verifier(t.prompt, c).reward for t, row in zip(result.tasks, result.completions) for c in row])
        )

    def flips(result):
        return sum(
            v1(t.prompt, c).reward != v2(t.prompt, c).reward
            for t, row in zip(result.tasks, result.completions)
            for c in row
        )

    return {
        "flipped": flips(before) + flips(after),
        "gain_same_version": mean(after, v1) - mean(before, v1),
        "gain_mixed": mean(after, v2) - mean(before, v1),
        "record_field": "verifier.version",
    }


@pytest.mark.parametrize(
    "right",
    [
        ch8.versioning,
        _versioning_by_hand,
        lambda b, a: dict(
            ch8.versioning(b, a), flipped=float(ch8.versioning(b, a)["flipped"]), record_field="Verifier"
        ),
    ],
)
def test_versioning_functions_pass(right):
    result = ch8.check_reward_versioning(right, BEFORE, AFTER)
    assert result.passed, result.message


def _wrong(**change):
    def versioning(before, after):
        good = ch8.versioning(before, after)
        return dict(good, **{k: (v(before, after, good) if callable(v) else v) for k, v in change.items()})

    return versioning


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (_wrong(flipped=0, gain_mixed=lambda b, a, g: g["gain_same_version"]), "flipped: count the samples"),
        (_wrong(gain_mixed=lambda b, a, g: ch8.versioning(a, b)["gain_mixed"] * -1), "after under 2.0"),
        (_wrong(flipped=lambda b, a, g: g["flipped"] / (b.rewards.size + a.rewards.size)), "not a share"),
        (lambda b, a: ch8.versioning(a, a), "flipped"),
        (lambda b, a: ch8.versioning(b, b), "flipped"),
        (_wrong(record_field="sampling"), "names the verifier"),
        (_wrong(flipped="5"), "not a share, not text"),
    ],
)
def test_versioning_mistakes_are_caught_on_the_constructed_cases(wrong, hint):
    result = ch8.check_reward_versioning(wrong, BEFORE, AFTER)
    assert not result.passed and hint in result.message


@pytest.mark.parametrize("mistake", versioning.MISTAKES["reward-versioning"])
def test_the_registered_versioning_mistakes_are_named(mistake):
    result = ch8.check_reward_versioning(mistake.wrong, BEFORE, AFTER)
    assert not result.passed and mistake.says in result.message


def test_wrong_functions_fail_even_where_the_chapters_evaluations_have_no_flips():
    def zeros(before, after):
        return {"flipped": 0, "gain_same_version": 0.0, "gain_mixed": 0.0, "record_field": "verifier"}

    def same_twice(before, after):
        return ch8.versioning(after, after)

    for wrong in (zeros, same_twice, _wrong(gain_mixed=lambda b, a, g: g["gain_same_version"])):
        result = ch8.check_reward_versioning(wrong, AFTER, AFTER)
        assert not result.passed and "constructed case" in result.message


@pytest.mark.parametrize(
    "answer, hint",
    [
        (ch8.versioning(BEFORE, AFTER), "as a function"),
        ("verifier", "must be a function"),
        (lambda b, a: None, "return a dict"),
        (lambda b, a: {"flipped": 3}, "return a dict"),
    ],
)
def test_versioning_junk_gets_a_message(answer, hint):
    result = ch8.check_reward_versioning(answer, BEFORE, AFTER)
    assert not result.passed and hint in result.message
    assert "before_eval and after_eval" in ch8.check_reward_versioning(ch8.versioning, None, []).message
    assert "no answer yet" in ch8.check_reward_versioning(None, BEFORE, AFTER).message


def test_random_policy_is_seeded():
    a, b = reporting.random_policy(3), reporting.random_policy(3)
    assert all((x == y).all() for x, y in zip(a.state_dict().values(), b.state_dict().values()))
    assert len(split("all")) == 100


def test_checker_docstrings_use_the_chapters_numbering():
    """Issue 48: the docstrings said "exercise 10", "Exercise 16"; every one now names Exercise 8.k."""
    import inspect
    import re

    for module in (ch8, matched, reporting, versioning):
        text = inspect.getsource(module)
        assert not re.search(r"[Ee]xercises? (?:[1-9]|1[0-6])\b(?!\.)", text), module.__name__
        assert "Exercise 8." in text


@pytest.fixture
def counted(monkeypatch):
    """check_changed_advantages on made-up counts: 30 changed rewards in 25 groups of 16."""
    from types import SimpleNamespace

    monkeypatch.setattr(
        versioning.runs, "load", lambda name, seed: SimpleNamespace(record={"sampling": {"group_size": 16}})
    )
    monkeypatch.setattr(versioning, "_changed", lambda main, seed: {"flipped": 30, "groups": 25, "advantages": 400})


@pytest.mark.parametrize(
    "answer, passed, hint",
    [
        (400, True, "400 advantages"),
        (400.0, True, "400 advantages"),
        (30, False, "moves its group's mean"),
        (25, False, "counts groups; the question asks for rollouts, and each group holds 16"),
        (16, False, "is not it"),
        ("400", False, "whole number"),
        (None, False, "no answer yet"),
    ],
)
def test_changed_advantages_names_what_a_wrong_count_counts(counted, answer, passed, hint):
    result = ch8.check_changed_advantages(answer, seed=0)
    assert result.passed is passed and hint in result.message


@pytest.mark.parametrize("spelling", ["exact@1.0", "exact 1.0", "Exact@1.0", "ExactVerifier@1.0", "exact verifier 1.0"])
def test_the_review_reads_a_verifier_in_any_spelling(spelling):
    from rlbook.exercises.reporting import _verifier_words

    assert _verifier_words(spelling) == "exact 1.0"
    assert _verifier_words("FailOpenVerifier@1.0") == "fail-open 1.0"
