"""The claims chapter 5 makes about the book's runs hold for seeds 0, 1 and 2.

The chapter asserts the same things for seed 0 while it builds; these tests
call the same rlbook.analysis.selection functions for every seed. ``base``, ``main``
and ``exploit`` are loaded for all three seeds; the runs that only the record
and misconception sections use (``faults``, ``process-base``) are loaded for
seed 0 and marked slow for seeds 1 and 2.
"""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from rlbook import audit, record, rl, runs  # noqa: E402
from rlbook import rewards as rw  # noqa: E402
from rlbook import selection as sel  # noqa: E402
from rlbook.analysis.plots import figure  # noqa: E402
from rlbook.core.evaluate import evaluate  # noqa: E402
from rlbook.core.world import split  # noqa: E402

SEEDS = [0, 1, 2]
OTHER_RUN_SEEDS = [0, pytest.param(1, marks=pytest.mark.slow), pytest.param(2, marks=pytest.mark.slow)]


@pytest.mark.parametrize("seed", SEEDS)
def test_reward_hack_diverges_and_fools_the_training_reward_rule(seed):
    """Wherever the loophole took over, the rule that reads the training reward picks a worse checkpoint."""
    exploit = runs.load("exploit", seed)
    if audit.takeover_step(exploit.rollouts) is None:
        pytest.skip(f"the loophole did not take over on seed {seed} (chapter 4 checks that the detector agrees)")
    scores = sel.checkpoint_scores(exploit)
    assert scores[-1].train_reward.value > scores[0].train_reward.value + 0.1
    assert scores[-1].heldout.value < scores[0].heldout.value - 0.1
    by_reward = sel.select_checkpoint(scores, "training reward")
    by_validation = sel.select_checkpoint(scores, "validation accuracy")
    assert by_reward.heldout.value < by_validation.heldout.value


def test_the_chapters_exploit_panel_falls_by_the_first_checkpoint():
    """@fig-reward-outcome-divergence's alt text, on the seed the chapter shows (0)."""
    scores = sel.checkpoint_scores(runs.load("exploit", 0))
    assert scores[1].heldout.value < scores[0].heldout.value - 0.1 and scores[-1].train_reward.value > 0.95


@pytest.mark.parametrize("seed", SEEDS)
def test_main_reward_rises_and_exceeds_heldout_accuracy(seed):
    scores = sel.checkpoint_scores(runs.load("main", seed))
    assert scores[-1].train_reward.value > scores[0].train_reward.value
    assert scores[-1].train_reward.value > scores[-1].heldout.value
    assert scores[-1].heldout.value > scores[0].heldout.value  # the figure's alt text says both end higher
    assert [s.step for s in scores] == list(range(0, 101, 10))


@pytest.mark.parametrize("seed", SEEDS)
def test_unmatched_comparisons_inflate_the_gain(seed):
    main = runs.load("main", seed)
    pick = sel.select_checkpoint(sel.checkpoint_scores(main), "validation accuracy")
    rows = sel.comparison_rows(main.policy(0), main.policy(pick.step), split("test"), seed=seed)
    matched = rows[0]["difference"].value
    assert rows[0]["matched"] and [r["matched"] for r in rows] == [True, False, True, False, True]
    assert all(r["difference"].value > matched for r in rows if not r["matched"])


