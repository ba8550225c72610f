"""The RL loop (rlbook.core.rl): credit, one update, the response policy, and a tiny real run."""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest
import torch
from doubles import answers, hand_batch

from rlbook.core.loop import rollout_metrics
from rlbook.core.packing import reference_logprobs
from rlbook.core.policy import Policy, PolicyConfig, weights_hash
from rlbook.core.rewards import Verdict
from rlbook.core.rl import Batch, RLConfig, StepState, credit, generated_logprobs, rl_step, update
from rlbook.core.world import split


def close(actual, expected, tol=1e-5) -> bool:
    return torch.allclose(
        torch.as_tensor(actual, dtype=torch.float32), torch.tensor(expected, dtype=torch.float32), atol=tol
    )


def test_credit_centres_rewards_within_each_group():
    cfg = RLConfig(group_size=4)
    rewards = np.array([1, 0, 0, 0, 1, 1, 0, 0, 1, 1, 1, 1], dtype=float)
    adv, used = credit(cfg, rewards, ["accepted"] * 12)
    assert close(adv, [0.75, -0.25, -0.25, -0.25, 0.5, 0.5, -0.5, -0.5, 0, 0, 0, 0])
    assert used.dtype == torch.bool and used.all()


def test_credit_scales_rewards_and_normalises_by_group_std():
    rewards = np.array([1, 0, 0, 0], dtype=float)
    adv, _ = credit(RLConfig(group_size=4, reward_scale=10.0), rewards, ["accepted"] * 4)
    assert close(adv, [7.5, -2.5, -2.5, -2.5])
    # std of (1, 0, 0, 0) with ddof 0 is sqrt(0.25 * 0.75) = 0.4330.
    adv, _ = credit(RLConfig(group_size=4, advantage="group_std"), rewards, ["accepted"] * 4)
    assert close(adv, [0.75 / 0.4330127, -0.25 / 0.4330127, -0.25 / 0.4330127, -0.25 / 0.4330127], tol=1e-4)


def test_accepted_only_selection_keeps_accepted_rows_with_advantage_one():
    statuses = ["accepted", "incorrect", "malformed", "accepted"]
    adv, used = credit(RLConfig(group_size=2, selection="accepted"), np.array([1.0, 0, 0, 1]), statuses)
    assert used.tolist() == [True, False, False, True]
    assert close(adv, [1, 0, 0, 1])
    adv, _ = credit(RLConfig(group_size=2, selection="accepted", reward_scale=10.0), np.array([1.0, 0, 0, 1]), statuses)
    assert close(adv, [10, 0, 0, 10])


def fresh_policy(seed: int = 0) -> Policy:
    torch.manual_seed(seed)
    return Policy(PolicyConfig())


def test_update_raises_the_logprob_of_positive_advantage_tokens():
    policy = fresh_policy()
    cfg = RLConfig(group_size=2, lr=1e-2)
    batch = hand_batch(policy, [1.0, -0.5])
    before = batch.rollouts.logprobs.clone()
    # Plain SGD: the step follows minus the gradient of the loss exactly.
    stats = update(policy, torch.optim.SGD(policy.parameters(), lr=0.05), batch, cfg)
    with torch.no_grad():
        after = generated_logprobs(policy, batch.rollouts)[0]
    # Both first tokens answer the same state: "7" (advantage +1) gains, "8" (advantage -0.5) loses.
    assert after[0, 0] > before[0, 0] and after[1, 0] < before[1, 0]
    assert after[0].sum() > before[0].sum()
    # On-policy the ratio is 1: loss = -(1 + 1 - 0.5 - 0.5) / 4 tokens = -0.25, nothing clipped.
    assert stats["finite"] is True
    assert stats["loss"] == pytest.approx(-0.25, abs=1e-6)
    assert stats["ratio_mean"] == pytest.approx(1.0, abs=1e-6)
    assert stats["clip_fraction"] == 0.0 and stats["kl"] == 0.0
    assert 0.0 < stats["entropy"] <= np.log(21) + 1e-6


