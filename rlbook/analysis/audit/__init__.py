"""Auditing what a run learned from: rollout composition, reward hacks, selection and incidents.

Chapter 5 (reward limits) uses the reward hack and the incidents, chapter 6
(exploration and rollouts) the composition, the temperatures and the
selection counts. The unit of an audit is a batch of
rollouts as the verifier saw it (:class:`AuditBatch`): one row per rollout,
its prompt, its completion text and the verifier's status. The package reads
in five parts:

- :mod:`~rlbook.analysis.audit.batch`: the batch, from fresh samples or from
  a run's stored steps;
- :mod:`~rlbook.analysis.audit.composition`: what a batch is made of (the
  exploration audit's categories, duplicates, novelty) over a run;
- :mod:`~rlbook.analysis.audit.temperature`: fresh samples at several
  temperatures (coverage, pass@k, mixed groups, the policy's own format);
- :mod:`~rlbook.analysis.audit.hack`: the reward-hack detector and the
  loophole it finds;
- :mod:`~rlbook.analysis.audit.incidents`: what a selection rule hid, the
  run's interventions and abort rules.

Its tables are written by :func:`rlbook.analysis.tables.markdown_table`,
re-exported here as ``audit.markdown_table``, and name a verifier's statuses
in the book's one vocabulary, :data:`rlbook.core.verdicts.VERDICT_WORDS`,
re-exported as ``audit.VERDICT_WORDS``.
"""

from __future__ import annotations

from rlbook.analysis.tables import markdown_table
from rlbook.core.verdicts import VERDICT_WORDS

from .batch import AuditBatch, from_rollouts, from_stored
from .composition import (
    CATEGORIES,
    READABLE,
    categorise,
    composition,
    duplicate_shares,
    novelty,
    run_composition,
    sharpening,
)
from .hack import (
    HackReport,
    clearest_hacked_seed,
    dip_before_takeover,
    exploiting_completions,
    first_hacked_seed,
    hack_report,
    loophole_rate,
    loophole_rows,
    loophole_share,
    reward_split,
    takeover_step,
)
from .incidents import first_alarm, incidents, selection_counts
from .temperature import mixed_group_rate, own_format_accuracy, sparse_reward_audit, temperature_audit

__all__ = [
    "CATEGORIES",
    "READABLE",
    "VERDICT_WORDS",
    "AuditBatch",
    "HackReport",
    "categorise",
    "clearest_hacked_seed",
    "composition",
    "dip_before_takeover",
    "duplicate_shares",
    "exploiting_completions",
    "first_alarm",
    "first_hacked_seed",
    "from_rollouts",
    "from_stored",
    "hack_report",
    "incidents",
    "loophole_rate",
    "loophole_rows",
    "loophole_share",
    "markdown_table",
    "mixed_group_rate",
    "novelty",
    "own_format_accuracy",
    "reward_split",
    "run_composition",
    "selection_counts",
    "sharpening",
    "sparse_reward_audit",
    "takeover_step",
    "temperature_audit",
]
