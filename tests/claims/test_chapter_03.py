"""Chapter 3's claims about the runs hold for seeds 0, 1 and 2.

Each test calls the same rlbook.analysis.credit functions as the chapter and asserts
what its prose says. Claims that need runs beyond base/main for seeds 1 and 2
(the ablations, process-base) are marked slow for those seeds.
"""
from __future__ import annotations

import pytest
import torch

from rlbook import advantages, credit, runs, world

SEEDS = (0, 1, 2)
SLOW_SEEDS = [0, pytest.param(1, marks=pytest.mark.slow), pytest.param(2, marks=pytest.mark.slow)]


@pytest.mark.parametrize("seed", SEEDS)
def test_group_baseline_removes_the_offset_but_is_not_the_quietest(seed):
    base = runs.load("base", seed)
    prompts = [t.prompt for t in world.split("train")[::3]]
    gv = credit.gradient_variance(base.policy(), prompts, group_size=16, repeats=16, seed=seed)
    assert gv.ratio_at[-1.0] > 1 and gv.ratio_at[1.0] > 1
    # Offset 0 is the quiet end of the curve; whether it beats the baseline too depends on the policy (the
    # chapter words it from the measurement): one seed of one processor's draw measured 1.5.
    assert gv.ratio_at[0.0] < 0.5 * min(gv.ratio_at[-1.0], gv.ratio_at[1.0])
    assert abs(gv.best_offset) < 0.5
    assert base.eval_at(1)["train_reward"] > 0.5


@pytest.mark.parametrize("seed", SEEDS)
def test_zero_variance_groups_shift_towards_all_right(seed):
    zv = credit.zero_variance_summary(runs.load("main", seed))
    assert zv["last_right"] > zv["first_right"]
    assert zv["last_wrong"] < zv["last_right"]


@pytest.mark.parametrize("seed", SEEDS)
def test_record_matches_its_policy_and_not_a_later_one(seed):
    drift = credit.logprob_drift(runs.load("main", seed), step=11, later=20)
    assert drift["same_max_abs"] < 1e-4 < drift["later_mean_abs"]
    assert drift["later_outside_ppo"] > 0


@pytest.mark.parametrize("seed", SEEDS)
def test_main_never_clips_and_adam_absorbs_reward_scale(seed):
    main = runs.load("main", seed)
    assert max(main.metric("clip_fraction")) == 0.0
    effect = credit.scale_effect(main, scale=10.0)
    assert abs(effect["adam_norm_ratio"] - 1) < 0.01 and abs(effect["sgd_norm_ratio"] - 10) < 0.01


@pytest.mark.parametrize("seed", SEEDS)
def test_the_shown_group_is_mixed(seed):
    batch = credit.recorded_batch(runs.load("main", seed), 1)
    group = credit.balanced_group(batch)
    assert group in credit.mixed_groups(batch)
    rows = credit.group_rows(batch, group)
    assert batch.rewards[rows[0]] == 1 and batch.rewards[rows[-1]] == 0


@pytest.mark.parametrize("seed", SLOW_SEEDS)
def test_ratio_drift_agrees_with_the_ppo_log(seed):
    ppo = runs.load("ppo", seed)
    rd = credit.ratio_drift(ppo, step=1, updates=8)
    assert abs(rd.ppo_clipped[2] - ppo.metrics[0]["clip_fraction"]) < 0.01
    assert max(rd.cispo_capped) < min(rd.ppo_clipped)
    assert all(out >= clipped for out, clipped in zip(rd.outside_ppo, rd.ppo_clipped))
    assert rd.outside_ppo[7] < 4 * rd.outside_ppo[0]


@pytest.mark.parametrize("seed", SLOW_SEEDS)
def test_exercise_5_has_a_case(seed):
    pbase = runs.load("process-base", seed)
    multi = [t.prompt for t in world.split("train", "multi")]
    group, row = credit.find_process_case(pbase.policy(), multi, n=8, seed=seed)
    assert group.rewards[row] < 1 and group.step_valid[row, 0] == 1
    assert group.step_adv[row, 0] >= 0 > group.outcome_adv[row]


@pytest.mark.slow
def test_update_choices_claims_over_seeds():
    curves = credit.update_curves(credit.COMPARED, seeds=SEEDS, last_step=60)
    worst = {name: float(c.final.min()) for name, c in curves.items()}
    kl = {name: c.recent_kl() for name, c in curves.items()}
    gaps = credit.rounding_gaps(curves)
    assert min(kl["ppo"], kl["cispo"]) > kl["main"]  # which of them travels furthest, the chapter computes
    reused = ("ppo", "cispo", "ppo-kl", "ppo-kl-ratio")
    margin = credit.lost_margin(gaps)
    assert all(not curves[r].stopped and worst[r] >= worst["main"] - margin for r in curves if r not in reused)
    assert not curves["ppo"].stopped and worst["ppo"] >= worst["main"] - margin  # reuse alone lost no seed


@pytest.mark.parametrize("seed", SEEDS)
def test_leave_one_out_is_centring_times_g_over_g_minus_1_on_a_real_group(seed):
    """@sec-advantages' RLOO paragraph: on the first batch's groups, RLOO's advantage is G/(G-1) times the centred one."""
    batch = credit.recorded_batch(runs.load("main", seed), 1)
    size = batch.rollouts.group_size
    grouped = torch.tensor(batch.rewards, dtype=torch.float32).view(-1, size)
    assert torch.allclose(advantages.leave_one_out(grouped), size / (size - 1) * advantages.group_centered(grouped), atol=1e-6)
