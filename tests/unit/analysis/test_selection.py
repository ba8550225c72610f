"""Tests for rlbook.analysis.selection (chapter 5): worked by hand on small fake runs and evaluations."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from rlbook import record as rec
from rlbook import rewards as rw
from rlbook import selection as sel
from rlbook.core.evaluate import EvalResult
from rlbook.core.stats import Estimate
from rlbook.core.world import EOT, Task, encode, split


def _result(tasks, completions, verifier=None, **settings) -> EvalResult:
    """An EvalResult scored by ``verifier`` (exact 1.0 by default), laid out like evaluate's."""
    verifier = verifier or rw.ExactVerifier("1.0")
    verdicts = [[verifier(t.prompt, c) for c in row] for t, row in zip(tasks, completions)]
    base = {"n": len(completions[0]), "temperature": 1.0, "token_budget": 4, "decoding": "sample", "seed": 0,
            "verifier": f"{verifier.name}@{verifier.version}", "policy_version": "p", "template": "U:a+b?|A:"}
    return EvalResult(list(tasks), np.array([[v.reward for v in row] for row in verdicts]),
                      [[v.status for v in row] for row in verdicts], [list(r) for r in completions],
                      dict(base, **settings))


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
    assert [(r["rule"], r["step"]) for r in rows] == [("training reward", 10), ("validation accuracy", 0),
                                                      ("fixed budget", 10)]
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


def test_rescore_and_version_rows():
    tasks = [Task((3, 4))]
    before = _result(tasks, [["7#", "8#"]])  # 1.0: [1, 0]
    after = _result(tasks, [[" 7#", "7#"]], policy_version="q")  # 1.0: [0, 1]; 2.0: [1, 1]
    v1, v2 = rw.ExactVerifier("1.0"), rw.ExactVerifier("2.0")
    lenient = sel.rescore(after, v2)
    assert lenient.rewards.tolist() == [[1.0, 1.0]] and lenient.settings["verifier"] == "exact@2.0"
    assert lenient.completions == after.completions and after.rewards.tolist() == [[0.0, 1.0]]
    assert sel.version_flips(after, v1, v2) == 1 and sel.version_flips(before, v1, v2) == 0
    rows = {(r["before_verifier"], r["after_verifier"]): r for r in sel.version_rows(before, after)}
    assert rows["exact@1.0", "exact@1.0"]["difference"].value == pytest.approx(0.0)
    assert rows["exact@1.0", "exact@2.0"]["difference"].value == pytest.approx(0.5)
    assert not rows["exact@1.0", "exact@2.0"]["same_verifier"] and rows["exact@2.0", "exact@2.0"]["same_verifier"]
    hacked = _result(tasks, [["#", "8#"]], policy_version="q")  # exact: [0, 0]; fail-open pays the unreadable "#"
    rows = {(r["before_verifier"], r["after_verifier"]): r["difference"].value
            for r in sel.version_rows(before, hacked, (v1, rw.FailOpenVerifier()))}
    assert rows["exact@1.0", "exact@1.0"] == pytest.approx(-0.5) and rows["exact@1.0", "fail-open@1.0"] == pytest.approx(0.0)


def _stored(step: int, prompts: list[str], completions: list[str], verifier) -> dict:
    """One step of stored rollouts, laid out as rlbook.core.rl stores them (group size len(completions) // len(prompts))."""
    group = len(completions) // len(prompts)
    flat = [p for p in prompts for _ in range(group)]
    tokens = torch.full((len(completions), 4), encode(EOT)[0], dtype=torch.uint8)
    for i, text in enumerate(completions):
        tokens[i, :len(text)] = torch.tensor(encode(text), dtype=torch.uint8)
    verdicts = [verifier(p, c) for p, c in zip(flat, completions)]
    return {"step": step, "prompts": prompts, "tokens": tokens,
            "lengths": torch.tensor([len(c) for c in completions], dtype=torch.uint8),
            "rewards": torch.tensor([v.reward for v in verdicts]),
            "statuses": torch.tensor([rw.STATUSES.index(v.status) for v in verdicts], dtype=torch.uint8),
            "used": torch.ones(len(completions), dtype=torch.bool)}