def test_update_with_adam_moves_the_sequences_apart():
    policy = fresh_policy()
    batch = hand_batch(policy, [1.0, -1.0])
    before = batch.rollouts.logprobs.clone()
    opt = torch.optim.AdamW(policy.parameters(), lr=1e-3, weight_decay=0.0)
    update(policy, opt, batch, RLConfig(group_size=2, lr=1e-3))
    with torch.no_grad():
        after = generated_logprobs(policy, batch.rollouts)[0]
    assert after[0, 0] > before[0, 0] and after[1, 0] < before[1, 0]
    gap_before = before[0].sum() - before[1].sum()
    assert after[0].sum() - after[1].sum() > gap_before


def test_rows_not_used_do_not_move_the_policy():
    policy = fresh_policy(1)
    before = weights_hash(policy)
    batch = hand_batch(policy, [5.0, -5.0], used=(False, False))
    opt = torch.optim.AdamW(policy.parameters(), lr=1e-2, weight_decay=0.0)
    stats = update(policy, opt, batch, RLConfig(group_size=2, lr=1e-2))
    assert stats["loss"] == 0.0
    assert weights_hash(policy) == before


def test_kl_to_an_identical_reference_is_zero():
    policy = fresh_policy(2)
    batch = hand_batch(policy, [1.0, -1.0])
    opt = torch.optim.AdamW(policy.parameters(), lr=1e-2)
    ref_logp = reference_logprobs(copy.deepcopy(policy), batch.rollouts)
    stats = update(policy, opt, batch, RLConfig(group_size=2, kl_beta=0.1), ref_logp=ref_logp)
    assert stats["kl"] == pytest.approx(0.0, abs=1e-7)


def test_the_ratio_weighted_penalty_moves_the_weights_otherwise_than_plain_k3_off_policy():
    policy = fresh_policy(2)
    batch = hand_batch(policy, [0.0, 0.0])  # zero advantages: only the penalty moves the weights
    ref_logp = reference_logprobs(fresh_policy(5), batch.rollouts)
    stale = dataclasses.replace(
        batch, rollouts=dataclasses.replace(batch.rollouts, logprobs=batch.rollouts.logprobs - 0.5)
    )
    moved = {}
    for estimator in ("k3", "k3-ratio"):
        net = copy.deepcopy(policy)
        opt = torch.optim.SGD(net.parameters(), lr=1.0)
        stats = update(net, opt, stale, RLConfig(group_size=2, kl_beta=0.1, kl_estimator=estimator), ref_logp=ref_logp)
        moved[estimator] = torch.cat([(a - b).flatten() for a, b in zip(net.parameters(), policy.parameters())])
        assert stats["kl"] > 0  # the logged KL is plain k3 under either estimator
    assert moved["k3"].abs().max() > 0 and moved["k3-ratio"].abs().max() > 0
    assert not torch.allclose(moved["k3"], moved["k3-ratio"])


def test_a_non_finite_loss_is_not_applied():
    policy = fresh_policy(3)
    before = weights_hash(policy)
    batch = hand_batch(policy, [1.0, -1.0])
    opt = torch.optim.AdamW(policy.parameters(), lr=1e-2)
    # NaN advantages, as the loop's nan_loss fault makes them, give a NaN loss.
    poisoned = dataclasses.replace(batch, advantages=batch.advantages * float("nan"))
    stats = update(policy, opt, poisoned, RLConfig(group_size=2))
    assert stats["finite"] is False and np.isnan(stats["loss"])
    assert weights_hash(policy) == before
    assert not opt.state  # the optimiser never stepped
    # A NaN recorded log-prob on a trained token poisons the loss the same way.
    batch.rollouts.logprobs[0, 0] = float("nan")
    stats = update(policy, opt, batch, RLConfig(group_size=2))
    assert stats["finite"] is False and weights_hash(policy) == before


def test_rollout_metrics_by_hand():
    cfg = RLConfig(group_size=4)
    rollouts = answers(*(["7#"] * 4 + ["8#", "8#", "9", "U#"] + ["7#", "8#", "8#", "8#"]))
    statuses = (
        ["accepted"] * 4 + ["incorrect", "incorrect", "incomplete", "malformed"] + ["accepted"] + ["incorrect"] * 3
    )
    rewards = np.array([1.0] * 4 + [0.0] * 4 + [1.0, 0, 0, 0])
    batch = Batch(1, rollouts, rewards, statuses, torch.zeros(12), torch.ones(12, dtype=torch.bool))
    m = rollout_metrics(cfg, batch)
    assert m["reward_mean"] == pytest.approx(5 / 12)
    assert m["zero_variance_frac"] == pytest.approx(2 / 3)
    assert m["zero_variance_all_right"] == pytest.approx(1 / 3) and m["zero_variance_all_wrong"] == pytest.approx(1 / 3)
    assert m["accepted_rate"] == pytest.approx(5 / 12) and m["incorrect_rate"] == pytest.approx(5 / 12)
    assert m["malformed_rate"] == pytest.approx(1 / 12) and m["incomplete_rate"] == pytest.approx(1 / 12)
    assert m["unverifiable_rate"] == 0.0
    assert m["completion_len"] == pytest.approx(23 / 12)  # 2*4 + (2+2+1+2) + 2*4 characters
    assert m["rollouts_used"] == 12


