"""rlbook.analysis.credit: chapters 3 and 4's measurements, on a small in-memory run and on values worked by hand."""

from __future__ import annotations

import copy
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from rlbook import credit
from rlbook.core.policy import Checkpoint, Policy
from rlbook.core.rl import Batch, RLConfig
from rlbook.core.rl import credit as run_credit
from rlbook.core.runlog import store
from rlbook.core.sampling import Rollouts, sample
from rlbook.core.world import split
from rlbook.runs import RUNS, Run


def tiny_run(group_size: int = 4, prompts: int = 3) -> Run:
    """A fake ``main`` run: a random policy's batch at step 1 and checkpoints 0 and 10 (10 = perturbed weights)."""
    torch.manual_seed(0)
    policy = Policy()
    policy.version = "main@0"
    tasks = split("train")[:prompts]
    rollouts = sample(policy, [t.prompt for t in tasks], n=group_size, generator=torch.Generator().manual_seed(1))
    rewards = np.array([1.0, 0, 0, 0, 1, 1, 0, 0, 1, 1, 1, 1][: len(rollouts)])
    statuses = ["accepted" if r else "incorrect" for r in rewards]
    cfg = RLConfig(group_size=group_size)
    advantages, used = run_credit(cfg, rewards, statuses)
    later = copy.deepcopy(policy)
    with torch.no_grad():
        for p in later.parameters():
            p.add_(0.05 * torch.randn_like(p))
    log = {
        "rollouts": [store(Batch(1, rollouts, rewards, statuses, advantages, used))],
        "checkpoints": [
            {"step": 0, "checkpoint": Checkpoint.of(policy, "main@0")},
            {"step": 10, "checkpoint": Checkpoint.of(later, "main@10")},
        ],
        "metrics": [],
        "evals": [],
    }
    run = Run("main", 0, 2, {}, log, Path("."))
    run.extra["rollouts"] = rollouts
    return run


@pytest.fixture(scope="module")
def run() -> Run:
    return tiny_run()


def test_recorded_batch_rebuilds_the_step(run):
    batch = credit.recorded_batch(run, 1)
    original: Rollouts = run.extra["rollouts"]
    assert torch.equal(batch.rollouts.tokens, original.tokens)
    assert torch.equal(batch.rollouts.mask, original.mask)
    assert torch.allclose(batch.rollouts.logprobs, original.logprobs)
    assert batch.rollouts.prompts == original.prompts
    assert batch.rollouts.group_size == 4
    # Advantages derived again from the recorded rewards: [1,0,0,0] -> 0.75, -0.25 ...
    assert torch.allclose(batch.advantages[:4], torch.tensor([0.75, -0.25, -0.25, -0.25]))
    assert torch.allclose(batch.advantages[8:], torch.zeros(4))
    with pytest.raises(ValueError, match="no rollouts for step 2"):
        credit.recorded_batch(run, 2)


def test_sampling_checkpoint_reads_the_policy_version(run):
    batch = credit.recorded_batch(run, 1)
    assert credit.sampling_checkpoint(run, batch) == 0
    batch.rollouts.policy_version = "main@3"
    with pytest.raises(ValueError, match="was not saved"):
        credit.sampling_checkpoint(run, batch)


def test_record_and_credit_are_separate_structures(run):
    batch = credit.recorded_batch(run, 1)
    record, credit_rows = credit.record_and_credit(batch, 0)
    n = int(batch.rollouts.lengths[0])
    assert len(record) == n
    assert [r["token_id"] for r in record] == batch.rollouts.tokens[0, :n].tolist()
    assert all(r["policy_version"] == "main@0" for r in record)
    assert len(credit_rows) == batch.rollouts.tokens.shape[1]
    assert [c["advantage"] for c in credit_rows[:n]] == [0.75] * n
    assert all(c["advantage"] == 0 and not c["trained"] for c in credit_rows[n:])


def test_logprob_drift_same_policy_is_rounding_only(run):
    drift = credit.logprob_drift(run, 1, later=10)
    assert drift["same_max_abs"] < 1e-4
    assert drift["later_mean_abs"] > 1e-3
    assert 0 <= drift["later_outside_ppo"] <= 1
    assert drift["tokens"] == int(run.extra["rollouts"].mask.sum())


