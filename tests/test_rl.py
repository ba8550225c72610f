"""The RL loop (rlbook.core.rl): credit, one update, the response policy, and a tiny real run."""
from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from rlbook import runs
from rlbook.core.guard import corrupt, guard_batch, score_guarded
from rlbook.core.packing import (
    ReferenceMemo,
    distinct_answers,
    distinct_prompts,
    packed_reads,
    reference_logprobs,
    row_keys,
    unmet,
)
from rlbook.core.policy import Policy, PolicyConfig, weights_hash
from rlbook.core.rewards import STATUSES, get_verifier
from rlbook.core.rl import Batch, RLConfig, credit, generated_logprobs, new_log, rollout_metrics, train_rl, update
from rlbook.core.sampling import Rollouts
from rlbook.core.world import EOT_ID, VOCAB, encode

METRIC_KEYS = {"step", "reward_mean", "reward_std", "zero_variance_frac", "zero_variance_all_right",
               "zero_variance_all_wrong", "completion_len", "accepted_rate", "incorrect_rate", "malformed_rate",
               "incomplete_rate", "unverifiable_rate", "rollouts_used", "excluded", "loss", "kl", "entropy",
               "clip_fraction", "clip_low_fraction", "clip_high_fraction", "ratio_mean", "sample_seconds",
               "update_seconds"}
EVAL_KEYS = {"step", "heldout_expected_reward", "heldout_per_prompt", "heldout_greedy_accuracy", "train_reward",
             "train_per_prompt", "heldout_status_counts", "train_exact_reward", "train_reward_error"}
TINY = RLConfig(steps=3, prompts_per_step=8, group_size=4, eval_n=4, checkpoint_every=1)


def close(actual, expected, tol=1e-5) -> bool:
    return torch.allclose(torch.as_tensor(actual, dtype=torch.float32),
                          torch.tensor(expected, dtype=torch.float32), atol=tol)


# --- credit ---------------------------------------------------------------------------------------------

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
    adv, _ = credit(RLConfig(group_size=2, selection="accepted", reward_scale=10.0), np.array([1.0, 0, 0, 1]),
                    statuses)
    assert close(adv, [10, 0, 0, 10])


# --- one update on a hand-made batch ----------------------------------------------------------------------

def hand_batch(policy: Policy, advantages, used=(True, True)) -> Batch:
    """Two on-policy answers to 3+4: ``7#`` and ``8#``, with the given advantages."""
    prompt = "U:3+4?|A:"
    tokens = torch.tensor([encode("7#"), encode("8#")])
    ids = torch.tensor([encode(prompt)] * 2)
    mask = torch.ones(2, 2, dtype=torch.bool)
    rollouts = Rollouts([prompt] * 2, ids, tokens, torch.zeros(2, 2), mask, "hand@0", {"group_size": 2})
    with torch.no_grad():
        rollouts.logprobs = generated_logprobs(policy, rollouts)[0]
    return Batch(1, rollouts, np.array([1.0, 0.0]), ["accepted", "incorrect"],
                 torch.tensor(advantages, dtype=torch.float32), torch.tensor(used))


@pytest.mark.parametrize("width", [1, 9, 11, 14])
def test_distinct_prompts_equal_torch_unique_over_rows(width):
    torch.manual_seed(width)
    rows = torch.randint(0, len(VOCAB), (40, width))[torch.randint(0, 40, (640,))]
    expected = torch.unique(rows, dim=0, return_inverse=True)
    found = distinct_prompts(rows)
    assert torch.equal(found[0], expected[0]) and torch.equal(found[1], expected[1])


def test_distinct_prompts_refuse_rows_too_long_for_one_integer():
    with pytest.raises(ValueError, match="15 tokens"):
        distinct_prompts(torch.zeros(2, 15, dtype=torch.long))


@pytest.mark.parametrize("width", [4, 12])  # 12 tokens are too many for one integer: torch.unique over rows
def test_distinct_answers_equal_torch_unique_over_prompt_and_answer(width):
    gen = torch.Generator().manual_seed(width)
    row_prompt = torch.randint(0, 5, (200,), generator=gen)
    tokens = torch.randint(0, 3, (200, width), generator=gen)
    expected, inverse = torch.unique(torch.cat([row_prompt[:, None], tokens], dim=1), dim=0, return_inverse=True)
    answer_prompt, answers, row_answer = distinct_answers(row_prompt, tokens)
    assert torch.equal(answer_prompt, expected[:, 0]) and torch.equal(answers, expected[:, 1:])
    assert torch.equal(row_answer, inverse)