def test_zero_variance_split_and_fraction_are_one_definition_under_a_shaped_reward():
    """Shaped rewards (outcome + 0.5 x step validity): groups all right with mixed validity carry signal."""
    cfg = RLConfig(group_size=4)
    rollouts = answers(*(["7#"] * 16))
    rewards = np.array([1.5] * 4 + [1.0, 1.5, 1.0, 1.5] + [0.5] * 4 + [0.0, 0.5, 0.0, 0.0])
    batch = Batch(1, rollouts, rewards, ["accepted"] * 16, torch.zeros(16), torch.ones(16, dtype=torch.bool))
    m = rollout_metrics(cfg, batch)
    assert m["zero_variance_frac"] == pytest.approx(1 / 2)  # the groups of equal rewards: 1.5 x 4 and 0.5 x 4
    assert m["zero_variance_all_right"] == pytest.approx(1 / 4) and m["zero_variance_all_wrong"] == pytest.approx(1 / 4)
    assert m["zero_variance_all_right"] + m["zero_variance_all_wrong"] == m["zero_variance_frac"]


def test_a_worked_world_checkpoint_records_its_answers_styles_and_style_choice():
    from rlbook.core.loop import checkpoint_eval

    torch.manual_seed(0)
    policy = Policy(PolicyConfig(vocab_size=22, block_size=32, d_model=16, rope=True))
    cfg = RLConfig(world="worked", budget=24, eval_n=1)
    entry = checkpoint_eval(policy, cfg, seed=0, step=0)
    styles, choice = entry["heldout_styles"], entry["heldout_choice"]
    assert styles["worked"] + styles["direct"] == 300  # one answer to each held-out prompt
    assert entry["heldout_expected_reward"] == (styles["worked_accepted"] + styles["direct_accepted"]) / 300
    assert 1 <= styles["mean_length"] <= 24
    assert 0 <= choice["style"] <= np.log(2) + 1e-6 and 0 <= choice["p_worked"] <= 1
    assert "heldout_styles" not in checkpoint_eval(Policy(), RLConfig(eval_n=1), seed=0, step=0)


def test_a_step_with_dynamic_sampling_logs_every_answer_it_sampled():
    cfg = RLConfig(steps=1, group_size=4, prompts_per_step=8, refill_rounds=2, budget=3)
    policy = fresh_policy(3)
    batch, _ = rl_step(policy, cfg, StepState.fresh(policy, cfg, 0), split("train"), _FirstDigitOdd(), 1)
    assert batch.sampled is not None and batch.sampled >= len(batch.rollouts)
    assert rollout_metrics(cfg, batch)["rollouts_sampled"] == batch.sampled
    assert "rollouts_sampled" not in rollout_metrics(dataclasses.replace(cfg, refill_rounds=0), batch)


def test_overlong_filtering_leaves_the_cut_off_answers_out_of_the_update():
    cfg = RLConfig(steps=1, group_size=4, prompts_per_step=8, budget=2, overlong="filter")
    policy = fresh_policy(4)
    batch, _ = rl_step(policy, cfg, StepState.fresh(policy, cfg, 0), split("train"), _FirstDigitOdd(), 1)
    ended = batch.rollouts.ended
    assert (~ended).any(), "the test needs answers the budget cut off"
    assert torch.equal(batch.used, ended)


class _FirstDigitOdd:
    """A verifier that pays an answer whose first character is an odd digit: mixed groups from a random policy."""

    name, version = "first-digit-odd", "0"

    def __call__(self, prompt: str, completion: str):
        right = completion[:1] in "13579"
        return Verdict(float(right), "accepted" if right else "incorrect", "", self.name, self.version)
