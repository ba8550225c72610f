"""Tests for rlbook.analysis.versions (chapter 8): the same samples judged by two verifier versions, by hand."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from rlbook.analysis import versions
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


def test_rescore_and_version_rows():
    tasks = [Task((3, 4))]
    before = _result(tasks, [["7#", "8#"]])  # 1.0: [1, 0]
    after = _result(tasks, [[" 7#", "7#"]], policy_version="q")  # 1.0: [0, 1]; 2.0: [1, 1]
    v1, v2 = rw.ExactVerifier("1.0"), rw.ExactVerifier("2.0")
    lenient = versions.rescore(after, v2)
    assert lenient.rewards.tolist() == [[1.0, 1.0]] and lenient.settings["verifier"] == "exact@2.0"
    assert lenient.completions == after.completions and after.rewards.tolist() == [[0.0, 1.0]]
    assert versions.version_flips(after, v1, v2) == 1 and versions.version_flips(before, v1, v2) == 0
    rows = {(r["before_verifier"], r["after_verifier"]): r for r in versions.version_rows(before, after)}
    assert rows["exact@1.0", "exact@1.0"]["difference"].value == pytest.approx(0.0)
    assert rows["exact@1.0", "exact@2.0"]["difference"].value == pytest.approx(0.5)
    assert not rows["exact@1.0", "exact@2.0"]["same_verifier"] and rows["exact@2.0", "exact@2.0"]["same_verifier"]
    hacked = _result(tasks, [["#", "8#"]], policy_version="q")  # exact: [0, 0]; fail-open pays the unreadable "#"
    rows = {
        (r["before_verifier"], r["after_verifier"]): r["difference"].value
        for r in versions.version_rows(before, hacked, (v1, rw.FailOpenVerifier()))
    }
    assert rows["exact@1.0", "exact@1.0"] == pytest.approx(-0.5) and rows[
        "exact@1.0", "fail-open@1.0"
    ] == pytest.approx(0.0)


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


def test_training_flips_counts_rollouts_per_step():
    prompt = Task((3, 4)).prompt
    exact = rw.ExactVerifier("1.0")
    run = SimpleNamespace(
        rollouts=[_stored(1, [prompt], [" 7#", "7#"], exact), _stored(2, [prompt], ["7#", "6#"], exact)]
    )
    assert versions.training_flips(run, exact, rw.ExactVerifier("2.0")) == {1: 1}


def test_one_flip_changes_every_advantage_of_its_group():
    a, b = Task((3, 4)).prompt, Task((2, 2)).prompt
    exact = rw.ExactVerifier("1.0")
    # step 1: group a holds one padded right answer (a flip), group b none; step 2: no flip at all
    run = SimpleNamespace(
        rollouts=[
            _stored(1, [a, b], [" 7#", "7#", "6#", "5#", "4#", "4#", "3#", "4#"], exact),
            _stored(2, [a, b], ["7#", "7#", "7#", "7#", "4#", "4#", "4#", "4#"], exact),
        ],
        record={"advantage": {"method": "centered"}},
    )
    got = versions.changed_advantages(run, exact, rw.ExactVerifier("2.0"))
    assert got == {"flipped": 1, "groups": 1, "advantages": 4}
    # all-equal groups stay silent however a flip lands: a group that becomes all right keeps zero advantages
    run.rollouts = [_stored(1, [a], [" 7#", "6#"], exact)]
    assert versions.changed_advantages(run, exact, rw.ExactVerifier("2.0"))["advantages"] == 2