def test_packed_reads_give_each_prompt_one_read_per_three_answers():
    read_prompt, read, place = packed_reads(torch.tensor([0, 0, 0, 0, 1, 2, 2]), 3, per_read=3)
    assert read_prompt.tolist() == [0, 0, 1, 2]  # prompt 0's four answers need two reads
    assert read.tolist() == [0, 0, 0, 1, 2, 3, 3] and place.tolist() == [0, 1, 2, 0, 0, 0, 1]


def test_generated_logprobs_share_prompts_yet_equal_full_rows_in_value_and_gradient():
    policy = fresh_policy(3)
    # Prompt 1 has four distinct answers (two reads of it), one of them twice; prompt 2 repeats one answer.
    prompts = ["U:3+4?|A:"] * 5 + ["U:9+8?|A:"] * 3
    tokens = torch.tensor([encode(t) for t in ["7###", "8###", "7###", "9###", "1###", "17##", "17##", "1#7#"]])
    ids = torch.tensor([encode(p) for p in prompts])
    rollouts = Rollouts(prompts, ids, tokens, torch.zeros(8, 4), torch.ones(8, 4, dtype=torch.bool), "hand@0", {})
    shared, _ = generated_logprobs(policy, rollouts)
    shared.sum().backward()
    shared_grads = [p.grad.clone() for p in policy.parameters()]
    policy.zero_grad()
    logits, _ = policy(rollouts.full_ids()[:, :-1])  # every row read in full
    full = torch.log_softmax(logits[:, 8:], dim=-1).gather(-1, tokens[:, :, None]).squeeze(-1)
    full.sum().backward()
    assert torch.allclose(shared, full, atol=1e-5)
    assert all(torch.allclose(a, p.grad, atol=1e-5) for a, p in zip(shared_grads, policy.parameters()))


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


def test_reference_logprobs_are_the_recorded_tokens_logprobs_without_a_gradient():
    policy = fresh_policy(2)
    batch = hand_batch(policy, [1.0, -1.0])
    ref_logp = reference_logprobs(policy, batch.rollouts)
    assert not ref_logp.requires_grad
    assert torch.equal(ref_logp, generated_logprobs(policy, batch.rollouts)[0].detach())


def test_row_keys_are_equal_exactly_for_equal_prompt_and_answer():
    rollouts = hand_batch(fresh_policy(2), [1.0, -1.0]).rollouts.select([0, 1, 0, 0])
    rollouts.prompt_ids[3, 2] = encode("5")[0]  # the last row asks 5+4 and answers as the first does
    keys = row_keys(rollouts.prompt_ids, rollouts.tokens)
    assert keys[0] == keys[2] and len({keys[0], keys[1], keys[3]}) == 3
    assert len(keys[0]) == rollouts.prompt_ids.shape[1] + rollouts.tokens.shape[1]
    assert unmet(keys, {keys[1]}) == {keys[0]: 0, keys[3]: 3}  # first rows of the keys not met, in order


def test_the_reference_memo_reads_each_pair_once_and_hands_back_its_first_numbers():
    reference = fresh_policy(2)
    batch = hand_batch(reference, [1.0, -1.0])
    memo = ReferenceMemo()
    first = memo.logprobs(reference, batch.rollouts)
    assert torch.allclose(first, reference_logprobs(reference, batch.rollouts), atol=1e-6)
    # Known pairs are looked up, not read again: another "reference" would give other numbers.
    again = memo.logprobs(fresh_policy(5), batch.rollouts.select([1, 0, 1]))
    assert torch.equal(again, first[[1, 0, 1]])
    # A new pair is read (with the policy given) and joins the memo.
    new = copy.deepcopy(batch.rollouts)
    new.tokens[0] = torch.tensor(encode("6#"))
    mixed = memo.logprobs(reference, new)
    assert len(memo.index) == 3 and torch.equal(mixed[1], first[1])
    assert torch.allclose(mixed[0], reference_logprobs(reference, new)[0], atol=1e-6)


def test_a_non_finite_loss_is_not_applied():
    policy = fresh_policy(3)
    before = weights_hash(policy)
    batch = hand_batch(policy, [1.0, -1.0])
    opt = torch.optim.AdamW(policy.parameters(), lr=1e-2)
    stats = update(policy, opt, batch, RLConfig(group_size=2), poison=True)
    assert stats["finite"] is False and np.isnan(stats["loss"])
    assert weights_hash(policy) == before
    assert not opt.state  # the optimiser never stepped
    # A NaN recorded log-prob on a trained token poisons the loss the same way.
    batch.rollouts.logprobs[0, 0] = float("nan")
    stats = update(policy, opt, batch, RLConfig(group_size=2))
    assert stats["finite"] is False and weights_hash(policy) == before