def test_group_scale_table_by_hand(run):
    rows = {r["right answers k"]: r for r in credit.group_scale_table(credit.recorded_batch(run, 1))}
    assert set(rows) == {1, 2, 4}
    assert math.isclose(rows[1]["centred (right)"], 0.75, abs_tol=1e-6)
    assert math.isclose(rows[1]["centred (wrong)"], -0.25, abs_tol=1e-6)
    # std of [1,0,0,0] is sqrt(3/16) = 0.433: 0.75 / 0.433 = 1.732
    assert math.isclose(rows[1]["std-normalised (right)"], math.sqrt(3), rel_tol=1e-4)
    assert math.isclose(rows[2]["std-normalised (wrong)"], -1.0, rel_tol=1e-4)
    assert rows[4]["centred (right)"] == 0 and rows[4]["centred (wrong)"] is None


def test_mixed_groups_and_rows(run):
    batch = credit.recorded_batch(run, 1)
    assert credit.mixed_groups(batch) == [0, 1]
    rows = credit.group_rows(batch, 0, per_reward=2)
    assert rows[0] == 0 and all(4 > r > 0 for r in rows[1:])
    assert len(rows) <= 3


def test_ratio_drift_statistics_are_consistent(run):
    drift = credit.ratio_drift(run, 1, updates=2)
    tokens = int(run.extra["rollouts"].mask.sum())
    assert len(drift.ratios) == 2 and all(len(r) == tokens for r in drift.ratios)
    assert len(drift.advantages) == tokens
    for k in range(2):
        assert 0 <= drift.ppo_clipped[k] <= drift.outside_ppo[k] <= 1
        above = float((drift.ratios[k] > drift.cap).mean())
        assert math.isclose(drift.cispo_capped[k], above, abs_tol=1e-6)
    assert not np.allclose(drift.ratios[0], 1.0)


def test_scale_effect_adam_nearly_cancels_a_constant_factor(run):
    effect = credit.scale_effect(run, scale=10.0)
    assert math.isclose(effect["sgd_norm_ratio"], 10.0, rel_tol=1e-3)
    assert effect["sgd_cosine"] > 0.999
    assert abs(effect["adam_norm_ratio"] - 1.0) < 0.05
    assert effect["adam_cosine"] > 0.99


def test_ratio_histogram_counts_every_token_by_its_advantage_sign(run):
    drift = credit.ratio_drift(run, 1, updates=1)
    bins = np.linspace(-0.01, 0.01, 5)  # narrower than the ratios: the outer bins take the rest
    counts = drift.histogram(1, bins)
    assert sum(counts["positive"]) == int((drift.advantages > 0).sum())
    assert sum(counts["negative"]) == int((drift.advantages < 0).sum())


def test_token_credit_rows_give_each_generated_character_its_answers_advantage(run):
    batch = credit.recorded_batch(run, 1)
    rows = credit.token_credit_rows(batch, [0, 1])
    first = rows[0]
    assert first["prompt"] == batch.rollouts.prompts[0] and first["reward"] == 1.0 and first["group_size"] == 4
    assert "".join(first["tokens"]) == batch.rollouts.completions()[0]
    assert first["advantages"] == [0.75] * len(first["tokens"])
    assert rows[1]["advantages"] == [-0.25] * len(rows[1]["tokens"])
    texts = batch.rollouts.completions()[:4]
    assert first["copies"] == texts.count(texts[0])


