"""Outcome and process verdicts side by side, and where they disagree (chapter 2).

Chapter 2 judges every rollout twice: once by the outcome verifier
(:class:`rlbook.core.rewards.ExactVerifier`, which reads only the final answer)
and once by the process scorer (:func:`rlbook.core.rewards.process_score`, which
judges each partial sum). The package reads in six parts:

- :mod:`~rlbook.analysis.disagreement.verdicts`: both verdicts of a rollout
  (:class:`Judged`) and the cell they put it in;
- :mod:`~rlbook.analysis.disagreement.counts`: the disagreement matrix, its
  named cells, bounded samples of a cell and what a cell's rollouts wrote;
- :mod:`~rlbook.analysis.disagreement.rules`: what a different step rule
  (the true partial sum) would do to the same rollouts;
- :mod:`~rlbook.analysis.disagreement.shown`: the rollouts the chapter shows
  (its figure's pair, Exercise 2.3's block) and each step's note;
- :mod:`~rlbook.analysis.disagreement.breakdown`: the single-step verdict
  breakdown of the pretrained and fine-tuned checkpoints (chapters 1 and 2);
- :mod:`~rlbook.analysis.disagreement.comparison`: the two multi-step RL runs
  (``process-outcome`` against ``process-shaped``) compared across seeds.

The chapter's tables are written from its facts by
:mod:`~rlbook.analysis.disagreement.tables`, which the page imports itself
(it is not imported here, so a table's layout is not part of the facts' key);
its figures are drawn by :mod:`rlbook.figures.rewards`.

Process versus outcome supervision as a research question: Uesato et al.
(2022), "Solving math word problems with process- and outcome-based
feedback"; Lightman et al. (2023), "Let's Verify Step by Step".
"""

from __future__ import annotations

from rlbook.analysis.tables import markdown_table

from .breakdown import breakdown, checkpoint_breakdowns, first_number, format_share, right_number_rejected
from .comparison import compare, comparison_claims, eval_curve, final_eval, paired, spread, wins
from .counts import (
    bounded_sample,
    kind_counts,
    kind_rate_over_training,
    matrix,
    partial_credit_summary,
    process_columns,
    rate,
    right_invalid_summary,
    valid_end_summary,
)
from .rules import rule_change, rule_change_of, true_sum_steps
from .shown import exercise_rows, figure_rollouts, step_notes
from .verdicts import (
    AGREE,
    DISAGREEMENTS,
    OUTCOME_ROWS,
    PARTIAL_CREDIT,
    RIGHT_INVALID,
    VALID_INCOMPLETE,
    VALID_MALFORMED,
    Judged,
    judge,
    judge_rollouts,
    logged_rollouts,
    sample_rollouts,
)

__all__ = [
    "AGREE",
    "DISAGREEMENTS",
    "OUTCOME_ROWS",
    "PARTIAL_CREDIT",
    "RIGHT_INVALID",
    "VALID_INCOMPLETE",
    "VALID_MALFORMED",
    "Judged",
    "bounded_sample",
    "breakdown",
    "checkpoint_breakdowns",
    "compare",
    "comparison_claims",
    "eval_curve",
    "exercise_rows",
    "figure_rollouts",
    "final_eval",
    "first_number",
    "format_share",
    "judge",
    "judge_rollouts",
    "kind_counts",
    "kind_rate_over_training",
    "logged_rollouts",
    "markdown_table",
    "matrix",
    "paired",
    "partial_credit_summary",
    "process_columns",
    "rate",
    "right_invalid_summary",
    "right_number_rejected",
    "rule_change",
    "rule_change_of",
    "sample_rollouts",
    "spread",
    "step_notes",
    "true_sum_steps",
    "valid_end_summary",
    "wins",
]