# --- scoring, faults and the response policy --------------------------------------------------------------

def answers(*texts: str) -> Rollouts:
    prompt = "U:3+4?|A:"
    width = 4
    tokens = torch.tensor([encode(t) + [EOT_ID] * (width - len(t)) for t in texts])
    mask = torch.tensor([[i < len(t) for i in range(width)] for t in texts])
    ids = torch.tensor([encode(prompt)] * len(texts))
    return Rollouts([prompt] * len(texts), ids, tokens, torch.zeros(len(texts), width), mask, "hand@0",
                    {"group_size": len(texts)})


def test_score_guarded_scores_normally_and_records_failures():
    rollouts = answers("7#", "8#", "77")
    rewards, statuses, error = score_guarded(get_verifier("exact"), rollouts, timeout_s=5.0)
    assert rewards.tolist() == [1.0, 0.0, 0.0] and error is None
    assert statuses == ["accepted", "incorrect", "incomplete"]
    rewards, statuses, error = score_guarded(get_verifier("exact"), rollouts, 5.0, fault="verifier_outage")
    assert rewards.tolist() == [0.0, 0.0, 0.0] and statuses == ["unverifiable"] * 3
    assert error.startswith("verifier raised ConnectionError")
    _, statuses, error = score_guarded(get_verifier("exact"), rollouts, 0.05, fault="verifier_timeout")
    assert statuses == ["unverifiable"] * 3 and error == "verifier timed out after 0.1 s"


def test_corrupt_turns_hit_rows_into_malformed_answers():
    rollouts = answers("7#", "12#", "3")
    hit_all = corrupt(rollouts, 1.0, torch.Generator().manual_seed(0))
    assert hit_all.completions() == ["U#"] * 3
    assert hit_all.settings["corrupted"] == 3
    assert rollouts.completions() == ["7#", "12#", "3"]  # the original is untouched
    assert corrupt(rollouts, 0.0, torch.Generator().manual_seed(0)).completions() == ["7#", "12#", "3"]


def test_guard_batch_malformed_threshold():
    cfg = RLConfig()  # max_malformed_rate 0.5
    log = new_log()
    assert guard_batch(cfg, log, 1, ["malformed", "malformed", "accepted", "incorrect"], None) is True
    assert log["interventions"] == []  # 0.5 is at the limit, not above it
    assert guard_batch(cfg, log, 2, ["malformed", "malformed", "malformed", "accepted"], None) is False
    assert log["interventions"] == [{"step": 2, "kind": "batch excluded",
                                     "reason": "malformed rollouts above the limit",
                                     "trigger": {"metric": "malformed_rate", "value": 0.75, "threshold": 0.5},
                                     "affected_rollouts": 3}]


def test_guard_batch_pauses_updates_on_a_verifier_error():
    log = new_log()
    ok = guard_batch(RLConfig(), log, 7, ["unverifiable"] * 4, "verifier raised ConnectionError: down")
    assert ok is False
    (event,) = log["interventions"]
    assert event["kind"] == "updates paused" and event["reason"] == "verifier raised ConnectionError: down"
    assert event["trigger"] == {"metric": "verifier_error_rate", "value": 1.0, "threshold": 0.1}
    assert event["affected_rollouts"] == 4


def test_rollout_metrics_by_hand():
    cfg = RLConfig(group_size=4)
    rollouts = answers(*(["7#"] * 4 + ["8#", "8#", "9", "U#"] + ["7#", "8#", "8#", "8#"]))
    statuses = ["accepted"] * 4 + ["incorrect", "incorrect", "incomplete", "malformed"] + \
               ["accepted"] + ["incorrect"] * 3
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


# --- a tiny real run ------------------------------------------------------------------------------------