def test_the_comparison_is_declared_once_and_the_rest_derives_from_it():
    assert credit.COMPARED[0] == "main" and len(set(credit.COMPARED)) == len(credit.COMPARED)
    assert set(credit.COMPARED) == {"main", *(r for group in credit.COMPARISON.values() for r in group)}
    assert credit.DISGUISES == credit.COMPARISON["rounding only"]
    assert credit.REUSED == tuple(r for r in credit.COMPARED if RUNS[r].rl.updates_per_batch > 1)
    panels = credit.panels()
    assert list(panels) == list(credit.COMPARISON)
    assert all(names[0] == "main" and names[1:] == credit.COMPARISON[q] for q, names in panels.items())
    assert all(len(names) <= 5 for names in panels.values())  # a panel of at most five series
    settings = {row["run"]: row for row in credit.settings_table()}
    assert list(settings) == list(credit.COMPARED)
    assert settings["ppo"]["updates"] == 4 and settings["ppo-kl"]["KL β"] == "0.1 (k3)"


def test_process_rows_name_every_credit(run):
    group = credit.ProcessGroup(
        "U:3+4+5?|A:",
        ["7,12#", "7,11#"],
        np.array([1.0, 0.0]),
        np.array([0.5, -0.5]),
        np.array([[1.0, 1.0], [1.0, 0.0]]),
        np.array([[0.0, 0.5], [0.0, -0.5]]),
    )
    rows = credit.process_rows(group)
    assert rows[1] == {
        "row": 1,
        "answer": "7,11#",
        "reward": 0.0,
        "A outcome": -0.5,
        "step 1 ok": 1,
        "A step 1": 0.0,
        "step 2 ok": 0,
        "A step 2": -0.5,
    }
    data = group.as_data()
    assert data["completions"] == ["7,12#", "7,11#"] and data["step_adv"] == [[0.0, 0.5], [0.0, -0.5]]


def test_token_steps_and_split_credit_by_hand():
    assert credit.token_steps("7,12#", 2) == [0, 0, 1, 1, 1]
    assert credit.token_steps("7,12,3#", 2) == [0, 0, 1, 1, 1, 1, 1]
    assert credit.token_steps("13#", 2) == [0, 0, 0]
    got = credit.split_credit("7,11#", -0.25, [0.5, -0.25])
    assert got["outcome"] == [-0.25] * 5
    assert got["process"] == [0.5, 0.5, -0.25, -0.25, -0.25]


def test_balanced_group(run):
    # groups: 1/4, 2/4 and 4/4 right: the second is closest to one half
    assert credit.balanced_group(credit.recorded_batch(run, 1)) == 1


def test_gradient_variance_is_quadratic_in_the_offset():
    base = Policy()
    torch.manual_seed(3)
    prompts = [t.prompt for t in split("train")[:2]]
    result = credit.gradient_variance(base, prompts, group_size=4, repeats=3, offsets=(-1.0, 0.0, 1.0, 2.0))
    v = result.no_baseline
    # V(c) = a + 2bc + dc^2: equal second differences on an even grid, minimum at -b/d.
    assert math.isclose(v[2] - 2 * v[1] + v[0], v[3] - 2 * v[2] + v[1], rel_tol=1e-6)
    d = (v[2] - 2 * v[1] + v[0]) / 2
    b = (v[2] - v[0]) / 4
    assert math.isclose(result.best_offset, -b / d, rel_tol=1e-5, abs_tol=1e-8)
    assert result.rollouts_per_estimate == 8 and result.repeats == 3


def aborted_run() -> Run:
    """A fake run that the guard stopped at step 6: KL jumps at step 3, then three batches are excluded."""
    kl = [0.1, 0.12, 5.0, 4.0, None, None]
    malformed = [0.01, 0.02, 0.01, 0.6, 0.7, 0.8]
    reward = [0.5, 0.6, 0.4, 0.1, 0.05, 0.02]
    metrics = [
        {"step": i + 1, "kl": k, "malformed_rate": m, "reward_mean": r, "clip_fraction": 0.0}
        for i, (k, m, r) in enumerate(zip(kl, malformed, reward))
    ]
    log = {
        "metrics": metrics,
        "evals": [{"step": 0, "heldout_expected_reward": 0.5}],
        "abort": {"step": 6, "reason": "3 consecutive batches excluded or paused", "threshold": 3},
    }
    return Run("ppo-kl", 0, 1, {}, log, Path("."))


