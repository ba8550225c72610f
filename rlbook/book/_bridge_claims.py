"""The TRL appendix's claims (chapters/appendix-trl.qmd), as checks over its facts.

The laws the appendix's sentences rest on, each a check over the facts
:mod:`rlbook.book.bridge` computes; the facts module imports them as its
``CLAIMS``, where :mod:`rlbook.book` reads them. Private to the appendix:
:func:`rlbook.book.topics` skips modules whose name starts with an
underscore.
"""

from __future__ import annotations

from rlbook.book.claims import Claim, every

ENDS = 5
"""Steps averaged at each end of a run when the appendix says its batch reward rose."""


def _every(key):
    """A check that ``key(seed facts)`` holds on every seed of the facts."""
    return every(key)


def _rises(values) -> bool:
    return sum(values[-ENDS:]) / ENDS > sum(values[:ENDS]) / ENDS


CLAIMS = (
    Claim(
        "tokenizer-gives-book-ids",
        "the character tokenizer gives the book's own ids on every prompt and answer",
        lambda F: F.tokenizer.ids_match,
        lambda F: F.tokenizer.texts,
        kind="law",
    ),
    Claim(
        "skipping-special-tokens-drops-end-mark",
        "decoding with special tokens skipped deletes the end mark",
        lambda F: F.tokenizer.dropped,
        lambda F: F.tokenizer.decoded,
        kind="law",
    ),
    Claim(
        "gpt2-same-function",
        "the converted GPT-2 computes the same function with the same weights, every seed",
        _every(lambda s: s.model.gap < 1e-5 and s.model.round_trip),
        lambda F: F.gap,
        kind="law",
    ),
    Claim(
        "gpt2-same-size",
        "both models have the same number of parameters",
        _every(lambda s: s.model.params == s.model.book_params),
        kind="law",
    ),
    Claim(
        "trl-text-is-incomplete",
        "every answer read from TRL's text is incomplete, so it earns nothing, every seed",
        _every(lambda s: s.decoding.from_trl_text == 0 and s.decoding.trl_text_incomplete == 1),
        kind="law",
    ),
    Claim(
        "trl-defaults-differ",
        "TRL's defaults: a smaller learning rate, a linear decay, a clipped gradient, "
        "advantages scaled by the group's std",
        lambda F: (
            F.options.defaults.trl.learning_rate < F.options.defaults.book.learning_rate
            and F.options.defaults.trl.lr_scheduler_type == "linear"
            and F.options.defaults.trl.max_grad_norm > 0
            and F.options.defaults.trl.scale_rewards == "group"
        ),
        lambda F: F.options.defaults.trl,
        kind="law",
    ),
    Claim(
        "starts-from-base",
        "the TRL run starts from base's weights, every seed",
        _every(lambda s: s.start_hash == s.base_hash),
        kind="law",
    ),
    Claim(
        "same-start-evaluation",
        "at step 0 the evaluation gives both trainers the same held-out reward",
        _every(lambda s: s.trl_eval[0][1] == s.book_eval[0][1]),
        kind="law",
    ),
    Claim(
        "batch-rewards-rise",
        "both trainers' batch reward rises over the run, every seed",
        _every(lambda s: _rises(s.trl_batch) and _rises(s.book_batch)),
        kind="law",
    ),
    Claim(
        "both-gain-held-out",
        "both trainers raise the held-out expected reward over the run, every seed",
        _every(lambda s: s.trl_gain > 0 and s.book_gain > 0),
        lambda F: F.compare.gains,
        kind="law",
    ),
    # Until the CI machine's draw (AVX-512), the claim was that the trainers' gains differ less on each seed than
    # rlbook's differ between seeds; there they differed by 0.041 against a spread of 0.035. Then it was that the
    # two trainers' ranges of gains over the seeds overlap, which held on every audited triple of two draws, until
    # a CPU with AVX512-FP16 and AMX drew seeds 0-2 whose ranges did not overlap. Which trainer gains more is an
    # outcome of the draw: a finding, worded from the runs (F.compare.ranges).
    Claim(
        "trainers-gain-ranges-overlap",
        "over the seeds, TRL's range of held-out gains and rlbook's overlap: the seeds do not separate the trainers",
        lambda F: F.compare.overlap,
        lambda F: F.compare.gains,
        kind="finding",
    ),
    Claim(
        "logs-match-audit",
        "TRL's logged metrics equal the audit's recomputation from the rollouts, every seed",
        _every(
            lambda s: (
                {"reward_mean", "zero_variance_frac", "incomplete_rate vs completions/clipped_ratio"}
                <= set(s.audit.worst)
                and max(s.audit.worst.values()) < 1e-6
            )
        ),
        lambda F: F.worst,
        kind="law",
    ),
    Claim(
        "both-kinds-of-silent-group",
        "some groups without a signal are all right and some all wrong, every seed",
        _every(lambda s: max(s.audit.silent.all_right) > 0 and max(s.audit.silent.all_wrong) > 0),
        kind="law",
    ),
    Claim(
        "record-round-trip",
        "the TRL run's record validates and survives a save and a load unchanged, every seed",
        _every(lambda s: s.record.round_trip),
        kind="law",
    ),
    Claim(
        "record-trains-on-every-rollout",
        "the record counts every rollout as used, every seed",
        _every(lambda s: s.record.used == s.record.before == s.record.rollouts),
        kind="law",
    ),
    Claim(
        "processes-ran",
        "the two-process run finished, and one process wrote the files",
        lambda F: F.processes.code == 0 and F.processes.writers == 1,
        lambda F: F.processes.lines,
        kind="law",
    ),
    Claim(
        "processes-split-the-batch",
        "each process sampled its own half of every step's prompts",
        lambda F: F.processes.disjoint and F.processes.even,
        lambda F: F.processes.rows,
        kind="law",
    ),
    Claim(
        "processes-same-weights",
        "both processes ended on the same weights",
        lambda F: F.processes.same_weights,
        kind="law",
    ),
    Claim(
        "processes-counted-once",
        "the record counts each step's completions once",
        lambda F: F.processes.rollouts == F.processes.completions * F.processes.steps,
        lambda F: (F.processes.rollouts, F.processes.completions, F.processes.steps),
        kind="law",
    ),
    Claim(
        "accelerate-cpu-refused",
        "accelerate's plain launcher started one process and the script refused",
        lambda F: F.processes.refused.code != 0 and F.processes.refused.one_line and F.processes.refused.names_both,
        lambda F: F.processes.refused.lines,
        kind="law",
    ),
)
