"""Chapter 2's tables, written from plain data as its facts hold it (rlbook.analysis.disagreement.tables)."""

from __future__ import annotations

import dataclasses

from hand_rollouts import HAND, P

from rlbook.analysis import disagreement as d
from rlbook.analysis import reward_spec
from rlbook.analysis.disagreement import tables as t
from rlbook.core import rewards as rw


def plain(judged):
    return [dataclasses.asdict(j) for j in judged]


def test_code_spans_show_text_exactly():
    assert t.code("7\n#") == "`'7\\n#'`"
    assert t.quoted_as_code("answer ' 7' has a space") == "answer `' 7'` has a space"
    assert t.quoted_as_code("text after it: '7\n'") == "text after it: `'7\\n'`"
    assert t.quoted_as_code("step 1 6 != 3+4") == "step 1 6 \u2260 3+4"


def test_spec_table_has_a_row_per_field_in_the_book_s_words():
    spec = t.spec_markdown(reward_spec.spec_table(rw.ExactVerifier()))
    assert spec.count("\n") == 1 + len(reward_spec.SPEC)
    assert "exact 1.0" in spec and "**end condition**" in spec and "**stopped by the budget**" in spec
    assert "**unsafe**" in spec and "**wrong value**" in spec


def test_shortcut_table_leaves_out_the_reward_and_names_verdicts_in_the_book_s_words():
    table = t.shortcut_markdown(reward_spec.shortcut_rows())
    assert table.count("\n") == 1 + len(reward_spec.SHORTCUT_CASES)
    assert "| empty prompt | (empty prompt) `'7#'` | unverifiable | n/a |" in table
    assert "| right answer stopped by the budget | `U:3+4?|A:` `'7'` | stopped by the budget | 1.0 |" in table
    assert table.splitlines()[0] == "| case | prompt and completion | verdict | process | reason |"


def test_breakdown_tables_split_rejections_into_format_and_value():
    row = {
        "samples": 6,
        "expected_reward": 1 / 6,
        "accepted": 1,
        "incorrect": 2,
        "malformed": 1,
        "incomplete": 2,
        "unverifiable": 0,
        "right_number_rejected": 3,
    }
    assert t.breakdown_markdown({"sft": row}).splitlines()[2] == "| sft | 0.17 | 5 | 3 | 2 | 3 |"
    detail = t.breakdown_detail_markdown({"sft": row}, rw.STATUSES)
    assert detail.splitlines()[0] == "| checkpoint | accepted | wrong value | malformed | stopped by the budget |"
    assert detail.splitlines()[2] == "| sft | 1 | 2 | 1 | 2 |"  # no checkpoint was unverifiable: no column


def test_matrix_table_from_the_facts_counts():
    counts, rows, columns = d.matrix(d.judge([P] * len(HAND), list(HAND)))
    table = t.matrix_markdown({"rows": rows, "columns": columns, "counts": counts.tolist()})
    assert table.splitlines()[0] == "| outcome verdict | 2 of 2 steps valid | 1 of 2 steps valid | 0 of 2 steps valid |"
    assert "| accepted | 1 (9%) | 0 (0%) | 2 (18%) |" in table and "| stopped by the budget | 1 (9%) |" in table


def test_sample_and_block_tables():
    judged = plain(d.judge([P, P], ["6,12#", "7,13#"]))
    sample = t.sample_markdown(judged)
    assert sample.splitlines()[2] == (
        "| 3+4+5 | `'6,12#'` | accepted | 0.0 | step 1 6 \u2260 3+4 invalid; step 2 12 \u2260 6+5 invalid |"
    )
    assert "| wrong value | 0.5 |" in sample
    assert t.block_markdown(judged).splitlines()[2:] == [f"| 0 | `{P}` | `'6,12#'` |", f"| 1 | `{P}` | `'7,13#'` |"]


def test_comparison_tables_give_means_then_seeds():
    rows = [
        {"seed": s, "start_accuracy": 0.4, "end_accuracy": a, "start_validity": 0.5, "end_validity": v}
        for s, a, v in ((0, 0.5, 0.6), (1, 0.7, 0.4))
    ]
    table = {"process-outcome": rows}
    labels = {"process-outcome": "outcome only"}
    assert t.comparison_markdown(table, labels).splitlines()[2] == "| outcome only | 0.40 → 0.60 | 0.50 → 0.50 |"
    detail = t.comparison_detail_markdown(table, labels).splitlines()
    assert detail[2:] == [
        "| outcome only | 0 | 0.400 | 0.500 | 0.500 | 0.600 |",
        "| outcome only | 1 | 0.400 | 0.700 | 0.500 | 0.400 |",
    ]