def tiny_run(cfg: RLConfig = TINY, state=None) -> tuple[dict, list]:
    """RL for a few steps from the shared cached base of seed 0, on one thread; returns (log, states)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        states: list = []
        log = train_rl(runs.load("base", 0).policy(), cfg, seed=0, name="tiny", state=state,
                       on_checkpoint=lambda s: states.append(copy.deepcopy(s)))
    finally:
        torch.set_num_threads(before)
    return log, states


@pytest.fixture(scope="module")
def tiny():
    return tiny_run()


def test_tiny_run_logs_every_metric(tiny):
    log, _ = tiny
    assert log["status"] == "completed"
    assert [m["step"] for m in log["metrics"]] == [1, 2, 3]
    for m in log["metrics"]:
        assert set(m) == METRIC_KEYS
        assert m["rollouts_used"] == 32 and m["excluded"] is False
        assert sum(m[f"{s}_rate"] for s in STATUSES) == pytest.approx(1.0)
        assert 0.0 <= m["reward_mean"] <= 1.0
    assert log["interventions"] == [] and log["aborted_updates"] == []


def test_tiny_run_checkpoints_and_evaluates_every_step(tiny):
    log, states = tiny
    assert [c["step"] for c in log["checkpoints"]] == [0, 1, 2, 3]
    assert [c["version"] for c in log["checkpoints"]] == ["tiny@0", "tiny@1", "tiny@2", "tiny@3"]
    hashes = [c["weights_hash"] for c in log["checkpoints"]]
    assert len(set(hashes)) == 4  # every update moved the weights
    assert weights_hash(log["checkpoints"][2]["checkpoint"].load()) == hashes[2]
    assert [s.step for s in states] == [1, 2, 3]
    assert [e["step"] for e in log["evals"]] == [0, 1, 2, 3]
    for e in log["evals"]:
        assert set(e) == EVAL_KEYS
        assert len(e["heldout_per_prompt"]) == 40 and len(e["train_per_prompt"]) == 60
        assert sum(e["heldout_status_counts"].values()) == 40 * 4
        assert e["heldout_expected_reward"] == pytest.approx(np.mean(e["heldout_per_prompt"]), abs=1e-4)


def test_tiny_run_keeps_its_rollouts(tiny):
    log, _ = tiny
    assert len(log["rollouts"]) == 3
    for step, r in enumerate(log["rollouts"], start=1):
        assert r["step"] == step and r["policy_version"] == f"tiny@{step - 1}"
        assert len(r["prompts"]) == 8
        assert r["tokens"].dtype == torch.uint8 and r["tokens"].shape == (32, 4)
        assert r["statuses"].dtype == torch.uint8 and r["statuses"].shape == (32,)
        assert r["used"].all()
        rewards_of_accepted = r["rewards"][r["statuses"] == STATUSES.index("accepted")]
        assert (rewards_of_accepted == 1.0).all()


def test_tiny_run_is_deterministic(tiny):
    log, _ = tiny
    again, _ = tiny_run()
    assert [c["weights_hash"] for c in again["checkpoints"]] == [c["weights_hash"] for c in log["checkpoints"]]
    timeless = [{k: v for k, v in m.items() if not k.endswith("_seconds")} for m in log["metrics"]]
    assert [{k: v for k, v in m.items() if not k.endswith("_seconds")} for m in again["metrics"]] == timeless
    for a, b in zip(log["rollouts"], again["rollouts"]):
        assert a["prompts"] == b["prompts"] and torch.equal(a["tokens"], b["tokens"])
    assert again["evals"] == log["evals"]


def test_resuming_with_all_prompts_each_step_is_bit_identical():
    cfg = RLConfig(steps=2, group_size=2, eval_n=2, checkpoint_every=1)  # every train prompt, every step
    log, states = tiny_run(cfg)
    resumed, _ = tiny_run(cfg, state=states[0])
    assert resumed["checkpoints"][-1]["weights_hash"] == log["checkpoints"][-1]["weights_hash"]


def test_resuming_with_a_prompt_subset_is_bit_identical(tiny):
    log, states = tiny
    resumed, _ = tiny_run(state=copy.deepcopy(states[0]))
    assert [r["prompts"] for r in resumed["rollouts"]] == [r["prompts"] for r in log["rollouts"]]
    assert resumed["checkpoints"][-1]["weights_hash"] == log["checkpoints"][-1]["weights_hash"]


def test_consecutive_outages_abort_the_run():
    cfg = RLConfig(steps=6, group_size=2, eval_n=2, checkpoint_every=2,
                   faults=tuple((s, "verifier_outage") for s in range(2, 7)))
    log, _ = tiny_run(cfg)
    assert log["status"] == "aborted"
    assert log["abort"] == {"step": 4, "reason": "3 consecutive batches excluded or paused", "threshold": 3}
    assert [m["excluded"] for m in log["metrics"]] == [False, True, True, True]
    assert [i["kind"] for i in log["interventions"]] == ["updates paused"] * 3
    assert [c["step"] for c in log["checkpoints"]] == [0, 2]  # the run stops before step 4's checkpoint


def test_resuming_inside_a_streak_of_faults_aborts_at_the_same_step():
    cfg = RLConfig(steps=6, group_size=2, eval_n=2, checkpoint_every=2,
                   faults=tuple((s, "verifier_outage") for s in range(2, 7)))
    log, states = tiny_run(cfg)
    assert states[0].step == 2  # saved after the first excluded batch
    resumed, _ = tiny_run(cfg, state=states[0])
    assert resumed["abort"]["step"] == log["abort"]["step"] == 4
