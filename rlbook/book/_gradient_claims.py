"""Chapter 3's claims (chapters/03-reward-to-gradient.qmd), as checks over its facts.

The laws and findings the chapter's sentences rest on, each a check over the
facts :mod:`rlbook.book.gradient` computes: the loop that lands where
``main`` does, the shifted rewards with and without a baseline, the variance
of the gradient's estimates, the groups without a signal and the credit on
real tokens. The facts module imports them as its ``CLAIMS``, where
:mod:`rlbook.book` reads them. Private to the chapter:
:func:`rlbook.book.topics` skips modules whose name starts with an
underscore.
"""

from __future__ import annotations

from rlbook.book.claims import Claim, every_seed

KEPT_MOST, KEPT_LITTLE = 0.75, 0.5
"""A shifted run without a baseline kept most of its twin's gain at or above the first share, little below the
second (its twin: the same shift, the same seed, with the group baseline)."""


def _every(key):
    """A check that ``key(facts, seed)`` holds on every seed of the facts."""
    return every_seed(key)


CLAIMS = (
    Claim(
        "rl-adamw-is-adam",
        "the RL runs' AdamW has no weight decay, so it is chapter 1's Adam",
        lambda F: F.weight_decay == 0,
        lambda F: F.weight_decay,
        kind="law",
    ),
    Claim(
        "loop-lands-in-main-range",
        "the minimal loop's mean over seeds ends within main's seed range",
        lambda F: F.loop.main_low <= F.loop.end_mean <= F.loop.main_high,
        lambda F: (F.loop.end_mean, F.loop.main_range),
        kind="law",
    ),
    Claim(
        "loop-lands-in-pg-range",
        "at pg's last step the minimal loop's mean lies within pg's seed range",
        lambda F: F.loop.pg_low <= F.loop.pg_mean <= F.loop.pg_high,
        lambda F: (F.loop.pg_mean, F.loop.pg_range),
        kind="law",
    ),
    Claim(
        "loop-starts-at-base",
        "the loop and main start from the same base policy and its evaluation",
        _every(lambda F, s: F.loop.curves[F.seeds.index(s)].loop[0] == F.loop.curves[F.seeds.index(s)].main[0]),
        kind="law",
    ),
    Claim(
        "shift-cancels-in-the-baseline",
        "with the group baseline, the loop on rewards moved up is the unshifted loop, checkpoint for checkpoint",
        _every(lambda F, s: F.shifted.curves[F.seeds.index(s)].baseline == F.loop.curves[F.seeds.index(s)].loop),
        lambda F: [(c.baseline[-1], l.loop[-1]) for c, l in zip(F.shifted.curves, F.loop.curves)],
        kind="law",
    ),
    Claim(
        "shift-keeps-most",
        "moved up by the small shift, the loop without a baseline kept most of its twin's gain, seed by seed",
        _every(lambda F, s: F.shifted.curves[F.seeds.index(s)].kept.shift >= KEPT_MOST),
        lambda F: [c.kept.shift for c in F.shifted.curves],
        kind="finding",
    ),
    Claim(
        "large-shift-keeps-little",
        "moved up by the large shift, the loop without a baseline kept little of its twin's gain, seed by seed",
        _every(lambda F, s: F.shifted.curves[F.seeds.index(s)].kept.large_shift < KEPT_LITTLE),
        lambda F: [c.kept.large_shift for c in F.shifted.curves],
        kind="finding",
    ),
    Claim(
        "shifted-rewards-are-noisier",
        "moving the reward's zero by one either way is noisier than the group baseline",
        _every(lambda F, s: F.variance.by_seed[s].at_minus > 1 and F.variance.by_seed[s].at_plus > 1),
        lambda F: [(v.at_minus, v.at_plus) for v in F.variance.by_seed.values()],
        kind="law",
    ),
    Claim(
        "zero-is-the-quiet-end",
        "offset 0 has at most half the variance of offset +1 or -1",
        _every(
            lambda F, s: (
                F.variance.by_seed[s].at_zero < 0.5 * min(F.variance.by_seed[s].at_minus, F.variance.by_seed[s].at_plus)
            )
        ),
        lambda F: [(v.at_minus, v.at_zero, v.at_plus) for v in F.variance.by_seed.values()],
        kind="law",
    ),
    Claim(
        "quietest-offset-near-zero",
        "the parabola's lowest point lies near the 0/1 reward's zero",
        _every(lambda F, s: abs(F.variance.by_seed[s].best_offset) < 0.5),
        lambda F: [v.best_offset for v in F.variance.by_seed.values()],
        kind="law",
    ),
    Claim(
        "base-mostly-right-on-train",
        "the base policy is right on most of its samples of training prompts",
        _every(lambda F, s: F.variance.by_seed[s].train_rate > 0.5),
        lambda F: [v.train_rate for v in F.variance.by_seed.values()],
        kind="law",
    ),
    Claim(
        "rloo-is-scaled-centring",
        "on every group of main's first batch RLOO is G/(G-1) times the centred advantage",
        _every(lambda F, s: F.batches[s].rloo_exact),
        kind="law",
    ),
    Claim(
        "all-right-share-rises",
        "the all-right share of groups rises over training",
        _every(lambda F, s: F.batches[s].zero.last_right > F.batches[s].zero.first_right),
        lambda F: [(b.zero.first_right, b.zero.last_right) for b in F.batches.values()],
        kind="law",
    ),
    Claim(
        "all-right-outnumber-all-wrong",
        "by the end all-right groups outnumber all-wrong ones",
        _every(lambda F, s: F.batches[s].zero.last_wrong < F.batches[s].zero.last_right),
        lambda F: [(b.zero.last_right, b.zero.last_wrong) for b in F.batches.values()],
        kind="law",
    ),
    Claim(
        "shown-group-is-mixed",
        "the group the figure of token credit shows has right and wrong answers",
        _every(
            lambda F, s: (
                F.batches[s].balanced_mixed
                and F.batches[s].token_rows[0].reward == 1
                and F.batches[s].token_rows[-1].reward == 0
            )
        ),
        kind="law",
    ),
    Claim(
        "record-matches-its-policy",
        "recomputed under the sampling policy the log-probs agree to rounding",
        _every(lambda F, s: F.batches[s].drift.same_max_abs < 1e-4),
        lambda F: [b.drift.same_max_abs for b in F.batches.values()],
        kind="law",
    ),
    Claim(
        "later-policy-differs",
        "under a later policy the recomputed log-probs differ, some past 20 %",
        _every(lambda F, s: F.batches[s].drift.later_mean_abs > 1e-4 and F.batches[s].drift.later_outside_ppo > 0),
        lambda F: [(b.drift.later_mean_abs, b.drift.later_outside_ppo) for b in F.batches.values()],
        kind="law",
    ),
    Claim(
        "exercise-has-a-case",
        "Exercise 3.1 finds a wrong answer with a right first step on every seed",
        _every(
            lambda F, s: (
                F.process_by_seed[s].reward < 1
                and F.process_by_seed[s].first_valid == 1
                and F.process_by_seed[s].first_adv >= 0 > F.process_by_seed[s].outcome_adv
            )
        ),
        kind="law",
    ),
)
