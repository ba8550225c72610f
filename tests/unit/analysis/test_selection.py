"""Tests for rlbook.analysis.selection (chapter 8): worked by hand on small fake runs and evaluations."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from rlbook import rewards as rw
from rlbook.analysis import selection as sel
from rlbook.core.evaluate import EvalResult
from rlbook.core.stats import Estimate
from rlbook.core.world import Task, split


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


def _entry(step: int, heldout: list[float], train: list[float]) -> dict:
    return {"step": step, "heldout_per_prompt": heldout, "train_per_prompt": train}


def _fake_run(evals: list[dict]) -> SimpleNamespace:
    return SimpleNamespace(evals=evals, record={"prompt_split": {"world": "single"}})


def _scores(values: list[tuple[int, float, float]]) -> list[sel.CheckpointScores]:
    """(step, train reward, validation) -> CheckpointScores with zero-width intervals."""
    est = lambda v: Estimate(v, v, v)
    return [sel.CheckpointScores(step, est(t), est(0.0), est(v), est(v / 2)) for step, t, v in values]


def test_heldout_positions_partition_the_heldout_split():
    val, test = sel.heldout_positions("validation"), sel.heldout_positions("test")
    assert sorted(val + test) == list(range(40))
    heldout = split("heldout")
    assert [heldout[i].operands for i in val] == [t.operands for t in split("validation")]
    assert [heldout[i].operands for i in test] == [t.operands for t in split("test")]


def test_part_rates_follow_the_tasks():
    rates = [i / 40 for i in range(40)]
    entry = _entry(0, rates, [0.5])
    assert sel.part_rates(entry, "heldout").tolist() == rates
    expected = [rates[i] for i in sel.heldout_positions("test")]
    assert sel.part_rates(entry, "test").tolist() == expected


def test_checkpoint_scores_are_means_over_prompts():
    evals = [_entry(0, [0.0] * 40, [1.0, 0.0]), _entry(10, [1.0] * 20 + [0.0] * 20, [1.0, 1.0])]
    scores = sel.checkpoint_scores(_fake_run(evals))
    assert [s.step for s in scores] == [0, 10]
    assert scores[0].train_reward.value == 0.5 and scores[1].train_reward.value == 1.0
    assert scores[0].heldout == Estimate(0.0, 0.0, 0.0)
    assert scores[1].heldout.value == 0.5 and scores[1].heldout.lo < 0.5 < scores[1].heldout.hi
    halves = np.array([1.0] * 20 + [0.0] * 20)
    assert scores[1].test.value == pytest.approx(halves[sel.heldout_positions("test")].mean())


def test_select_checkpoint_rules():
    scores = _scores([(0, 0.5, 0.6), (10, 0.9, 0.4), (20, 0.7, 0.8), (30, 0.9, 0.8)])
    assert sel.select_checkpoint(scores, "training reward").step == 10  # tie with 30: earliest wins
    assert sel.select_checkpoint(scores, "validation accuracy").step == 20  # tie with 30: earliest wins
    assert sel.select_checkpoint(scores, "fixed budget").step == 30
    assert sel.select_checkpoint(scores, "fixed budget", budget_step=10).step == 10
    with pytest.raises(ValueError, match="no checkpoint at step 15"):
        sel.select_checkpoint(scores, "fixed budget", budget_step=15)
    with pytest.raises(ValueError, match="unknown rule"):
        sel.select_checkpoint(scores, "best test")


def test_selection_rows_report_criterion_and_test_score():
    rows = sel.selection_rows(_scores([(0, 0.5, 0.6), (10, 0.9, 0.4)]))
    assert [(r["rule"], r["step"]) for r in rows] == [
        ("training reward", 10),
        ("validation accuracy", 0),
        ("fixed budget", 10),
    ]
    assert rows[0]["criterion"].value == 0.9 and rows[1]["criterion"].value == 0.6 and rows[2]["criterion"] is None
    assert rows[1]["test"].value == 0.3


def test_matched_difference_pairs_prompts_and_refuses_mismatch():
    tasks = [Task((1, 2)), Task((3, 4))]
    before = _result(tasks, [["3#", "4#"], ["1#", "1#"]])  # rates 0.5, 0
    after = _result(tasks, [["3#", "3#"], ["7#", "1#"]], policy_version="q")  # rates 1, 0.5
    diff = sel.matched_difference(after, before)
    assert diff.value == pytest.approx(0.5) and diff.lo == diff.hi == pytest.approx(0.5)  # both prompts gain 0.5
    hot = _result(tasks, [["3#", "3#"], ["7#", "1#"]], temperature=0.5)
    assert sel.unmatched_settings(hot, before) == ["temperature"]
    with pytest.raises(sel.UnmatchedComparison, match="temperature: 0.5 vs 1.0"):
        sel.matched_difference(hot, before)
    other = _result([Task((1, 2)), Task((3, 5))], [["3#", "3#"], ["8#", "1#"]])
    with pytest.raises(ValueError, match="tasks"):
        sel.matched_difference(other, before)


def test_per_prompt_pass_at_k_by_hand():
    tasks = [Task((1, 1)), Task((1, 2)), Task((1, 3))]
    result = _result(tasks, [["2#", "0#", "0#", "0#"], ["0#"] * 4, ["4#"] * 4])
    # prompt 1: 1 - C(3,2)/C(4,2) = 1 - 3/6
    assert sel.per_prompt_pass_at_k(result, 2).tolist() == pytest.approx([0.5, 0.0, 1.0])
    assert sel.per_prompt_pass_at_k(result, 1).tolist() == pytest.approx([0.25, 0.0, 1.0])


def test_plain_format_helpers():
    assert sel.plain_prompt(Task((3, 4))) == "3+4="
    assert sel.read_plain_answer(" 7\n3+") == "7"
    assert sel.read_plain_answer("1 2\n") == "12"
    assert sel.read_plain_answer("+8=") == "+8="


def test_plain_equation_accuracy_reads_greedy_continuations(monkeypatch):
    tasks = [Task((3, 4)), Task((4, 4)), Task((5, 5))]
    seen = {}

    def fake_sample(policy, prompts, n, budget, greedy):
        seen.update(prompts=prompts, greedy=greedy)
        return SimpleNamespace(completions=lambda: ["7\n1", " 8\n", "9\n"])

    monkeypatch.setattr(sel, "sample", fake_sample)
    assert sel.plain_equation_accuracy(None, tasks) == pytest.approx(2 / 3)
    assert seen == {"prompts": ["3+4=", "4+4=", "5+5="], "greedy": True}


def test_select_with_floor_keeps_only_checkpoints_that_retain_the_capability():
    scores = _scores([(0, 0.5, 0.4), (10, 0.6, 0.5), (20, 0.7, 0.9), (30, 0.8, 0.7)])
    retained = {0: 0.85, 10: 0.80, 20: 0.70, 30: 0.76}
    assert sel.select_with_floor(scores, retained, 0.1).step == 30  # 20 lost 0.15: excluded
    assert sel.select_with_floor(scores, retained, 0.2).step == 20
    assert sel.select_with_floor(scores, {0: 0.9, 10: 0.1, 20: 0.1, 30: 0.1}, 0.1).step == 0  # step 0 always qualifies