def test_training_flips_and_reward_hack_count():
    prompt = Task((3, 4)).prompt
    exact = rw.ExactVerifier("1.0")
    run = SimpleNamespace(rollouts=[_stored(1, [prompt], [" 7#", "7#"], exact), _stored(2, [prompt], ["7#", "6#"], exact)])
    assert sel.training_flips(run, exact, rw.ExactVerifier("2.0")) == {1: 1}
    fail_open = rw.FailOpenVerifier()
    hacked = SimpleNamespace(rollouts=[_stored(1, [prompt], ["#", "7#", "6#", "#"], fail_open)])
    assert sel.reward_hack_count(hacked) == (2, 4)  # the two empty answers are paid but not accepted


def test_zero_variance_rollouts_weights_each_step_by_its_size():
    run = SimpleNamespace(metrics=[{"zero_variance_frac": 0.5}, {"zero_variance_frac": 0.25}],
                          rollouts=[{"tokens": torch.zeros(8, 4)}, {"tokens": torch.zeros(8, 4)}])
    assert sel.zero_variance_rollouts(run) == (6, 16)


def test_process_disagreements_by_hand():
    task = Task((1, 2, 3))  # 1+2 = 3, 3+3 = 6
    result = _result([task], [["3,6#", "4,6#", "4,7#", "3,7#"]])
    # accepted: 3,6 (valid) and 4,6 (both steps invalid); rejected: 4,7 (wrong then consistent), 3,7 (valid then wrong)
    got = sel.process_disagreements(result)
    assert got == {"right_but_invalid_step": 0.5, "wrong_but_consistent": 0.5, "accepted": 2, "rejected": 2}


def _record(**changes) -> dict:
    config = {"seed": 0, "threads": 2, "base_policy": {"name": "base", "version": "base@sft", "weights_hash": "h"},
              "prompt_template": "U:a+b?|A:",
              "prompt_split": {"world": "single", "train": "train", "counts": {"train": 60}},
              "sampling": {"temperature": 1.0, "group_size": 16, "prompts_per_step": 60, "token_budget": 4},
              "verifier": {"name": "exact", "version": "1.0", "implementation": "rlbook.core.rewards.ExactVerifier"},
              "advantage": {"method": "centered", "eps": None, "ddof": None},
              "update": {"loss": "ppo", "clip": None, "aggregation": "token_mean", "lr": 3e-4, "optimizer": "AdamW",
                         "steps": 20, "updates_per_batch": 1, "schedule": "constant"},
              "reference": {"kl_beta": 0.0, "estimator": None, "policy": None}}
    record = rec.new_record("main", **config)
    for step in (0, 10, 20):
        rec.add_checkpoint(record, step, step, f"ckpt/{step}", f"h{step}")
        rec.add_evaluation(record, step, "heldout", 32, 1.0, 4, "expected_reward", 0.5)
    record.update(status="completed", **changes)
    return rec.validate(record)


def test_record_differences_skip_ids_and_find_setup_changes():
    a = _record()
    b = _record(verifier={"name": "fail-open", "version": "1.0", "implementation": "x"})
    diff = sel.record_differences(a, b)
    assert ("verifier.name", "exact", "fail-open") in diff
    assert ("verifier.implementation", "rlbook.core.rewards.ExactVerifier", "x") in diff
    assert not any(k.startswith(("run_id", "created", "checkpoints")) for k, _, _ in diff)
    assert sel.record_differences(a, a) == []


def test_interrupted_copy_validates_and_drops_later_checkpoints():
    record = _record()
    stopped = sel.interrupted_copy(record, 10, "partial/state.pt")
    rec.validate(stopped)
    assert stopped["status"] == "interrupted" and stopped["interrupted"] == {"step": 10, "last_checkpoint": "partial/state.pt"}
    assert [c["step"] for c in stopped["checkpoints"]] == [0, 10]
    assert [e["step"] for e in stopped["evaluations"]] == [0, 10]
    assert record["status"] == "completed" and len(record["checkpoints"]) == 3  # the original is untouched
    with pytest.raises(rec.RecordError, match="interrupted"):
        rec.validate(dict(stopped, interrupted=None))
