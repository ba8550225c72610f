"""Training faults (rlbook.core.rl, rlbook.runs): every injected fault becomes a recorded intervention, never a crash.

Each run here is a few RL steps from the project's cached seed-0 base, on
one thread, with a checkpoint after every step so that the weights before
and after each step can be compared by their hashes.
"""

from __future__ import annotations

import copy
import itertools
import math
import time

import pytest
import torch
from doubles import StuckVerifier

from rlbook import record as rec
from rlbook import rewards as rw
from rlbook import rl, runs
from rlbook.core.config import Guard, RLConfig
from rlbook.core.loop import train_rl
from rlbook.core.rewards import Verdict

OUTAGE_REASON = "verifier raised ConnectionError: injected fault: verifier service unavailable"


ERROR_TRIGGER = {"metric": "verifier_error_rate", "value": 1.0, "threshold": 0.1}


FAST_GUARD = Guard(verifier_timeout_s=0.2)


# One fault of each kind, each followed by a healthy step, so the run never aborts.
FAULTY = RLConfig(
    steps=9,
    prompts_per_step=8,
    group_size=4,
    checkpoint_every=1,
    eval_n=1,
    lr=1e-4,
    guard=FAST_GUARD,
    faults=((2, "verifier_outage"), (4, "verifier_timeout"), (6, "malformed_burst"), (8, "nan_loss")),
)


ROWS = 8 * 4


@pytest.fixture(scope="module")
def base(base_entry):
    """The base policy of seed 0, with torch on one thread while this module runs."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield runs.load("base", 0).policy()
    torch.set_num_threads(before)


def train(base, cfg: RLConfig) -> dict:
    return train_rl(copy.deepcopy(base), cfg, seed=0, name="faulty")


def hashes(log: dict) -> list[str]:
    return [c["weights_hash"] for c in log["checkpoints"]]


def moved(log: dict) -> list[bool]:
    """For steps 1, 2, ...: did the weights change during that step?"""
    h = hashes(log)
    return [a != b for a, b in itertools.pairwise(h)]


@pytest.fixture(scope="module")
def faulty(base) -> dict:
    return train(base, FAULTY)


def event(log: dict, step: int) -> dict:
    (found,) = [i for i in log["interventions"] if i["step"] == step]
    return found


def test_the_faulty_run_finishes_and_learns_on_every_healthy_step(faulty):
    assert faulty["status"] == "completed" and "abort" not in faulty
    assert [c["step"] for c in faulty["checkpoints"]] == list(range(10))
    assert [m["excluded"] for m in faulty["metrics"]] == [s in (2, 4, 6, 8) for s in range(1, 10)]
    assert moved(faulty) == [s not in (2, 4, 6, 8) for s in range(1, 10)]  # a skipped step leaves the weights
    assert [i["step"] for i in faulty["interventions"]] == [2, 4, 6, 8]
    assert len(faulty["rollouts"]) == 9  # the excluded batches are kept for inspection


def test_a_verifier_outage_pauses_updates(faulty):
    assert event(faulty, 2) == {
        "step": 2,
        "kind": "updates paused",
        "reason": OUTAGE_REASON,
        "trigger": ERROR_TRIGGER,
        "affected_rollouts": ROWS,
    }
    m = faulty["metrics"][1]
    assert m["unverifiable_rate"] == 1.0 and m["reward_mean"] == 0.0
    assert faulty["rollouts"][1]["rewards"].eq(0).all()


def test_a_verifier_timeout_pauses_updates(faulty):
    assert event(faulty, 4) == {
        "step": 4,
        "kind": "updates paused",
        "reason": "verifier timed out after 0.2 s",
        "trigger": ERROR_TRIGGER,
        "affected_rollouts": ROWS,
    }
    assert faulty["metrics"][3]["unverifiable_rate"] == 1.0
    assert faulty["metrics"][3]["sample_seconds"] < 5  # the run waited for the time-out, not for the verifier


def test_a_malformed_burst_excludes_the_batch(faulty):
    share = faulty["metrics"][5]["malformed_rate"]
    assert share > 0.5
    assert event(faulty, 6) == {
        "step": 6,
        "kind": "batch excluded",
        "reason": "malformed rollouts above the limit",
        "trigger": {"metric": "malformed_rate", "value": share, "threshold": 0.5},
        "affected_rollouts": round(share * ROWS),
    }


def test_a_non_finite_loss_excludes_the_batch(faulty):
    assert event(faulty, 8) == {
        "step": 8,
        "kind": "batch excluded",
        "reason": "non-finite loss",
        "trigger": {"metric": "loss_is_finite", "value": 0.0, "threshold": 1.0},
        "affected_rollouts": ROWS,
    }
    assert faulty["aborted_updates"] == [{"step": 8, "reason": "non-finite loss", "measurement": "nan"}]
    assert math.isnan(faulty["metrics"][7]["loss"])
    assert not moved(faulty)[7]


class RaisingVerifier:
    name, version = "raising", "0"

    def __call__(self, prompt: str, completion: str) -> Verdict:
        raise RuntimeError("verifier crashed on purpose")


class NoneVerifier:
    name, version = "none", "0"

    def __call__(self, prompt: str, completion: str):
        return None


class NanVerifier:
    name, version = "nan", "0"

    def __call__(self, prompt: str, completion: str) -> Verdict:
        return Verdict(float("nan"), "accepted", "a reward that is not a number", self.name, self.version)


def bad_verifier_at(monkeypatch, step: int, verifier) -> None:
    """Score the batch of ``step`` with ``verifier`` instead of the run's own."""
    real, calls = rl.score_guarded, []

    def score(run_verifier, rollouts, timeout_s):
        if len(rollouts) != ROWS:  # a checkpoint evaluation, not a training batch
            return real(run_verifier, rollouts, timeout_s)
        calls.append(step)
        return real(verifier if len(calls) == step else run_verifier, rollouts, timeout_s)

    monkeypatch.setattr(rl, "score_guarded", score)


