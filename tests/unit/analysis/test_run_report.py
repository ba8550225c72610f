"""Tests for rlbook.analysis.run_report (chapter 8): the record, its differences and the misconceptions, by hand."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from rlbook import record as rec
from rlbook.analysis import run_report
from rlbook.core import rewards as rw
from rlbook.core.evaluate import EvalResult
from rlbook.core.world import EOT, Task, encode


def _result(tasks, completions, verifier=None, **settings) -> EvalResult:
    """An EvalResult scored by ``verifier`` (exact 1.0 by default), laid out like evaluate's."""
    verifier = verifier or rw.ExactVerifier("1.0")
    verdicts = [[verifier(t.prompt, c) for c in row] for t, row in zip(tasks, completions)]
    base = {
        "n": len(completions[0]),
        "temperature": 1.0,
        "token_budget": 4,
        "decoding": "sample",
        "seed": 0,
        "verifier": f"{verifier.name}@{verifier.version}",
        "policy_version": "p",
        "template": "U:a+b?|A:",
    }
    return EvalResult(
        list(tasks),
        np.array([[v.reward for v in row] for row in verdicts]),
        [[v.status for v in row] for row in verdicts],
        [list(r) for r in completions],
        dict(base, **settings),
    )


def _stored(step: int, prompts: list[str], completions: list[str], verifier) -> dict:
    """One step of stored rollouts, laid out as rlbook.core.rl stores them (group size len(completions) // len(prompts))."""
    group = len(completions) // len(prompts)
    flat = [p for p in prompts for _ in range(group)]
    tokens = torch.full((len(completions), 4), encode(EOT)[0], dtype=torch.uint8)
    for i, text in enumerate(completions):
        tokens[i, : len(text)] = torch.tensor(encode(text), dtype=torch.uint8)
    verdicts = [verifier(p, c) for p, c in zip(flat, completions)]
    return {
        "step": step,
        "prompts": prompts,
        "tokens": tokens,
        "lengths": torch.tensor([len(c) for c in completions], dtype=torch.uint8),
        "rewards": torch.tensor([v.reward for v in verdicts]),
        "statuses": torch.tensor([rw.STATUSES.index(v.status) for v in verdicts], dtype=torch.uint8),
        "used": torch.ones(len(completions), dtype=torch.bool),
    }


def test_reward_hack_count_counts_paid_but_rejected_rollouts():
    prompt = Task((3, 4)).prompt
    fail_open = rw.FailOpenVerifier()
    hacked = SimpleNamespace(rollouts=[_stored(1, [prompt], ["#", "7#", "6#", "#"], fail_open)])
    assert run_report.reward_hack_count(hacked) == (2, 4)  # the two empty answers are paid but not accepted


def test_zero_variance_rollouts_weights_each_step_by_its_size():
    run = SimpleNamespace(
        metrics=[{"zero_variance_frac": 0.5}, {"zero_variance_frac": 0.25}],
        rollouts=[{"tokens": torch.zeros(8, 4)}, {"tokens": torch.zeros(8, 4)}],
    )
    assert run_report.zero_variance_rollouts(run) == (6, 16)


def test_process_disagreements_by_hand():
    task = Task((1, 2, 3))  # 1+2 = 3, 3+3 = 6
    result = _result([task], [["3,6#", "4,6#", "4,7#", "3,7#"]])
    # accepted: 3,6 (valid) and 4,6 (both steps invalid); rejected: 4,7 (wrong then consistent), 3,7 (valid then wrong)
    got = run_report.process_disagreements(result)
    assert got == {
        "right_but_invalid_step": 0.5,
        "wrong_but_consistent": 0.5,
        "invalid_step": 1,
        "accepted": 2,
        "consistent": 1,
        "rejected": 2,
    }


def _record(**changes) -> dict:
    config = {
        "seed": 0,
        "threads": 2,
        "base_policy": {"name": "base", "version": "base@sft", "weights_hash": "h"},
        "prompt_template": "U:a+b?|A:",
        "prompt_split": {"world": "single", "train": "train", "counts": {"train": 60}},
        "sampling": {"temperature": 1.0, "group_size": 16, "prompts_per_step": 60, "token_budget": 4},
        "verifier": {"name": "exact", "version": "1.0", "implementation": "rlbook.core.rewards.ExactVerifier"},
        "advantage": {"method": "centered", "eps": None, "ddof": None},
        "update": {
            "loss": "ppo",
            "clip": None,
            "aggregation": "token_mean",
            "lr": 3e-4,
            "optimizer": "AdamW",
            "steps": 20,
            "updates_per_batch": 1,
            "schedule": "constant",
        },
        "reference": {"kl_beta": 0.0, "estimator": None, "policy": None},
    }
    record = rec.new_record("main", **config)
    for step in (0, 10, 20):
        rec.add_checkpoint(record, step, step, f"ckpt/{step}", f"h{step}")
        rec.add_evaluation(record, step, "heldout", 32, 1.0, 4, "expected_reward", 0.5)
    record.update(status="completed", **changes)
    return rec.validate(record)


def test_record_differences_skip_ids_and_find_setup_changes():
    a = _record()
    b = _record(verifier={"name": "fail-open", "version": "1.0", "implementation": "x"})
    diff = run_report.record_differences(a, b)
    assert ("verifier.name", "exact", "fail-open") in diff
    assert ("verifier.implementation", "rlbook.core.rewards.ExactVerifier", "x") in diff
    assert not any(k.startswith(("run_id", "created", "checkpoints")) for k, _, _ in diff)
    assert run_report.record_differences(a, a) == []


def test_interrupted_copy_validates_and_drops_later_checkpoints():
    record = _record()
    stopped = run_report.interrupted_copy(record, 10, "partial/state.pt")
    rec.validate(stopped)
    assert stopped["status"] == "interrupted" and stopped["interrupted"] == {
        "step": 10,
        "last_checkpoint": "partial/state.pt",
    }
    assert [c["step"] for c in stopped["checkpoints"]] == [0, 10]
    assert [e["step"] for e in stopped["evaluations"]] == [0, 10]
    assert record["status"] == "completed" and len(record["checkpoints"]) == 3  # the original is untouched
    with_steps = dict(record, steps_completed=20)
    assert run_report.interrupted_copy(with_steps, 10, None)["steps_completed"] == 10
    with pytest.raises(rec.RecordError, match="interrupted"):
        rec.validate(dict(stopped, interrupted=None))


def test_record_rows_show_each_field_as_code():
    rows = run_report.record_rows(_record())
    assert rows[0] == ["`schema_version`", "1"] and ["`verifier.name`", "exact"] in rows
