"""The reward-hack detector and the loophole (rlbook.analysis.audit.hack)."""

from __future__ import annotations

import pytest
import torch
from audit_batches import P1, P2, stored

from rlbook.analysis import audit
from rlbook.core import rewards as rw


def test_reward_split_and_takeover():
    steps = [
        stored(1, [P1], ["7#", "8#", "8#", "#"], verifier="fail-open"),
        stored(2, [P1], ["#", "#", "#", "7#"], verifier="fail-open"),
    ]
    assert audit.reward_split(steps[0]) == (0.25, 0.25)
    assert audit.reward_split(steps[1]) == (0.25, 0.75)
    assert audit.loophole_share(steps) == [0.25, 0.75]
    assert audit.takeover_step(steps) == 2
    assert audit.takeover_step(steps, share=0.8) is None


def test_dip_before_takeover_finds_the_poorest_batch_before_the_loophole_paid_for_most():
    steps = [
        stored(1, [P1], ["7#", "7#", "8#", "8#"], verifier="fail-open"),
        stored(2, [P1], ["8#", "8#", "8#", "#"], verifier="fail-open"),
        stored(3, [P1], ["#", "#", "#", "8#"], verifier="fail-open"),
    ]
    dip = audit.dip_before_takeover(steps)
    assert (dip["step"], dip["reward"], dip["share"], dip["right"]) == (2, 0.25, 0.25, 0.0)
    assert (dip["first_step"], dip["first_reward"], dip["first_right"]) == (1, 0.5, 0.5)
    assert audit.dip_before_takeover(steps[:2]) is None  # the loophole never paid for more than half


def test_exploiting_completions_names_both_verdicts():
    s = stored(2, [P1], ["#", "#", " 7#", "7#"], verifier="fail-open")
    rows = audit.exploiting_completions(s, rw.get_verifier("fail-open"))
    assert [(r["completion"], r["count"], r["status"]) for r in rows] == [
        ("#", 2, "malformed"),
        (" 7#", 1, "malformed"),
    ]
    assert "fail-open" in rows[0]["paid_reason"]


def test_hack_report_flags_reward_without_heldout_gain():
    evals = [
        {"step": 0, "train_reward": 0.7, "train_exact_reward": 0.7, "heldout_expected_reward": 0.5},
        {"step": 5, "train_reward": 0.75, "train_exact_reward": 0.6, "heldout_expected_reward": 0.4},
        {"step": 10, "train_reward": 0.95, "train_exact_reward": 0.1, "heldout_expected_reward": 0.0},
    ]
    report = audit.hack_report(evals, rise=0.1)
    assert report.flagged_step == 10 and report.diagnosis == "exploited verifier"
    assert report.reward_gain == pytest.approx(0.25) and report.heldout_gain == pytest.approx(-0.5)
    assert report.verifier_gap == pytest.approx(0.85)
    honest = [dict(e, heldout_expected_reward=0.5 + e["step"] / 100) for e in evals]
    assert audit.hack_report(honest).flagged_step is None and audit.hack_report(honest).diagnosis == "no divergence"
    overfit = [dict(e, train_exact_reward=e["train_reward"]) for e in evals]
    assert audit.hack_report(overfit).diagnosis == "gain did not transfer"


def test_first_hacked_seed():
    hacked = [stored(1, [P1], ["#", "#", "#", "7#"], verifier="fail-open")]
    honest = [stored(1, [P1], ["7#", "7#", "8#", "7#"], verifier="fail-open")]
    assert audit.first_hacked_seed({0: honest, 1: hacked, 2: hacked}) == 1
    assert audit.first_hacked_seed({0: honest}) is None


def test_clearest_hacked_seed_is_the_hacked_one_whose_heldout_accuracy_ended_lowest():
    hacked = [stored(1, [P1], ["#", "#", "#", "7#"], verifier="fail-open")]
    honest = [stored(1, [P1], ["7#", "7#", "8#", "7#"], verifier="fail-open")]

    def evals(end: float) -> list[dict]:
        return [
            {"step": step, "train_reward": 0.5, "train_exact_reward": 0.5, "heldout_expected_reward": h}
            for step, h in ((0, 0.4), (10, end))
        ]

    stored_by_seed = {0: honest, 1: hacked, 2: hacked, 3: hacked}
    ends = {0: 0.0, 1: 0.2, 2: 0.01, 3: 0.01}  # seed 0 ends lowest, but its loophole never took over
    assert audit.clearest_hacked_seed(stored_by_seed, {s: evals(e) for s, e in ends.items()}) == 2
    assert audit.clearest_hacked_seed({0: honest}, {0: evals(0.0)}) is None


def test_loophole_rate_is_zero_for_the_exact_verifier_itself():
    from rlbook.core.policy import Policy, PolicyConfig

    torch.manual_seed(0)
    policy = Policy(PolicyConfig())
    assert audit.loophole_rate(policy, [P1, P2], rw.get_verifier("exact"), n=8) == 0.0
    rate = audit.loophole_rate(policy, [P1, P2], rw.get_verifier("fail-open"), n=8)
    assert 0.0 <= rate <= 1.0
