"""Chapter 3's measurements: from a group of rewards to a change in every token's probability.

Everything here reads the book's named runs (:mod:`rlbook.runs`) or their
policies and returns numbers or figures; nothing trains a run. The pieces:

- the record of a training step rebuilt from a run (:func:`recorded_batch`),
  next to the credit derived from it (:func:`record_and_credit`), and what
  recomputing its log-probabilities under another policy gives
  (:func:`logprob_drift`);
- the variance of policy-gradient estimates with and without a baseline,
  measured by sampling the same policy again and again
  (:func:`gradient_variance`);
- a real group's tokens with the advantage each receives
  (:func:`plot_token_credit`);
- importance ratios after several gradient steps on one batch, with PPO's
  clip region and CISPO's cap (:func:`ratio_drift`);
- the update choices compared across seeds (:func:`update_curves`);
- reward scale under Adam (:func:`scale_effect`) and under per-group
  normalisation (:func:`group_scale_table`);
- credit on a multi-step answer, by outcome and by step (:func:`split_credit`,
  :func:`process_group`, :func:`find_process_case`) for exercise 5.

The package reads in three parts: :mod:`~rlbook.analysis.credit.replay`
(recorded steps replayed), :mod:`~rlbook.analysis.credit.signal` (the
learning signal) and :mod:`~rlbook.analysis.credit.compare` (the update
choices compared across seeds).
"""
from __future__ import annotations

from rlbook.analysis.tables import dict_table

from .compare import (
    AGREEMENT,
    COMPARED,
    DISGUISES,
    LOST_FLOOR,
    Curves,
    agreed_until,
    comparison_table,
    in_words,
    kl_spikes,
    lost_margin,
    plot_update_curves,
    rounding_gaps,
    separation_chance,
    stop_lines,
    stop_story,
    update_curves,
    versus,
)
from .replay import (
    RatioDrift,
    group_scale_table,
    logprob_drift,
    one_thread,
    plot_ratio_drift,
    ratio_drift,
    record_and_credit,
    recorded_batch,
    run_config,
    sampling_checkpoint,
    scale_effect,
)
from .signal import (
    GradientVariance,
    ProcessGroup,
    balanced_group,
    find_process_case,
    gradient_variance,
    group_rows,
    mixed_groups,
    plot_gradient_variance,
    plot_token_credit,
    plot_zero_variance,
    process_group,
    process_rows,
    split_credit,
    token_steps,
    zero_variance_summary,
)

__all__ = ["AGREEMENT", "COMPARED", "DISGUISES", "LOST_FLOOR", "Curves", "GradientVariance", "ProcessGroup",
           "RatioDrift", "agreed_until", "balanced_group", "comparison_table", "dict_table", "find_process_case",
           "gradient_variance", "group_rows", "group_scale_table", "in_words", "logprob_drift",
           "kl_spikes", "lost_margin", "mixed_groups", "one_thread", "plot_gradient_variance", "plot_ratio_drift",
           "plot_token_credit", "plot_update_curves", "plot_zero_variance", "process_group", "process_rows",
           "ratio_drift", "record_and_credit", "recorded_batch", "rounding_gaps", "run_config", "sampling_checkpoint",
           "scale_effect", "separation_chance", "split_credit", "stop_lines", "stop_story", "token_steps",
           "update_curves", "versus", "zero_variance_summary"]
