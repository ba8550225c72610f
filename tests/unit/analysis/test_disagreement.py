"""Outcome and process verdicts side by side (rlbook.analysis.disagreement), on hand-made rollouts."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
import torch

from rlbook import disagreement as d
from rlbook import reward_spec
from rlbook import rewards as rw
from rlbook.core.evaluate import EvalResult
from rlbook.core.world import Task, encode

P = Task((3, 4, 5)).prompt  # s1 = 7, s2 = 12
HAND = {
    "7,12#": ("accepted", 1.0, d.AGREE),
    "6,12#": ("accepted", 0.0, d.RIGHT_INVALID),      # right final, s1 wrong, and 12 != 6+5
    "12,12#": ("accepted", 0.0, d.RIGHT_INVALID),
    "7,13#": ("incorrect", 0.5, d.PARTIAL_CREDIT),    # step 1 valid, step 2 not
    "6,11#": ("incorrect", 0.5, d.PARTIAL_CREDIT),    # step 1 wrong, step 2 consistent with it
    "6,13#": ("incorrect", 0.0, d.AGREE),
    "7,12#3": ("malformed", 1.0, d.VALID_MALFORMED),  # text after the end mark
    "7,12,12#": ("malformed", 1.0, d.VALID_MALFORMED),  # a third number
    " 7,12#": ("malformed", 0.0, d.AGREE),            # step 1 unreadable, so step 2 cannot be checked
    "7,12,1": ("incomplete", 1.0, d.VALID_INCOMPLETE),
    "7,1": ("incomplete", 0.5, d.PARTIAL_CREDIT),
}


@pytest.mark.parametrize("completion", HAND)
def test_each_hand_rollout_lands_in_the_worked_cell(completion):
    status, process, kind = HAND[completion]
    (j,) = d.judge([P], [completion])
    assert (j.status, j.process, j.kind) == (status, process, kind)
    assert j.disagrees == (kind in d.DISAGREEMENTS)


def test_matrix_counts_and_kind_counts():
    judged = d.judge([P] * len(HAND), list(HAND))
    counts, rows, columns = d.matrix(judged)
    assert rows == list(d.OUTCOME_ROWS) and columns == [1.0, 0.5, 0.0]
    assert counts.tolist() == [[1, 0, 2],   # accepted
                               [0, 2, 1],   # incorrect: never all steps valid
                               [2, 0, 1],   # malformed
                               [1, 1, 0]]   # incomplete
    assert d.kind_counts(judged) == {d.RIGHT_INVALID: 2, d.VALID_MALFORMED: 2, d.VALID_INCOMPLETE: 1,
                                     d.PARTIAL_CREDIT: 3, d.AGREE: 3}
    assert d.rate(judged, d.RIGHT_INVALID) == pytest.approx(2 / 11)
    table = d.matrix_markdown(judged)
    assert "| accepted | 1 (9.1%) | 0 (0.0%) | 2 (18.2%) | 3 |" in table
    assert table.splitlines()[0].startswith("| outcome status | 2 of 2 steps valid | 1 of 2 steps valid")


def test_judge_rejects_unpaired_lists():
    with pytest.raises(ValueError, match="2 prompts but 1 completions"):
        d.judge([P, P], ["7,12#"])


def test_bounded_sample_is_distinct_bounded_and_reproducible():
    completions = ["6,12#"] * 5 + ["12,12#", "5,12#", "4,12#", "3,12#"]
    judged = d.judge([P] * len(completions), completions)
    everything = d.bounded_sample(judged, d.RIGHT_INVALID, k=10)
    assert [j.completion for j in everything] == ["6,12#", "12,12#", "5,12#", "4,12#", "3,12#"]
    three = d.bounded_sample(judged, d.RIGHT_INVALID, k=3, seed=1)
    assert len(three) == 3 and three == d.bounded_sample(judged, d.RIGHT_INVALID, k=3, seed=1)
    assert [j.completion for j in three] == [j.completion for j in everything if j in three]  # order kept
    assert d.bounded_sample(judged, d.VALID_MALFORMED) == []


def test_logged_rollouts_repeats_each_group_prompt():
    texts = ["7,12#", "6,12", "9#", "10#"]
    tokens = torch.full((4, 8), 20, dtype=torch.uint8)
    for i, t in enumerate(texts):
        tokens[i, :len(t)] = torch.tensor(encode(t), dtype=torch.uint8)
    log = {"prompts": [P, Task((4, 5)).prompt], "tokens": tokens,
           "lengths": torch.tensor([len(t) for t in texts], dtype=torch.uint8)}
    prompts, completions = d.logged_rollouts(log)
    assert prompts == [P, P, Task((4, 5)).prompt, Task((4, 5)).prompt]
    assert completions == texts


def test_first_number_and_right_number_rejected():
    assert d.first_number(" =7\n3") == "7" and d.first_number("#") == "" and d.first_number("12#4") == "12"
    tasks = [Task((3, 4)), Task((4, 5))]
    completions = [["7#", " =7\n", "77#"], ["9 #", "8#", "9"]]
    statuses = [[rw.ExactVerifier()(t.prompt, c).status for c in row] for t, row in zip(tasks, completions)]
    result = EvalResult(tasks, np.array([[1.0, 0, 0], [0, 0, 0]]), statuses, completions)
    # rejected, first number the sum: ' =7\n' (incomplete), '9 #' (malformed), '9' (incomplete)
    assert d.right_number_rejected(result) == 3
    row = d.breakdown(result)
    assert row["samples"] == 6 and row["expected_reward"] == pytest.approx(1 / 6)
    assert (row["accepted"], row["incorrect"], row["malformed"], row["incomplete"]) == (1, 2, 1, 2)
    assert row["right_number_rejected"] == 3
    assert d.format_share(row) == pytest.approx(3 / 5)
    assert d.format_share({"samples": 2, "accepted": 2, "malformed": 0, "incomplete": 0}) == 0.0
    table = d.breakdown_markdown({"sft": row})
    assert table.splitlines()[2] == "| sft | 0.17 | 1 | 2 | 1 | 2 | 0 | 3 |"


def test_markdown_table_escapes_pipes_outside_code_only():
    table = d.markdown_table(["a", "b"], [["x|y", "`U:3+4?|A:`"], ["two\nlines", 3]], "lr")
    # separators as long as each column's longest cell: 'two lines' (9) and '`U:3+4?|A:`' (11)
    assert table.splitlines() == ["| a | b |", "|:---------|-----------:|", "| x\\|y | `U:3+4?|A:` |",
                                  "| two lines | 3 |"]
    with pytest.raises(ValueError):
        d.markdown_table(["a"], [["x", "y"]])
    assert d.markdown_table(["long"], [["x" * 100]]).splitlines()[1] == "|:" + "-" * d.MAX_RULE + "|"
    assert d.code("7\n#") == "`'7\\n#'`"
    assert d.quoted_as_code("answer ' 7' has a space") == "answer `' 7'` has a space"
    assert d.quoted_as_code("text after it: '7\n'") == "text after it: `'7\\n'`"


def test_spec_and_shortcut_tables_come_from_the_reward_spec():
    spec = d.spec_markdown(rw.ExactVerifier())
    assert spec.count("\n") == 1 + len(reward_spec.SPEC)
    assert "exact 1.0" in spec and "**end condition**" in spec
    assert d.shortcut_mismatches() == []
    rows = d.shortcut_rows()
    assert len(rows) == len(reward_spec.SHORTCUT_CASES)
    blind = next(r for r in rows if r["completion"] == "6,12#")
    assert (blind["status"], blind["reward"], blind["process"]) == ("accepted", 1.0, 0.0)
    assert next(r for r in rows if r["intended"] == "unverifiable")["process"] is None
    table = d.shortcut_markdown()
    assert table.count("\n") == 1 + len(reward_spec.SHORTCUT_CASES)
    assert "| empty prompt | (empty) | `'7#'` |" in table


def test_a_broken_verifier_shows_up_as_mismatches():
    mismatches = d.shortcut_mismatches(rw.FailOpenVerifier())
    assert any(r["completion"] == "#" and r["status"] == "accepted" for r in mismatches)


def test_step_notes_and_figure_rollouts():
    judged = d.judge([P] * 3, ["7,13#", "6,12#", "7,12#"])
    assert d.step_notes(judged[1]) == [("6", False, "step 1 6 \u2260 3+4 invalid"),
                                       ("12", False, "step 2 12 \u2260 6+5 invalid")]
    (missing,) = d.judge([P], ["7#"])
    assert d.step_notes(missing)[1] == ("", False, "step 2 missing")
    assert [j.completion for j in d.figure_rollouts(judged)] == ["7,12#", "6,12#"]
    assert [j.completion for j in d.figure_rollouts(judged[:1] + judged[2:])] == ["7,12#", "7,13#"]
    # A disagreement whose prompt has an agreeing rollout is preferred to an earlier one whose prompt has none.
    other = d.judge(["U:1+1+1?|A:"], ["3,3#"])
    assert [j.completion for j in d.figure_rollouts(other + judged)] == ["7,12#", "6,12#"]


def test_draw_rollout_puts_one_box_per_part():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    (j,) = d.judge([P], ["6,12#"])
    d.draw_rollout(ax, j, 0.0, title="a disagreement")
    texts = [t.get_text() for t in ax.texts]
    assert texts[:2] == ["a disagreement", P] and "6," in texts and "12" in texts and "accepted, reward 1" in texts
    assert "process score 0.0" in texts
    assert len(ax.patches) == 5  # prompt, two steps, end mark, outcome
    plt.close(fig)


class FakeRun:
    def __init__(self, seed, acc, val):
        self.seed = seed
        self.evals = [{"step": s, "heldout_expected_reward": a, "heldout_step_validity": v,
                       "heldout_greedy_accuracy": a} for s, a, v in zip((0, 80), acc, val)]


def test_compare_spread_and_wins():
    table = d.compare({"outcome": [FakeRun(0, (0.4, 0.5), (0.6, 0.4)), FakeRun(1, (0.4, 0.7), (0.6, 0.5))],
                       "shaped": [FakeRun(1, (0.4, 0.6), (0.6, 0.9)), FakeRun(0, (0.4, 0.6), (0.6, 0.8))]})
    assert table["outcome"][1] == {"seed": 1, "start_accuracy": 0.4, "end_accuracy": 0.7, "start_validity": 0.6,
                                   "end_validity": 0.5, "end_greedy": 0.7}
    assert d.wins(table, "shaped", "outcome", "end_validity") == 2
    assert d.wins(table, "shaped", "outcome", "end_accuracy") == 1   # seed 0: 0.6 > 0.5; seed 1: 0.6 < 0.7
    assert d.spread([0.5, 0.7]) == pytest.approx((0.6, 0.5, 0.7))
    assert "| outcome | 2 | 0.40 (0.40-0.40) | 0.60 (0.50-0.70) |" in d.comparison_markdown(table)
    assert d.eval_curve(FakeRun(0, (0.4, 0.5), (0.6, 0.4)), "heldout_step_validity") == ([0, 80], [0.6, 0.4])
    claims = d.comparison_claims(table, "shaped", "outcome")
    assert (claims["seeds"], claims["shaped_validity_wins"], claims["shaped_accuracy_wins"]) == (2, 2, 1)
    assert (claims["outcome_validity_fell"], claims["shaped_validity_fell"]) == (2, 0)
    assert (claims["outcome_accuracy_rose"], claims["shaped_accuracy_rose"]) == (2, 2)
    assert claims["outcome_end_validity"] == pytest.approx(0.45)
    assert claims["shaped_end_accuracy"] == pytest.approx(0.6)
    # shaped minus outcome at the end: validity 0.4 (seed 0), 0.4 (seed 1); accuracy 0.1, -0.1
    assert (claims["validity_gap"], claims["validity_gap_min"]) == pytest.approx((0.4, 0.4))
    assert (claims["accuracy_gap"], claims["accuracy_gap_min"], claims["accuracy_gap_max"]) == pytest.approx(
        (0.0, -0.1, 0.1))
    with pytest.raises(ValueError, match="different seeds"):
        d.wins(d.compare({"a": [FakeRun(0, (0, 0), (0, 0))], "b": [FakeRun(1, (0, 0), (0, 0))]}), "a", "b",
               "end_accuracy")


def test_seeds_phrase():
    assert [d.seeds_phrase(k, 3) for k in (0, 2, 3)] == ["no seed", "2 of 3 seeds", "every seed"]


def test_plot_seeds_draws_each_seed_and_the_mean():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    d.plot_seeds(ax, [([0, 10], [0.2, 0.4]), ([0, 10], [0.4, 0.8])], "teal", "shaped")
    lines = ax.get_lines()
    assert len(lines) == 3 and lines[-1].get_ydata().tolist() == pytest.approx([0.3, 0.6])
    assert lines[-1].get_label() == "shaped (mean of 2 seeds)"
    with pytest.raises(ValueError, match="share their steps"):
        d.plot_seeds(ax, [([0, 10], [0.2, 0.4]), ([0, 5], [0.4, 0.8])], "teal", "shaped")
    plt.close(fig)


def test_right_invalid_and_partial_credit_summaries():
    completions = ["6,12#", "8,12#", "12,12#", "2,12#", "7,12#", "7,13#", "6,11#", "6,13#", "7,1"]
    judged = d.judge([P] * len(completions), completions)
    assert d.right_invalid_summary(judged) == {"total": 4, "off_by_one": 2}
    # partial credit: '7,13#' and '7,1' (first step valid), '6,11#' (second step consistent with 6)
    assert d.partial_credit_summary(judged) == {"total": 3, "first_valid": 2, "second_valid": 1}


def test_kind_rate_over_training_reads_every_nth_logged_step():
    def step_log(step, texts):
        tokens = torch.full((len(texts), 8), 20, dtype=torch.uint8)
        for i, t in enumerate(texts):
            tokens[i, :len(t)] = torch.tensor(encode(t), dtype=torch.uint8)
        return {"step": step, "prompts": [P], "tokens": tokens,
                "lengths": torch.tensor([len(t) for t in texts], dtype=torch.uint8)}

    class LoggedRun:
        rollouts = [step_log(1, ["6,12#", "7,12#"]), step_log(2, ["7,12#", "7,12#"]),
                    step_log(3, ["6,12#", "8,12#"]), step_log(4, ["7,13#", "7,12#"])]

    assert d.kind_rate_over_training(LoggedRun()) == ([1, 2, 3, 4], [0.5, 0.0, 1.0, 0.0])
    assert d.kind_rate_over_training(LoggedRun(), every=2) == ([2, 4], [0.0, 0.0])
    assert d.kind_rate_over_training(LoggedRun(), d.PARTIAL_CREDIT, every=2) == ([2, 4], [0.0, 0.5])


def test_valid_end_summary():
    judged = d.judge([P] * 5, ["7,12#3", "7,12,12#", "7,12,1", "7,12#", "7,12 "])
    assert d.valid_end_summary(judged) == {"malformed": 2, "incomplete": 1, "extra_number": 2}
