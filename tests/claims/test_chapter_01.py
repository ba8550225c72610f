"""Chapter 1's claims about the `base` run hold for seeds 0, 1 and 2, and its captions match the code."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rlbook import disagreement, evaluate, runs, stats, workshop, world

CHAPTER = Path(__file__).resolve().parents[2] / "chapters" / "01-rl-loop.qmd"
MAIN = runs.spec("main").rl


@pytest.fixture(scope="module", params=[0, 1, 2])
def setup(request):
    base = runs.load("base", request.param)
    policy = base.policy(step=1)
    samples = workshop.recorded_samples(base)  # raises if the re-drawn samples differ from the record
    return request.param, policy, samples, workshop.pick_workshop_sums(samples, policy)


def test_one_sum_of_each_kind(setup):
    _, _, samples, picks = setup
    rate = {t: samples.per_prompt[samples.tasks.index(t)] for t in picks.values()}
    assert rate[picks["confidently right"]] >= 0.8
    assert rate[picks["confidently wrong"]] == 0
    assert 0.2 <= rate[picks["uncertain"]] <= 0.7


def test_sft_prompts_beat_heldout(setup):
    seed, policy, samples, _ = setup
    assert evaluate.evaluate(policy, world.split("sft"), n=32, seed=seed + 1).expected_reward > samples.expected_reward


def test_most_heldout_misses_are_well_formed_wrong_sums(setup):
    _, _, samples, _ = setup
    assert disagreement.format_share(disagreement.breakdown(samples)) < 0.5


def test_the_chapters_confidently_wrong_sum_almost_never_gives_a_group_a_right_answer():
    # The chapter says so of seed 0's sum only: on another seed even the least likely of the
    # confidently wrong sums can be right often enough for many groups of 16 to hold a right answer.
    base = runs.load("base", 0)
    policy = base.policy(step=1)
    picks = workshop.pick_workshop_sums(workshop.recorded_samples(base), policy)
    p = workshop.exact_expected_reward(policy, picks["confidently wrong"])
    assert stats.prob_any_success(p, MAIN.group_size) < 0.05


def test_temperature_claims(setup):
    _, policy, _, picks = setup
    right, wrong, unsure = picks["confidently right"], picks["confidently wrong"], picks["uncertain"]
    at = workshop.exact_expected_reward
    greedy_right = evaluate.greedy_accuracy(policy, [unsure]) == 1.0
    assert (at(policy, unsure, 0.25) > at(policy, unsure, 1.0)) == greedy_right
    assert at(policy, wrong, 0.25) <= at(policy, wrong, 1.0)
    assert at(policy, right, 1.5) < at(policy, right, 1.0)


def test_spread_follows_the_binomial(setup):
    seed, policy, _, picks = setup
    spread = workshop.estimate_spread(policy, picks["uncertain"], seed=seed)
    ratio = spread.sd / spread.binomial_sd
    assert np.all((ratio > 0.6) & (ratio < 1.5))


def test_one_update_raises_the_right_answer(setup):
    seed, policy, _, picks = setup
    task = picks["uncertain"]
    demo = workshop.one_update(policy, task, group_size=MAIN.group_size, seed=seed)
    i = demo.answers.index(task.completion)
    assert demo.advantage_of(task.completion) > 0
    assert demo.after[i] > demo.before[i]
    assert demo.advantages.sum() == pytest.approx(0, abs=1e-6)


def test_captions_match_the_code():
    text = CHAPTER.read_text()
    assert "learning rate " + f"{workshop.DEMO_LR:.0e}".replace("e-0", "e-") in text
    assert f"a group of {MAIN.group_size} samples" in text
    assert f"in {workshop.N_SAMPLES} samples at temperature 1" in text
    assert f"rollouts ({MAIN.group_size} answers per prompt)" in text


def test_cooling_raises_some_heldout_sums_and_lowers_others(setup):
    _, policy, _, _ = setup
    cooled = [workshop.exact_expected_reward(policy, t, 0.25) - workshop.exact_expected_reward(policy, t, 1.0)
              for t in world.split("heldout")]
    assert any(d > 0 for d in cooled) and any(d < 0 for d in cooled)
