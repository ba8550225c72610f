"""Outcome and process verdicts side by side, and where they disagree (chapter 2).

Chapter 2 judges every rollout twice: once by the outcome verifier
(:class:`rlbook.core.rewards.ExactVerifier`, which reads only the final answer)
and once by the process scorer (:func:`rlbook.core.rewards.process_score`, which
judges each partial sum). The package reads in six parts:

- :mod:`~rlbook.analysis.disagreement.verdicts`: both verdicts of a rollout
  (:class:`Judged`) and the cell they put it in;
- :mod:`~rlbook.analysis.disagreement.counts`: the disagreement matrix, its
  named cells, bounded samples of a cell and what a cell's rollouts wrote;
- :mod:`~rlbook.analysis.disagreement.breakdown`: the single-step verdict
  breakdown of the pretrained and fine-tuned checkpoints;
- :mod:`~rlbook.analysis.disagreement.tables`: the chapter's tables (the
  reward specification, the reward tests, breakdowns, matrix, samples);
- :mod:`~rlbook.analysis.disagreement.comparison`: the two multi-step RL runs
  (``process-outcome`` against ``process-shaped``) compared across seeds;
- :mod:`~rlbook.analysis.disagreement.figure`: the judged rollouts drawn, and
  the seeds' curves.

Process versus outcome supervision as a research question: Uesato et al.
(2022), "Solving math word problems with process- and outcome-based
feedback"; Lightman et al. (2023), "Let's Verify Step by Step".
"""
from __future__ import annotations

from .breakdown import breakdown, checkpoint_breakdowns, first_number, format_share, right_number_rejected
from .comparison import (
    compare,
    comparison_claims,
    comparison_markdown,
    eval_curve,
    final_eval,
    paired,
    seeds_phrase,
    spread,
    wins,
)
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
from .figure import draw_rollout, figure_rollouts, plot_seeds, step_notes
from .tables import (
    SPEC_NAMES,
    breakdown_markdown,
    code,
    markdown_table,
    matrix_markdown,
    quoted_as_code,
    sample_markdown,
    shortcut_markdown,
    shortcut_mismatches,
    shortcut_rows,
    spec_markdown,
)
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

__all__ = ["AGREE", "DISAGREEMENTS", "OUTCOME_ROWS", "PARTIAL_CREDIT", "RIGHT_INVALID", "SPEC_NAMES",
           "VALID_INCOMPLETE", "VALID_MALFORMED", "Judged", "bounded_sample", "breakdown", "breakdown_markdown",
           "checkpoint_breakdowns", "code", "compare", "comparison_claims", "comparison_markdown", "draw_rollout",
           "eval_curve", "figure_rollouts", "final_eval", "first_number", "format_share", "judge", "judge_rollouts",
           "kind_counts", "kind_rate_over_training", "logged_rollouts", "markdown_table", "matrix",
           "matrix_markdown", "paired", "partial_credit_summary", "plot_seeds", "process_columns", "quoted_as_code",
           "rate", "right_invalid_summary", "right_number_rejected", "sample_markdown", "sample_rollouts",
           "seeds_phrase", "shortcut_markdown", "shortcut_mismatches", "shortcut_rows", "spec_markdown", "spread",
           "step_notes", "valid_end_summary", "wins"]
