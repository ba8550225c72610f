"""The RL loop (rlbook.core.rl): credit, one update, the response policy, and a tiny real run."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from rlbook import runs
from rlbook.core.loop import train_rl
from rlbook.core.policy import weights_hash
from rlbook.core.rewards import STATUSES
from rlbook.core.rl import RLConfig

METRIC_KEYS = {
    "step",
    "reward_mean",
    "reward_std",
    "zero_variance_frac",
    "zero_variance_all_right",
    "zero_variance_all_wrong",
    "completion_len",
    "accepted_rate",
    "incorrect_rate",
    "malformed_rate",
    "incomplete_rate",
    "unverifiable_rate",
    "rollouts_used",
    "excluded",
    "loss",
    "kl",
    "entropy",
    "clip_fraction",
    "clip_low_fraction",
    "clip_high_fraction",
    "ratio_mean",
    "sample_seconds",
    "update_seconds",
}


EVAL_KEYS = {
    "step",
    "heldout_expected_reward",
    "heldout_per_prompt",
    "heldout_greedy_accuracy",
    "train_reward",
    "train_per_prompt",
    "heldout_status_counts",
    "train_exact_reward",
    "train_reward_error",
}


TINY = RLConfig(steps=3, prompts_per_step=8, group_size=4, eval_n=4, checkpoint_every=1)


def tiny_run(cfg: RLConfig = TINY, state=None) -> tuple[dict, list]:
    """RL for a few steps from the shared cached base of seed 0, on one thread; returns (log, states)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        states: list = []
        log = train_rl(
            runs.load("base", 0).policy(),
            cfg,
            seed=0,
            name="tiny",
            state=state,
            on_checkpoint=lambda s: states.append(copy.deepcopy(s)),
        )
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
    cfg = RLConfig(
        steps=6, group_size=2, eval_n=2, checkpoint_every=2, faults=tuple((s, "verifier_outage") for s in range(2, 7))
    )
    log, _ = tiny_run(cfg)
    assert log["status"] == "aborted"
    assert log["abort"] == {"step": 4, "reason": "3 consecutive batches excluded or paused", "threshold": 3}
    assert [m["excluded"] for m in log["metrics"]] == [False, True, True, True]
    assert [i["kind"] for i in log["interventions"]] == ["updates paused"] * 3
    assert [c["step"] for c in log["checkpoints"]] == [0, 2]  # the run stops before step 4's checkpoint


def test_resuming_inside_a_streak_of_faults_aborts_at_the_same_step():
    cfg = RLConfig(
        steps=6, group_size=2, eval_n=2, checkpoint_every=2, faults=tuple((s, "verifier_outage") for s in range(2, 7))
    )
    log, states = tiny_run(cfg)
    assert states[0].step == 2  # saved after the first excluded batch
    resumed, _ = tiny_run(cfg, state=states[0])
    assert resumed["abort"]["step"] == log["abort"]["step"] == 4
