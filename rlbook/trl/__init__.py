"""The book's task, verifier, audit and run record on Hugging Face TRL's ``GRPOTrainer`` (appendix).

TRL (von Werra et al. 2022) is the trainer a reader is likely to use next: its
``GRPOTrainer`` runs the same loop as :func:`rlbook.core.loop.train_rl` (sample a
group per prompt, score, centre, clipped token-level update) and scales out
with accelerate or DeepSpeed. This module carries the book over to it,
offline and on CPU:

- :func:`char_tokenizer` and :func:`to_gpt2` / :func:`from_gpt2`: the book's
  character vocabulary as a Hugging Face tokenizer, and the book's policy as
  a ``GPT2LMHeadModel`` holding the very same weights (and back again, so
  that rlbook's own evaluation can judge what TRL trained);
- :class:`VerifierReward`: an rlbook verifier as a TRL reward function that
  keeps every rollout it scores;
- :func:`grpo_kwargs` and the tables :func:`option_rows`,
  :func:`choice_rows`, :data:`METRIC_NAMES`: each choice of an
  :class:`~rlbook.core.rl.RLConfig` and each logged metric under TRL's name;
- :func:`run_grpo` / :func:`load_run`: a TRL run of the book's task, cached
  like the book's own runs, returned as a :class:`TRLRun` whose ``metrics``,
  ``rollouts`` and ``evals`` have the shapes of :class:`rlbook.runs.Run`'s,
  so the book's audit reads it unchanged; :func:`trl_record` writes its run
  record;
- :func:`peer_benchmark`: one RL step of rlbook against one step of TRL on
  the same model and batch (``rlbook bench --peer trl``);
- :func:`main` (``python -m rlbook.trl``), :func:`run_processes` and
  :func:`accelerate_yaml`: the same run on several processes, run here on two
  CPU processes with ``torchrun`` and on GPUs with ``accelerate launch``.

The modules, one idea each: :mod:`~rlbook.trl.model` (tokenizer and model),
:mod:`~rlbook.trl.translation` (the book's names in TRL's terms),
:mod:`~rlbook.trl.spec` (what a TRL run is and leaves), :mod:`~rlbook.trl.trainer` (a TRL run),
:mod:`~rlbook.trl.launch` (the script, on several processes), :mod:`~rlbook.trl.audit` (the audit
and the run record), :mod:`~rlbook.trl.tables` (the appendix's tables with
their citations) and :mod:`~rlbook.trl.peer` (the peer benchmark). The
appendix's facts are :mod:`rlbook.book.bridge`, its figures
:mod:`rlbook.figures.bridge`, and its exercises are checked by
:mod:`rlbook.exercises.appendix`.

Nothing here imports TRL at module level: without the ``trl`` extra the
module still imports, :func:`have_trl` says False and :data:`INSTALL_HINT`
says what to install.
"""

from __future__ import annotations

from rlbook.analysis.tables import markdown_table

from .audit import (
    cross_check,
    decoding_gap,
    metrics_from_log,
    reward_vs_heldout,
    rollout_audit,
    stored_rollouts,
    trl_record,
)
from .launch import accelerate_yaml, launch_command, load_processes_run, main, process_check, run_processes
from .model import INSTALL_HINT, TRL_PACKAGES, char_tokenizer, from_gpt2, gpt2_config, have_trl, to_gpt2, trl_versions
from .peer import peer_benchmark, rlbook_step_seconds, trl_step_seconds
from .spec import DEMO, TRLRun, TRLSpec
from .tables import cite, cited_table
from .trainer import VerifierReward, load_run, make_trainer, merge_steps, run_grpo, run_key
from .translation import (
    ADVANTAGE_TO_SCALE_REWARDS,
    AGGREGATION_TO_LOSS_TYPE,
    CITATIONS,
    LOSS_NOTES,
    METRIC_NAMES,
    METRIC_NOTES,
    NO_EQUIVALENT,
    OPTION_FIELDS,
    UNTRANSLATED,
    choice_rows,
    grpo_defaults,
    grpo_kwargs,
    loss_type,
    metric_rows,
    option_rows,
    warmup_note,
    warmup_rates,
)

__all__ = [
    "ADVANTAGE_TO_SCALE_REWARDS",
    "AGGREGATION_TO_LOSS_TYPE",
    "CITATIONS",
    "DEMO",
    "INSTALL_HINT",
    "LOSS_NOTES",
    "METRIC_NAMES",
    "METRIC_NOTES",
    "NO_EQUIVALENT",
    "OPTION_FIELDS",
    "TRL_PACKAGES",
    "UNTRANSLATED",
    "TRLRun",
    "TRLSpec",
    "VerifierReward",
    "accelerate_yaml",
    "char_tokenizer",
    "choice_rows",
    "cite",
    "cited_table",
    "cross_check",
    "decoding_gap",
    "from_gpt2",
    "gpt2_config",
    "grpo_defaults",
    "grpo_kwargs",
    "have_trl",
    "launch_command",
    "load_processes_run",
    "load_run",
    "loss_type",
    "main",
    "make_trainer",
    "markdown_table",
    "merge_steps",
    "metric_rows",
    "metrics_from_log",
    "option_rows",
    "peer_benchmark",
    "process_check",
    "reward_vs_heldout",
    "rlbook_step_seconds",
    "rollout_audit",
    "run_grpo",
    "run_key",
    "run_processes",
    "stored_rollouts",
    "to_gpt2",
    "trl_record",
    "trl_step_seconds",
    "trl_versions",
    "warmup_note",
    "warmup_rates",
]
