"""Tests for rlbook.analysis.audit (chapter 4), on small batches worked by hand."""
from __future__ import annotations

import pytest
import torch
from policies import constant_policy

from rlbook import audit
from rlbook import rewards as rw
from rlbook.core.world import EOT_ID, Task, encode

P1, P2 = "U:3+4?|A:", "U:5+5?|A:"


def batch(prompts, completions, verifier="exact", group_size=4, step=None):
    """An audit batch of the given completions, judged by the named verifier."""
    rows = [p for p in prompts for _ in range(group_size)]
    rewards, statuses = rw.score(rw.get_verifier(verifier), rows, completions)
    return audit.AuditBatch(rows, completions, statuses, rewards, group_size, step)


def stored(step, prompts, completions, verifier="exact", used=None, budget=4):
    """A stored per-step rollout dict, laid out as rlbook.core.rl keeps it."""
    rows = [p for p in prompts for _ in range(len(completions) // len(prompts))]
    rewards, statuses = rw.score(rw.get_verifier(verifier), rows, completions)
    tokens = torch.full((len(completions), budget), EOT_ID, dtype=torch.uint8)
    for i, text in enumerate(completions):
        tokens[i, : len(text)] = torch.tensor(encode(text), dtype=torch.uint8)
    return {"step": step, "prompts": list(prompts), "tokens": tokens,
            "lengths": torch.tensor([len(c) for c in completions], dtype=torch.uint8),
            "rewards": torch.tensor(rewards, dtype=torch.float32),
            "statuses": torch.tensor([rw.STATUSES.index(s) for s in statuses], dtype=torch.uint8),
            "used": torch.ones(len(completions), dtype=torch.bool) if used is None else torch.tensor(used)}


# Group 1 (3+4): right, right again, wrong, malformed.
# Group 2 (5+5): wrong, budget-stopped, wrong again, right.
EIGHT = ["7#", "7#", "8#", "7,7#", "11#", "10", "11#", "10#"]


def test_categorise_applies_the_rules_in_order():
    labels = audit.categorise(batch([P1, P2], EIGHT))
    assert labels == ["accepted", "duplicate", "incorrect", "malformed",
                      "incorrect", "budget-stopped", "duplicate", "accepted"]


def test_duplicates_are_counted_within_a_group_only():
    # The same text under two prompts is not a duplicate.
    labels = audit.categorise(batch([P1, P2], ["7#"] * 4 + ["7#"] * 4))
    assert labels.count("duplicate") == 6
    assert labels[0] == "accepted" and labels[4] == "incorrect"


def test_repeated_malformed_answers_stay_malformed():
    labels = audit.categorise(batch([P1], ["#", "#", "#", "7#"]))
    assert labels == ["malformed", "malformed", "malformed", "accepted"]


def test_composition_shares_sum_to_one():
    shares = audit.composition(batch([P1, P2], EIGHT))
    assert shares == {"accepted": 2 / 8, "incorrect": 2 / 8, "duplicate": 2 / 8, "malformed": 1 / 8,
                      "budget-stopped": 1 / 8, "unverifiable": 0.0}
    assert sum(shares.values()) == pytest.approx(1.0)


def test_duplicate_shares_split_by_what_is_repeated():
    assert audit.duplicate_shares(batch([P1, P2], EIGHT)) == {"accepted": 1 / 8, "incorrect": 1 / 8}


def test_novelty_counts_pairs_unseen_in_earlier_batches():
    first = batch([P1], ["7#", "7#", "8#", "9#"])
    second = batch([P1], ["7#", "6#", "6#", "8#"])
    third = batch([P2], ["7#", "7#", "7#", "7#"])  # same text, new prompt: novel
    out = audit.novelty([first, second, third])
    assert [o["novel_share"] for o in out] == [1.0, 0.5, 1.0]
    assert [o["novel_answers"] for o in out] == [3, 1, 1]
    assert [o["seen_answers"] for o in out] == [3, 4, 5]


def test_from_stored_round_trips_the_rollouts():
    s = stored(3, [P1, P2], EIGHT)
    b = audit.from_stored(s)
    assert b.completions == EIGHT and b.group_size == 4 and b.step == 3
    assert b.prompts[:5] == [P1] * 4 + [P2]
    assert b.tokens == sum(len(c) for c in EIGHT)
    assert audit.composition(b) == audit.composition(batch([P1, P2], EIGHT))


def test_rescoring_a_fail_open_batch_with_the_exact_verifier():
    s = stored(1, [P1], ["#", "#", "7#", "8#"], verifier="fail-open")
    b = audit.from_stored(s)
    assert b.statuses == ["accepted", "accepted", "accepted", "incorrect"]
    assert audit.from_stored(s, rw.get_verifier("exact")).statuses == ["malformed", "malformed", "accepted", "incorrect"]
    assert audit.loophole_rows(b).tolist() == [True, True, False, False]


def test_run_composition_over_steps():
    steps = [stored(1, [P1], ["7#", "8#", "8#", "9#"]), stored(2, [P1], ["7#", "7#", "7#", "6#"])]
    rows = audit.run_composition(steps)
    assert [r["step"] for r in rows] == [1, 2]
    assert rows[1]["accepted"] == 0.25 and rows[1]["duplicate"] == 0.5 and rows[1]["duplicate_accepted"] == 0.5
    assert rows[1]["novel_share"] == 0.25 and rows[1]["novel_answers"] == 1
    assert rows[0]["reward_mean"] == 0.25 and rows[1]["reward_mean"] == 0.75
    assert rows[0]["tokens"] == 8


def test_reward_split_and_takeover():
    steps = [stored(1, [P1], ["7#", "8#", "8#", "#"], verifier="fail-open"),
             stored(2, [P1], ["#", "#", "#", "7#"], verifier="fail-open")]
    assert audit.reward_split(steps[0]) == (0.25, 0.25)
    assert audit.reward_split(steps[1]) == (0.25, 0.75)
    assert audit.loophole_share(steps) == [0.25, 0.75]
    assert audit.takeover_step(steps) == 2
    assert audit.takeover_step(steps, share=0.8) is None


def test_dip_before_takeover_finds_the_poorest_batch_before_the_loophole_paid_for_most():
    steps = [stored(1, [P1], ["7#", "7#", "8#", "8#"], verifier="fail-open"),
             stored(2, [P1], ["8#", "8#", "8#", "#"], verifier="fail-open"),
             stored(3, [P1], ["#", "#", "#", "8#"], verifier="fail-open")]
    dip = audit.dip_before_takeover(steps)
    assert (dip["step"], dip["reward"], dip["share"], dip["right"]) == (2, 0.25, 0.25, 0.0)
    assert (dip["first_step"], dip["first_reward"], dip["first_right"]) == (1, 0.5, 0.5)
    assert audit.dip_before_takeover(steps[:2]) is None  # the loophole never paid for more than half


def test_exploiting_completions_names_both_verdicts():
    s = stored(2, [P1], ["#", "#", " 7#", "7#"], verifier="fail-open")
    rows = audit.exploiting_completions(s, rw.get_verifier("fail-open"))
    assert [(r["completion"], r["count"], r["status"]) for r in rows] == [("#", 2, "malformed"), (" 7#", 1, "malformed")]
    assert "fail-open" in rows[0]["paid_reason"]


def test_mixed_group_rate_by_hand():
    # n=4 samples, c=2 right, groups of k=2: 6 pairs, 1 all-wrong, 1 all-right -> 4/6 mixed.
    assert audit.mixed_group_rate(4, 2, 2) == pytest.approx(4 / 6)
    assert audit.mixed_group_rate(4, 0, 3) == 0.0 and audit.mixed_group_rate(4, 4, 3) == 0.0
    assert audit.mixed_group_rate(4, 1, 1) == 0.0  # a group of one never mixes
    with pytest.raises(ValueError):
        audit.mixed_group_rate(4, 5, 2)


def test_hack_report_flags_reward_without_heldout_gain():
    evals = [{"step": 0, "train_reward": 0.7, "train_exact_reward": 0.7, "heldout_expected_reward": 0.5},
             {"step": 5, "train_reward": 0.75, "train_exact_reward": 0.6, "heldout_expected_reward": 0.4},
             {"step": 10, "train_reward": 0.95, "train_exact_reward": 0.1, "heldout_expected_reward": 0.0}]
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
        return [{"step": step, "train_reward": 0.5, "train_exact_reward": 0.5, "heldout_expected_reward": h}
                for step, h in ((0, 0.4), (10, end))]

    stored_by_seed = {0: honest, 1: hacked, 2: hacked, 3: hacked}
    ends = {0: 0.0, 1: 0.2, 2: 0.01, 3: 0.01}  # seed 0 ends lowest, but its loophole never took over
    assert audit.clearest_hacked_seed(stored_by_seed, {s: evals(e) for s, e in ends.items()}) == 2
    assert audit.clearest_hacked_seed({0: honest}, {0: evals(0.0)}) is None


def test_selection_counts_report_what_was_dropped():
    s = stored(1, [P1], ["7#", "8#", "#", "7"], used=[True, False, False, False])
    assert audit.selection_counts([s, s]) == {"generated": 8, "kept": 2, "dropped_incorrect": 2,
                                              "dropped_malformed": 2, "dropped_incomplete": 2}


def test_incidents_join_interventions_with_their_rollouts():
    s = stored(8, [P1], ["7#", "8#", "7#", "7#"])
    s["statuses"][:] = rw.STATUSES.index("unverifiable")
    log = {"rollouts": [s], "aborted_updates": [],
           "interventions": [{"step": 8, "kind": "updates paused", "reason": "verifier raised",
                              "trigger": {"metric": "verifier_error_rate", "value": 1.0, "threshold": 0.1},
                              "affected_rollouts": 4}]}
    (row,) = audit.incidents(log)
    assert row["metric"] == "verifier_error_rate" and row["unverifiable_share"] == 1.0
    assert row["rollouts"] == 4 and row["aborted_update"] is None


def test_first_alarm_sees_only_the_past():
    metrics = [{"step": s, "x": x} for s, x in [(1, 0), (2, 5), (3, 0)]]
    seen = []

    def rule(history):
        seen.append(len(history))
        return history[-1]["x"] > 1

    assert audit.first_alarm(rule, metrics) == 2 and seen == [1, 2]
    assert audit.first_alarm(lambda h: False, metrics) is None


def test_loophole_rate_is_zero_for_the_exact_verifier_itself():
    from rlbook.core.policy import Policy, PolicyConfig

    torch.manual_seed(0)
    policy = Policy(PolicyConfig())
    assert audit.loophole_rate(policy, [P1, P2], rw.get_verifier("exact"), n=8) == 0.0
    rate = audit.loophole_rate(policy, [P1, P2], rw.get_verifier("fail-open"), n=8)
    assert 0.0 <= rate <= 1.0


def test_temperature_audit_on_a_tiny_policy():
    from rlbook.core.policy import Policy, PolicyConfig

    torch.manual_seed(0)
    policy = Policy(PolicyConfig())
    rows = audit.temperature_audit(policy, [P1, P2], [0.5, 2.0], n=4, rounds=2, seed=1)
    assert [r["temperature"] for r in rows] == [0.5, 2.0]
    for r in rows:
        assert sum(r[c] for c in audit.CATEGORIES) == pytest.approx(1.0)
        assert 0.0 <= r["novel_share"] <= 1.0 and 1.0 <= r["tokens_per_rollout"] <= 4.0
        assert r["duplicate_accepted"] + r["duplicate_incorrect"] <= r["duplicate"] + 1e-12


def test_markdown_table_escapes_pipes_and_marks_code():
    text = audit.markdown_table(["completion", "n"], [["'2|#'", 3], ["'#'", 1]], code=[0])
    assert text.splitlines() == ["| completion | n |", "|---|---|", "| '2\\|#' | 3 |", "| `'#'` | 1 |"]


def test_sharpening_compares_first_and_late_steps():
    row = {"step": 0, "reward_mean": 0.5, "duplicate_accepted": 0.4, "accepted": 0.06, "novel_share": 0.1}
    flow = [dict(row, step=1, novel_share=1.0), dict(row, step=2, reward_mean=0.3, novel_share=0.2),
            dict(row, step=3), dict(row, step=4, reward_mean=0.8, duplicate_accepted=0.6, novel_share=0.0),
            dict(row, step=5, reward_mean=0.8, duplicate_accepted=0.6, novel_share=0.0)]
    out = audit.sharpening(flow, window=2)
    assert out["reward_gain"] == pytest.approx(0.3) and out["repeat_gain"] == pytest.approx(0.2)
    assert out["novel_early"] == pytest.approx(0.15) and out["novel_late"] == 0.0 and out["accepted_late"] == 0.06
    assert (out["dip_step"], out["dip_reward"]) == (2, 0.3)
    assert (out["novel_peak_step"], out["novel_peak"]) == (2, 0.2)


def test_own_format_accuracy_needs_the_sum_and_a_line_end():
    # '7' then a line end (0.5 x 0.5) is the only right ending of "3+4="; '7' alone never ends the line.
    halves = constant_policy({"7": 0.5, "\n": 0.5})
    share = audit.own_format_accuracy(halves, [Task((3, 4)), Task((2, 2))], n=4000, seed=0)
    assert share[0] == pytest.approx(0.25, abs=0.02) and share[1] == 0.0
    assert audit.own_format_accuracy(constant_policy({"7": 1.0}), [Task((3, 4))], greedy=True).tolist() == [0.0]


def test_own_format_accuracy_ignores_spaces():
    # Budget 3 for "2+2=": '4\n?' (1/16), ' 4\n' (1/32) and '4 \n' (1/32) are right, 1/8 in all.
    policy = constant_policy({" ": 0.5, "4": 0.25, "\n": 0.25})
    assert audit.own_format_accuracy(policy, [Task((2, 2))], n=8000, seed=1)[0] == pytest.approx(0.125, abs=0.01)


def test_own_format_accuracy_of_a_chain_expects_its_partial_sums():
    # "1+2+3=" expects '3,6': the final sum alone is wrong.
    assert audit.own_format_accuracy(constant_policy({"6": 0.5, "\n": 0.5}), [Task((1, 2, 3))], n=200).max() == 0.0
