"""Chapter 8's exercise checks on the book's runs: references pass, each defect of issue 48 is caught as it was
reported, and the mistakes a student makes get a message that names them."""

from __future__ import annotations

import numpy as np
import pytest

from rlbook import runs
from rlbook.analysis import selection as sel
from rlbook.analysis import versions
from rlbook.core.rewards import ExactVerifier
from rlbook.core.sampling import sample
from rlbook.core.world import split
from rlbook.exercises import ch8, reporting, versioning


def _test(entry):
    return sel.part_rates(entry, "test").mean()


def _validation(entry):
    return sel.part_rates(entry, "validation").mean()


def test_the_gap_reference_passes_and_reports_every_seed_beside_the_prediction():
    result = ch8.check_test_pick_gap(ch8.pick_gap, (0, 1, 2), predicted=0.05)
    assert result.passed, result.message
    for seed in (0, 1, 2):
        evals = runs.load("main", seed).evals
        by_test, by_validation = max(evals, key=_test), max(evals, key=_validation)
        assert (
            f"main, seed {seed}: the step picked on the test prompts, {by_test['step']}, scores "
            f"{_test(by_test):.3f} on them; the step picked on validation, {by_validation['step']}, scores "
            f"{_test(by_validation):.3f}"
        ) in result.message
        assert f"a gap of {_test(by_test) - _test(by_validation):+.3f}" in result.message
    assert "You predicted 0.050; the runs measured" in result.message


def test_a_gap_that_takes_the_last_validation_tie_passes():
    def latest(evals):
        best = max(_validation(e) for e in evals)
        pick = [e for e in evals if _validation(e) == best][-1]
        return max(_test(e) for e in evals) - _test(pick)

    assert ch8.check_test_pick_gap(latest, (0, 1, 2)).passed


@pytest.mark.parametrize(
    ("wrong", "says"),
    [
        # the gap to the last checkpoint is caught on the copy whose validation pick moved, whatever the seeds
        *((m.wrong, m.says) for m in ch8.MISTAKES["test-pick-gap"]),
        (lambda evals: None, "no answer yet"),
        (lambda evals: "0.02", "return one number"),
        (lambda evals: evals["step"], "pick_gap raised TypeError"),
    ],
)
def test_gap_mistakes_are_named_on_the_runs(wrong, says):
    result = ch8.check_test_pick_gap(wrong, (0, 1, 2))
    assert not result.passed and says in result.message


def test_a_constant_gap_of_zero_is_refused_on_the_runs():
    # which words it gets depends on the draw: on some seeds a named mistake also gives 0 (all the held-out prompts
    # pick the test pick, or the test pick is the last checkpoint), and a named mistake's words come first
    assert not ch8.check_test_pick_gap(lambda evals: 0.0, (0, 1, 2)).passed


def test_pick_and_score_reference_passes():
    result = ch8.check_pick_and_score(ch8.pick_and_score, seed=0)
    assert result.passed, result.message


def test_a_pick_that_takes_the_last_tie_passes():
    def latest(evals):
        best = max(sel.part_rates(e, "validation").mean() for e in evals)
        pick = [e for e in evals if sel.part_rates(e, "validation").mean() == best][-1]
        return int(pick["step"]), float(sel.part_rates(pick, "test").mean())

    assert ch8.check_pick_and_score(latest, seed=0).passed


@pytest.mark.parametrize(
    "wrong, hint",
    [
        # a pick on the test prompts is named so by either check, whichever catches it first on the draw
        *((m.wrong, m.says) for m in ch8.MISTAKES["pick-and-score"]),
        (lambda evals: (evals[-1]["step"], sel.part_rates(evals[-1], "test").mean()), "validation"),
    ],
)
def test_pick_and_score_mistakes_are_named(wrong, hint):
    result = ch8.check_pick_and_score(wrong, seed=0)
    assert not result.passed and hint in result.message


def test_a_pick_that_reads_the_test_prompts_is_caught_on_a_doctored_copy():
    """Choosing on validation + test: right on the real record whenever both agree, caught when test moves."""

    def both(evals):
        best = max(
            evals, key=lambda e: sel.part_rates(e, "heldout").mean() + 1e-3 * sel.part_rates(e, "validation").mean()
        )
        return best["step"], sel.part_rates(best, "test").mean()

    result = ch8.check_pick_and_score(both, seed=0)
    assert not result.passed and ("test" in result.message or "held-out" in result.message)


def test_pick_and_score_stub_and_junk():
    def stub(evals):
        return None

    assert "no answer yet" in ch8.check_pick_and_score(stub).message
    assert "no answer yet" in ch8.check_pick_and_score(None).message
    assert "(step, test_accuracy)" in ch8.check_pick_and_score(lambda evals: "90").message


def test_record_review_reference_passes():
    result = ch8.check_record_review(ch8.review, seed=0)
    assert result.passed, result.message