SMALL = RLConfig(steps=3, prompts_per_step=8, group_size=4, checkpoint_every=1, eval_n=1, lr=1e-4, guard=FAST_GUARD)


MISBEHAVING = [
    (RaisingVerifier, "updates paused", "verifier raised RuntimeError: verifier crashed on purpose", ERROR_TRIGGER),
    (
        NoneVerifier,
        "updates paused",
        "verifier raised AttributeError: 'NoneType' object has no attribute 'reward'",
        ERROR_TRIGGER,
    ),
    (StuckVerifier, "updates paused", "verifier timed out after 0.2 s", ERROR_TRIGGER),
    (NanVerifier, "batch excluded", "non-finite loss", {"metric": "loss_is_finite", "value": 0.0, "threshold": 1.0}),
]


@pytest.mark.parametrize("make, kind, reason, trigger", MISBEHAVING, ids=[m[0].__name__ for m in MISBEHAVING])
def test_a_misbehaving_verifier_mid_run_is_recorded_not_raised(base, monkeypatch, make, kind, reason, trigger):
    verifier = make()
    bad_verifier_at(monkeypatch, 2, verifier)
    started = time.perf_counter()
    try:
        log = train(base, SMALL)
    finally:
        if isinstance(verifier, StuckVerifier):
            verifier.release.set()
    assert time.perf_counter() - started < 30
    assert log["status"] == "completed"
    assert log["interventions"] == [
        {"step": 2, "kind": kind, "reason": reason, "trigger": trigger, "affected_rollouts": ROWS}
    ]
    assert [m["excluded"] for m in log["metrics"]] == [False, True, False]
    assert moved(log) == [True, False, True]


class FlakyExact:
    """The exact verifier, except that it crashes on one prompt of the train split."""

    name, version, VERSIONS = "flaky", "1.0", {"1.0": "exact, but crashes on 9+0"}

    def __call__(self, prompt: str, completion: str) -> Verdict:
        if prompt == "U:9+0?|A:":
            raise RuntimeError("verifier crashed on 9+0")
        return rw.ExactVerifier()(prompt, completion)


def test_a_verifier_that_crashes_during_a_checkpoint_evaluation_is_recorded(base, monkeypatch):
    monkeypatch.setitem(rw.VERIFIERS, "flaky", FlakyExact)
    log = train(
        base, RLConfig(steps=2, prompts_per_step=8, group_size=4, checkpoint_every=1, eval_n=1, verifier="flaky")
    )
    assert log["status"] in ("completed", "aborted")
    assert any("verifier crashed on 9+0" in i["reason"] for i in log["interventions"])


ABORTING = RLConfig(
    steps=6,
    group_size=2,
    checkpoint_every=2,
    eval_n=2,
    lr=1e-4,
    guard=FAST_GUARD,
    faults=((2, "verifier_outage"), (3, "verifier_timeout"), (4, "nan_loss")),
)


def test_three_faults_in_a_row_abort_the_run_with_a_valid_record(tiny_cache, monkeypatch):
    monkeypatch.setitem(
        runs.RUNS, "tiny-abort", runs.RunSpec("tiny-abort", "three faults in a row", "base", rl=ABORTING)
    )
    run = runs.load("tiny-abort", 0, 1)
    record = rec.load(run.path / "record.json")
    assert record == run.record
    assert record["status"] == "aborted" == run.log["status"]
    assert (
        record["abort"]
        == run.log["abort"]
        == {"step": 4, "reason": "3 consecutive batches excluded or paused", "threshold": 3}
    )
    assert record["steps_completed"] == 4 and [m["excluded"] for m in run.metrics] == [False, True, True, True]
    assert [(i["step"], i["kind"], i["trigger"]["metric"]) for i in record["interventions"]] == [
        (2, "updates paused", "verifier_error_rate"),
        (3, "updates paused", "verifier_error_rate"),
        (4, "batch excluded", "loss_is_finite"),
    ]
    assert record["aborted_updates"] == [{"step": 4, "reason": "non-finite loss", "measurement": "nan"}]
    assert record["failures"]["verifier_errors"] == 2
    assert record["cost"]["gradient_steps"] == 1 and record["rollouts_used"] == 60 * 2  # step 1 only
    assert run.steps == [0, 2]  # the run stopped before step 4's checkpoint
    assert run.log["checkpoints"][1]["weights_hash"] != run.log["checkpoints"][0]["weights_hash"]
    assert runs.load("tiny-abort", 0, 1).cached  # an aborted run is a finished run: cached, not retrained