def test_stop_story_reads_the_jump_and_the_stop():
    story = credit.stop_story(aborted_run(), before=2)
    assert story == {
        "jump_step": 3,
        "kl_before": 0.12,
        "kl_jump": 5.0,
        "malformed_before": 0.02,
        "malformed_peak": 0.8,
        "reward_before": 0.6,
        "reward_last": 0.02,
        "stopped": 6,
        "threshold": 3,
    }


def test_stop_story_refuses_a_finished_run(run):
    with pytest.raises(ValueError, match="was not aborted"):
        credit.stop_story(run)


def test_update_curves_count_an_aborted_seed_only_where_it_got(monkeypatch):
    finished = aborted_run()
    finished.log = dict(
        finished.log, evals=[{"step": 0, "heldout_expected_reward": 0.5}, {"step": 5, "heldout_expected_reward": 0.7}]
    )
    del finished.log["abort"]
    finished.log["metrics"] = [dict(m, kl=0.2) for m in finished.metrics]
    stopped = aborted_run()
    monkeypatch.setattr(credit.compare, "load", lambda name, seed: finished if seed == 1 else stopped)
    c = credit.update_curves(("ppo-kl",), seeds=(0, 1), last_step=6)["ppo-kl"]
    assert c.stopped == {0: 6}
    assert c.eval_steps.tolist() == [0, 5]
    assert np.isnan(c.heldout[0, 1]) and c.final.tolist() == [0.7]
    assert c.kl.shape == (2, 6) and np.isnan(c.kl[0, 4:]).all()
    assert c.recent_kl(steps=2) == 0.2  # only the seed that got there
    row = credit.results_table({"ppo-kl": c})[0]
    assert row["stopped"] == "seed 0 at step 6" and row["range"] == "0.700–0.700" and row["mean"] == 0.7
    detail = credit.seed_table({"ppo-kl": c})[0]
    assert detail["held-out 0"] is None and detail["held-out 1"] == 0.7 and detail["KL 1"] == 0.2
    assert detail["KL 0"] == pytest.approx(2.06)  # the median of 0.1, 0.12, 5.0 and 4.0: the steps it reached


def test_rounding_gaps_split_the_checkpoints_where_the_disguises_part_from_main():
    steps = np.array([0, 10, 20, 30, 40])

    def curves(heldout) -> credit.Curves:
        return credit.Curves("x", "", steps, np.array(heldout, dtype=float), np.zeros((2, 40)), np.zeros((2, 40)))

    main = curves([[0.5, 0.6, 0.7, 0.7, 0.8], [0.4, 0.5, 0.6, 0.7, 0.7]])
    pg = curves([[0.5, 0.6, 0.703, 0.75, 0.8], [0.4, 0.502, 0.6, 0.7, 0.6]])
    x10 = curves([[0.5, 0.6, 0.7, 0.7, 0.8], [0.4, 0.5, 0.6, 0.7, np.nan]])  # a seed that stopped early
    rloo = curves([[0.5, 0.6, 0.7, 0.7, 0.8], [0.4, 0.5, 0.6, 0.7, 0.7]])
    both = {"main": main, "pg": pg, "reward-x10": x10, "rloo": rloo}
    assert credit.agreed_until(both) == 20  # step 30: pg is 0.05 off on seed 0
    assert credit.agreed_until(both, tol=0.0025) == 10
    early = curves([[0.5, 0.7, 0.7, 0.7, 0.8], [0.4, 0.5, 0.6, 0.7, 0.7]])
    assert credit.agreed_until({"main": main, "pg": early}, names=("pg",)) == 0
    with pytest.raises(ValueError, match="already differ from main at step 0"):
        credit.agreed_until({"main": main, "pg": curves([[0.9] * 5] * 2)}, names=("pg",))
    gaps = credit.rounding_gaps(both)
    assert gaps["pg"] == pytest.approx((0.003, 0.1)) and gaps["reward-x10"] == gaps["rloo"] == (0.0, 0.0)
    assert credit.lost_margin({"pg": (0.0, 0.03)}) == credit.LOST_FLOOR
    assert credit.lost_margin({"pg": (0.0, 0.03), "reward-x10": (0.0, 0.15)}) == 0.15