def test_a_review_that_reads_steps_completed_passes():
    """Issue 48: `steps_completed` was refused as "not a top-level field of the run record"; it is one."""

    def by_steps(record):
        return dict(ch8.review(record), finished=record["steps_completed"] == record["update"]["steps"])

    assert "steps_completed" in runs.load("main", 0).record
    result = ch8.check_record_review(by_steps, seed=0)
    assert result.passed, result.message


@pytest.mark.parametrize(
    "change, hint",
    [
        ({"not_trained_on": lambda r: r["rollouts_used"]}, "counts rollouts twice"),
        ({"finished": lambda r: "yes"}, "True or False"),
    ],
)
def test_record_review_mistakes_are_named(change, hint):
    def wrong(record):
        return dict(ch8.review(record), **{k: f(record) for k, f in change.items()})

    result = ch8.check_record_review(wrong, seed=0)
    assert not result.passed and hint in result.message


@pytest.mark.parametrize("mistake", reporting.MISTAKES["record-review"])
def test_the_registered_review_mistakes_are_named(mistake):
    result = ch8.check_record_review(mistake.wrong, seed=0)
    assert not result.passed and mistake.says in result.message


def test_record_review_reads_every_kind_of_ending():
    names = [name for name, _ in ch8.record_reviews(0)]
    statuses = {record["status"] for _, record in ch8.record_reviews(0)}
    assert "abort" in names and statuses == {"completed", "aborted", "interrupted"}
    stub = ch8.check_record_review(lambda record: None, seed=0)
    assert "no answer yet" in stub.message


def test_retained_reference_passes():
    result = ch8.check_retained_test(ch8.my_retained_test, seed=0)
    assert result.passed, result.message
    assert "before RL" in result.message and "random weights" in result.message


@pytest.mark.parametrize("mistake", reporting.MISTAKES["retained-test"])
def test_the_registered_retained_test_mistakes_are_named(mistake):
    result = ch8.check_retained_test(mistake.wrong, seed=0)
    assert not result.passed and mistake.says in result.message


def test_a_test_sampling_at_t1_without_a_seed_is_told_how_many_calls_differed():
    """Issue 48's case: a plain-format test that samples at T = 1 with no seed (it scored 0.79, 0.79, 0.75 ...)."""
    sampled = next(m.wrong for m in reporting.MISTAKES["retained-test"] if "deterministic" in m.says)
    result = ch8.check_retained_test(sampled, seed=0)
    assert not result.passed and "6 calls" in result.message


def test_retained_constant_and_broken_tests_fail():
    assert "does not measure a capability" in ch8.check_retained_test(lambda policy: 1.0, seed=0).message
    assert "[0, 1]" in ch8.check_retained_test(lambda policy: 42.0, seed=0).message
    assert "ZeroDivisionError" in ch8.check_retained_test(lambda policy: 1 / 0, seed=0).message
    assert "no answer yet" in ch8.check_retained_test(None).message


def _chat_accuracy_on_the_training_prompts(policy):
    tasks = split("train")
    texts = sample(policy, [t.prompt for t in tasks], n=1, budget=4, greedy=True).completions()
    return float(np.mean([text == f"{t.answer}#" for text, t in zip(texts, tasks)]))


def test_a_retained_test_of_what_rl_rewards_is_refused():
    result = ch8.check_retained_test(_chat_accuracy_on_the_training_prompts, seed=0)
    assert not result.passed and "chat template" in result.message and "measures the reward again" in result.message


def test_retained_other_plain_format_tests_pass():
    result = ch8.check_retained_test(lambda policy: sel.plain_equation_accuracy(policy, split("all")[:50]), seed=0)
    assert result.passed, result.message


def test_changed_advantages_reference_and_the_counts_a_student_confuses():
    right = ch8.count_changed_advantages(0)
    result = ch8.check_changed_advantages(right, seed=0)
    assert result.passed, result.message
    truth = versions.changed_advantages(runs.load("main", 0), ExactVerifier("1.0"), ExactVerifier("2.0"))
    assert right == truth["advantages"] == truth["groups"] * 16 and truth["flipped"] < right
    flipped = ch8.check_changed_advantages(truth["flipped"], seed=0)
    assert not flipped.passed and "moves its group's mean" in flipped.message
    assert not ch8.check_changed_advantages(truth["groups"], seed=0).passed  # on seed 0 as many groups as flips
    assert "whole number" in ch8.check_changed_advantages("25", seed=0).message
    assert "no answer yet" in ch8.check_changed_advantages(None).message
    for mistake in versioning.MISTAKES["changed-advantages"]:
        named = ch8.check_changed_advantages(mistake.wrong(0), seed=0)
        assert not named.passed and mistake.says in named.message


def test_a_review_that_edits_the_record_it_is_handed_cannot_change_the_grading():
    def doctoring(record):
        record["aborted_updates"].clear()  # would empty the grader's list too, were it handed the record itself
        return ch8.review(record)

    result = ch8.check_record_review(doctoring)
    assert not result.passed and "aborted" in result.message
