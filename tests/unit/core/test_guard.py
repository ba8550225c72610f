"""The RL loop's response policy: guarded scoring, injected malformed bursts, excluded batches (rlbook.core.guard)."""
from __future__ import annotations

import copy
import threading

import pytest
import torch

from rlbook import runs
from rlbook.core.guard import corrupt, guard_batch, score_guarded
from rlbook.core.rewards import Verdict, get_verifier
from rlbook.core.rl import RLConfig, new_log, train_rl
from rlbook.core.sampling import Rollouts
from rlbook.core.world import EOT_ID, encode

TINY = RLConfig(steps=3, prompts_per_step=8, group_size=4, eval_n=4, checkpoint_every=1)


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


class StuckVerifier:
    """Blocks until released (at most a few seconds), like a verifier service that stopped answering."""

    name, version = "stuck", "0"

    def __init__(self):
        self.release = threading.Event()
        self.threads: list[threading.Thread] = []

    def __call__(self, prompt: str, completion: str) -> Verdict:
        self.threads.append(threading.current_thread())
        self.release.wait(timeout=5)
        raise TimeoutError("never answered")


def test_a_stuck_verifier_does_not_keep_the_process_alive():
    from rlbook.core.sampling import Rollouts
    from rlbook.core.world import EOT_ID, encode

    prompt = "U:3+4?|A:"
    rollouts = Rollouts([prompt], torch.tensor([encode(prompt)]), torch.tensor([encode("7#") + [EOT_ID] * 2]),
                        torch.zeros(1, 4), torch.tensor([[True, True, False, False]]), "hand@0", {"group_size": 1})
    verifier = StuckVerifier()
    try:
        _, statuses, error = score_guarded(verifier, rollouts, timeout_s=0.2)
        assert statuses == ["unverifiable"] and error == "verifier timed out after 0.2 s"
        (worker,) = verifier.threads
        assert worker.daemon  # otherwise interpreter shutdown waits for it forever
    finally:
        verifier.release.set()
