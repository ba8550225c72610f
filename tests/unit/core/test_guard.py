"""The RL loop's response policy: guarded scoring, injected malformed bursts, excluded batches (rlbook.core.guard)."""

from __future__ import annotations

import pytest
import torch
from doubles import StuckVerifier, answers

from rlbook.core.guard import FaultyVerifier, corrupt, guard_batch, score_guarded
from rlbook.core.rewards import get_verifier
from rlbook.core.rl import RLConfig, new_log
from rlbook.core.sampling import Rollouts
from rlbook.core.world import EOT_ID, encode


def test_score_guarded_scores_normally_and_records_failures():
    rollouts = answers("7#", "8#", "77")
    rewards, statuses, error = score_guarded(get_verifier("exact"), rollouts, timeout_s=5.0)
    assert rewards.tolist() == [1.0, 0.0, 0.0] and error is None
    assert statuses == ["accepted", "incorrect", "incomplete"]
    down = FaultyVerifier(get_verifier("exact"), "verifier_outage", 5.0)
    rewards, statuses, error = score_guarded(down, rollouts, 5.0)
    assert rewards.tolist() == [0.0, 0.0, 0.0] and statuses == ["unverifiable"] * 3
    assert error == "verifier raised ConnectionError: injected fault: verifier service unavailable"
    _, statuses, error = score_guarded(FaultyVerifier(get_verifier("exact"), "verifier_timeout", 0.05), rollouts, 0.05)
    assert statuses == ["unverifiable"] * 3 and error == "verifier timed out after 0.1 s"


def test_a_hanging_verifier_hangs_once_then_judges_as_the_one_it_wraps():
    hanging = FaultyVerifier(get_verifier("exact"), "verifier_timeout", 0.01)
    assert hanging("U:3+4?|A:", "7#") == get_verifier("exact")("U:3+4?|A:", "7#") and hanging.hung
    with pytest.raises(ValueError, match="not 'nan_loss'"):
        FaultyVerifier(get_verifier("exact"), "nan_loss", 1.0)


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
    assert log["interventions"] == [
        {
            "step": 2,
            "kind": "batch excluded",
            "reason": "malformed rollouts above the limit",
            "trigger": {"metric": "malformed_rate", "value": 0.75, "threshold": 0.5},
            "affected_rollouts": 3,
        }
    ]


def test_guard_batch_pauses_updates_on_a_verifier_error():
    log = new_log()
    ok = guard_batch(RLConfig(), log, 7, ["unverifiable"] * 4, "verifier raised ConnectionError: down")
    assert ok is False
    (event,) = log["interventions"]
    assert event["kind"] == "updates paused" and event["reason"] == "verifier raised ConnectionError: down"
    assert event["trigger"] == {"metric": "verifier_error_rate", "value": 1.0, "threshold": 0.1}
    assert event["affected_rollouts"] == 4


def test_a_stuck_verifier_does_not_keep_the_process_alive():

    prompt = "U:3+4?|A:"
    rollouts = Rollouts(
        [prompt],
        torch.tensor([encode(prompt)]),
        torch.tensor([encode("7#") + [EOT_ID] * 2]),
        torch.zeros(1, 4),
        torch.tensor([[True, True, False, False]]),
        "hand@0",
        {"group_size": 1},
    )
    verifier = StuckVerifier()
    try:
        _, statuses, error = score_guarded(verifier, rollouts, timeout_s=0.2)
        assert statuses == ["unverifiable"] and error == "verifier timed out after 0.2 s"
        (worker,) = verifier.threads
        assert worker.daemon  # otherwise interpreter shutdown waits for it forever
    finally:
        verifier.release.set()
