"""The measurements of chapters 3 and 4: from a group of rewards to a change in every token's probability.

Everything here reads the book's named runs (:mod:`rlbook.runs`) or their
policies and returns plain numbers and rows; nothing trains a run and
nothing draws (the figures are :mod:`rlbook.figures.gradient` and
:mod:`rlbook.figures.update`). The pieces:

- the record of a training step rebuilt from a run (:func:`recorded_batch`),
  next to the credit derived from it (:func:`record_and_credit`), and what
  recomputing its log-probabilities under another policy gives
  (:func:`logprob_drift`);
- the variance of policy-gradient estimates with and without a baseline,
  measured by sampling the same policy again and again
  (:func:`gradient_variance`);
- a real group's tokens with the advantage each receives
  (:func:`token_credit_rows`), and groups that carry no signal
  (:func:`zero_variance_summary`);
- importance ratios after several gradient steps on one batch, with PPO's
  clip region and CISPO's cap (:func:`ratio_drift`);
- the update choices compared across seeds (:data:`COMPARISON`,
  :func:`update_curves`);
- reward scale under Adam (:func:`scale_effect`) and under per-group
  normalisation (:func:`group_scale_table`);
- credit on a multi-step answer, by outcome and by step (:func:`split_credit`,
  :func:`process_group`, :func:`find_process_case`) for Exercise 3.1.

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
    COMPARISON,
    DISGUISES,
    LOST_FLOOR,
    REUSED,
    Curves,
    agreed_until,
    kl_spikes,
    lost_margin,
    panels,
    results_table,
    rounding_gaps,
    seed_table,
    separation_chance,
    settings_table,
    stop_story,
    update_curves,
    versus,
)
from .replay import (
    RatioDrift,
    group_scale_table,
    logprob_drift,
    one_thread,
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
    process_group,
    process_rows,
    split_credit,
    token_credit_rows,
    token_steps,
    visible,
    zero_variance_summary,
)

__all__ = [
    "AGREEMENT",
    "COMPARED",
    "COMPARISON",
    "DISGUISES",
    "LOST_FLOOR",
    "REUSED",
    "Curves",
    "GradientVariance",
    "ProcessGroup",
    "RatioDrift",
    "agreed_until",
    "balanced_group",
    "dict_table",
    "find_process_case",
    "gradient_variance",
    "group_rows",
    "group_scale_table",
    "kl_spikes",
    "logprob_drift",
    "lost_margin",
    "mixed_groups",
    "one_thread",
    "panels",
    "process_group",
    "process_rows",
    "ratio_drift",
    "record_and_credit",
    "recorded_batch",
    "results_table",
    "rounding_gaps",
    "run_config",
    "sampling_checkpoint",
    "scale_effect",
    "seed_table",
    "separation_chance",
    "settings_table",
    "split_credit",
    "stop_story",
    "token_credit_rows",
    "token_steps",
    "update_curves",
    "versus",
    "visible",
    "zero_variance_summary",
]
