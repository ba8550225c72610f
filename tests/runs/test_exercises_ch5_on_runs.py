"""Chapter 5's exercise checks on the trained runs: each reference passes, plausible wrong answers fail with a
message that names the mistake."""

from __future__ import annotations

import numpy as np
import pytest

from rlbook import audit, runs
from rlbook import rewards as rw
from rlbook.exercises import abort_rule, ch5

split_reward = ch5.split_reward


def test_split_reference_passes():
    assert ch5.check_reward_split(split_reward, seed=0).passed


def test_split_trusting_the_training_verifier_fails():
    def naive(stored):
        return float(stored["rewards"].mean()), 0.0

    result = ch5.check_reward_split(naive, seed=0)
    assert not result.passed and "exact verifier accepts" in result.message


def test_a_split_that_adds_up_to_one_for_another_reason_is_not_blamed_on_the_paid_rollouts():
    def halves(stored):
        return 0.5, 0.5

    result = ch5.check_reward_split(halves, seed=0)
    assert not result.passed and "not only the paid ones" not in result.message


def test_abort_reference_passes():
    result = ch5.check_abort_rule(ch5.should_abort, seed=0)
    assert result.passed and "quiet on main" in result.message


@pytest.mark.parametrize("mistake", ch5.MISTAKES["abort-rule"])
def test_the_registered_abort_mistakes_are_named(mistake):
    result = ch5.check_abort_rule(mistake.wrong, seed=0)
    assert not result.passed and mistake.says in result.message


def test_abort_a_rule_that_reads_a_missing_loss_is_told_which_error():
    reads_loss = next(m.wrong for m in ch5.MISTAKES["abort-rule"] if ".get()" in m.says)
    assert "KeyError" in ch5.check_abort_rule(reads_loss, seed=0).message


def test_abort_a_rule_that_misses_the_exploit_fails():
    def faults_only(history):
        now = history[-1]
        return now["excluded"]

    if audit.first_hacked_seed({s: runs.load("exploit", s).rollouts for s in (0, 1, 2)}) is None:
        pytest.skip("the hack took over on none of the seeds")
    result = ch5.check_abort_rule(faults_only, seed=0)
    assert not result.passed and "never fires on 'exploit'" in result.message


def _split_with_the_library(stored):
    return audit.reward_split(stored)


def _split_by_hand(stored):
    batch = audit.from_stored(stored)
    exact = rw.get_verifier("exact")
    task = loophole = 0.0
    for prompt, completion, reward in zip(batch.prompts, batch.completions, batch.rewards):
        if exact(prompt, completion).status == "accepted":
            task += float(reward)
        else:
            loophole += float(reward)
    return [task / len(batch.rewards), loophole / len(batch.rewards)]


@pytest.mark.parametrize(
    "right", [_split_with_the_library, _split_by_hand, lambda stored: np.array(split_reward(stored))]
)
def test_split_other_correct_splits_pass(right):
    assert ch5.check_reward_split(right, seed=0).passed


@pytest.mark.parametrize(
    "wrong, hint",
    [
        *((m.wrong, m.says) for m in ch5.MISTAKES["reward-split"]),
        (lambda stored: (0.25, 0.5), "at every step checked"),
        (lambda stored: tuple(str(x) for x in split_reward(stored)), "return two numbers"),
        (lambda stored: sum(split_reward(stored)), "return two numbers"),
    ],
)
def test_split_mistakes_are_named_and_only_the_paid_ones_blamed_on_the_paid_rollouts(wrong, hint):
    result = ch5.check_reward_split(wrong, seed=0)
    assert not result.passed and hint in result.message
    assert ("divide by all the step's rollouts" in result.message) == ("paid ones" in hint)


def _abort_on_outage_or_drift(history):
    now = history[-1]
    return bool(
        now["unverifiable_rate"] > 0.1
        or now["malformed_rate"] > 0.4
        or not np.isfinite(now.get("loss", 0.0))
        or now.get("kl", 0.0) > 3.0
    )


def _largest_kl_on_main() -> tuple[int, int, float]:
    """The seed, step and value of the largest KL estimate logged on ``main`` over the book's seeds."""
    from rlbook.book import SEEDS

    logged = []
    for seed in SEEDS:
        logged += [(row["kl"], seed, row["step"]) for row in runs.load("main", seed).metrics if "kl" in row]
    kl, seed, step = max(logged)
    return seed, step, kl


def test_a_one_value_kl_rule_is_told_where_it_fires_on_main_and_what_kl_did_there():
    seed, step, kl = _largest_kl_on_main()
    run = runs.load("main", seed)
    rows = [row for row in run.metrics if "kl" in row]
    at = next(i for i, row in enumerate(rows) if row["step"] == step)
    neighbours = [row["kl"] for row in rows[max(at - 1, 0) : at] + rows[at + 1 : at + 2]]
    spike = len(neighbours) == 2 and at > 0 and kl > abort_rule.SPIKE * max(neighbours)

    def just_below_the_largest(history):
        return history[-1].get("kl", 0.0) > 0.999 * kl

    result = ch5.check_abort_rule(just_below_the_largest, seed=0)
    assert not result.passed
    assert f"healthy 'main' run (seed {seed}) at step {step} on that update's kl" in result.message
    assert ("single-step spike" in result.message) == spike
    assert "several updates in a row" in result.message


def test_an_abort_rule_is_replayed_on_main_of_every_seed_not_only_its_own():
    from rlbook.book import SEEDS

    largest = {seed: max(row.get("kl", 0.0) for row in runs.load("main", seed).metrics) for seed in SEEDS}
    others = {seed: kl for seed, kl in largest.items() if seed != 0}
    if max(others.values()) <= largest[0]:
        pytest.skip("on this draw seed 0's main logs the largest kl of the book's seeds")
    result = ch5.check_abort_rule(lambda h: h[-1].get("kl", 0.0) > largest[0], seed=0)
    assert not result.passed and "healthy 'main' run (seed " in result.message
    assert "(seed 0)" not in result.message


@pytest.mark.parametrize("right", [_abort_on_outage_or_drift, lambda h: np.bool_(ch5.should_abort(h))])
def test_abort_other_correct_rules_pass(right):
    assert ch5.check_abort_rule(right, seed=0).passed


@pytest.mark.parametrize(
    "wrong",
    [
        lambda h: "stop" if ch5.should_abort(h) else "",
        lambda h: int(ch5.should_abort(h)),
        lambda h: None if len(h) > 3 else False,
    ],
)
def test_abort_a_rule_must_answer_true_or_false(wrong):
    result = ch5.check_abort_rule(wrong, seed=0)
    assert not result.passed and "return True to abort" in result.message


def test_the_overrated_answer_the_reference_finds_passes_and_the_right_answer_or_a_low_one_fails():
    best = ch5.overrated_answer()
    assert ch5.check_overrated_answer(best).passed
    for mistake in ch5.MISTAKES["overrated-answer"]:
        result = ch5.check_overrated_answer(mistake.wrong(0))
        assert not result.passed and mistake.says in result.message
    right = ch5.check_overrated_answer(["U:3+4?|A:", "7#"])
    assert not right.passed and "right answer" in right.message


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_reference_abort_rule_passes_its_check_on_every_seed(seed):
    assert ch5.check_abort_rule(ch5.should_abort, seed=seed).passed


def test_an_abort_rule_still_returning_none_is_not_answered_yet():
    result = ch5.check_abort_rule(lambda history: None, seed=0)
    assert not result.passed and "no answer yet" in result.message