@pytest.mark.parametrize("seed", SEEDS)
def test_mixing_verifier_versions_never_deflates_the_gain(seed):
    main = runs.load("main", seed)
    pick = sel.select_checkpoint(sel.checkpoint_scores(main), "validation accuracy")
    test = split("test")
    before = evaluate(main.policy(0), test, n=32, seed=seed)
    after = evaluate(main.policy(pick.step), test, n=32, seed=seed)
    rows = {(r["before_verifier"], r["after_verifier"]): r["difference"].value for r in sel.version_rows(before, after)}
    assert rows["exact@1.0", "exact@2.0"] >= rows["exact@1.0", "exact@1.0"] >= rows["exact@2.0", "exact@1.0"]
    hacked = evaluate(runs.load("exploit", seed).policy(), test, n=32, seed=seed)
    hack = {(r["before_verifier"], r["after_verifier"]): r["difference"].value
            for r in sel.version_rows(before, hacked, (rw.ExactVerifier("1.0"), rw.FailOpenVerifier()))}
    shift = rows["exact@1.0", "exact@2.0"] - rows["exact@1.0", "exact@1.0"]
    assert hack["exact@1.0", "fail-open@1.0"] - hack["exact@1.0", "exact@1.0"] > shift  # @tbl-reward-versions
    flips = sel.training_flips(main, rw.ExactVerifier("1.0"), rw.ExactVerifier("2.0"))
    assert all(1 <= step <= 100 and count > 0 for step, count in flips.items())


@pytest.mark.parametrize("seed", SEEDS)
def test_a_checkpoint_evaluation_repeats_exactly(seed):
    main = runs.load("main", seed)
    step = main.steps[-1]
    again = rl.checkpoint_eval(main.policy(step), runs.spec("main").rl, seed, step)
    assert again["heldout_per_prompt"] == main.eval_at(step)["heldout_per_prompt"]


@pytest.mark.parametrize("seed", SEEDS)
def test_records_validate_and_their_difference_names_the_verifier(seed):
    main, exploit = runs.load("main", seed), runs.load("exploit", seed)
    record.validate(main.record)
    assert main.record["interventions"] == [] and main.record["interrupted"] is None
    diff = {k: (a, b) for k, a, b in sel.record_differences(main.record, exploit.record)}
    assert diff["verifier.name"] == ("exact", "fail-open")
    record.validate(sel.interrupted_copy(main.record, 60, "main.partial/state.pt"))


@pytest.mark.parametrize("seed", SEEDS)
def test_evaluation_report_and_retained_rows(seed):
    base, main, exploit = (runs.load(name, seed) for name in ("base", "main", "exploit"))
    retained = sel.retained_rows(base, main)
    assert [r["step"] for r in retained] == [None] + main.steps
    assert all(r["accuracy"].lo - 1e-9 <= r["accuracy"].value <= r["accuracy"].hi + 1e-9 for r in retained)
    pick = sel.select_checkpoint(sel.checkpoint_scores(main), "validation accuracy")
    report = sel.evaluation_report(main, exploit, pick, retained)
    assert [item.split(" (")[0] for item, _ in report] == [
        "training reward", "independent task outcome", "trajectory length", "token and rollout budget",
        "verifier version", "reward-hacking cases", "retained capability"]
    hacks, total = sel.reward_hack_count(exploit)
    assert 0 < hacks <= total


def test_divergence_panel_draws_both_curves():
    fig, ax = figure()
    sel.plot_divergence(ax, runs.load("main", 0), "main")
    assert len(ax.lines) >= 3 and len(ax.collections) >= 1


@pytest.mark.parametrize("seed", OTHER_RUN_SEEDS)
def test_faults_record_keeps_its_incidents(seed):
    faults = runs.load("faults", seed)
    record.validate(faults.record)
    assert faults.record["interventions"] and faults.record["aborted_updates"]
    assert faults.record["rollouts_used"] < faults.record["rollouts_before_filtering"]


@pytest.mark.parametrize("seed", OTHER_RUN_SEEDS)
def test_misconception_numbers_are_computable(seed):
    policy = runs.load("process-base", seed).policy()
    multi = evaluate(policy, split("validation", "multi"), n=16, budget=8, seed=seed)
    got = sel.process_disagreements(multi)
    assert got["accepted"] > 0 and got["rejected"] > 0
    assert 0 < got["wrong_but_consistent"] < 1
    zero, total = sel.zero_variance_rollouts(runs.load("main", seed))
    assert 0 < zero < total
