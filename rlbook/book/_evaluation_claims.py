"""Chapter 8's claims (chapters/08-checkpoints-evaluation-record.qmd), as checks over its facts.

The laws and findings the chapter's sentences rest on, each a check over
the facts :mod:`rlbook.book.evaluation` computes, judged on every seed; the
facts module imports them as its ``CLAIMS``, where :mod:`rlbook.book` reads
them. Private to the chapter: :func:`rlbook.book.topics` skips modules whose
name starts with an underscore.
"""

from __future__ import annotations

from rlbook.book.claims import Claim, every
from rlbook.runs import MAIN

MOST_LOST = 0.1
"""The retained-capability constraint of the chapter's constrained rule: lose at most this much plain-format accuracy."""
VERSION_BOUND = 0.01
"""How far mixing exact 1.0 and 2.0 may move main's gain for the chapter to call the effect negligible."""


def _every(key):
    """A check that ``key(seed facts)`` holds on every seed of the facts."""
    return every(key)


def _seen(key):
    """What a failed claim shows: ``key(seed facts)`` on every seed."""
    return lambda F: {s: key(F.by_seed[s]) for s in F.seeds}


def _unmatched_inflate(s) -> bool:
    matched = s.comparisons[0]
    return matched.matched and all(c.value > matched.value for c in s.comparisons if not c.matched)


CLAIMS = (
    Claim(
        "main-reward-above-task",
        "main's training reward rises and ends above its held-out accuracy, which also "
        "ends higher than it started, on every seed",
        _every(lambda s: s.main.reward_gain > 0 and s.main.reward_end > s.main.heldout_end and s.main.heldout_gain > 0),
        _seen(lambda s: (s.main.reward_gain, s.main.heldout_gain)),
        kind="law",
    ),
    Claim(
        "exploit-reward-rises",
        "exploit's training reward rises to near 1 on every seed",
        _every(lambda s: s.exploit.reward_end > s.exploit.reward_start + 0.1 and s.exploit.reward_end > 0.95),
        _seen(lambda s: (s.exploit.reward_start, s.exploit.reward_end)),
        kind="finding",
    ),
    Claim(
        "exploit-accuracy-falls",
        "exploit's exact held-out accuracy ends well below its start on every seed",
        _every(lambda s: s.exploit.heldout_end < s.exploit.heldout_start - 0.1),
        _seen(lambda s: (s.exploit.heldout_start, s.exploit.heldout_end)),
        kind="finding",
    ),
    Claim(
        "exploit-answers-unreadable",
        "most of exploit's last answers are unreadable, paid by the fail-open verifier's except branch, on every seed",
        _every(lambda s: s.exploit.unreadable > 0.5),
        _seen(lambda s: s.exploit.unreadable),
        kind="law",
    ),
    Claim(
        "favourite-paid-whatever-the-prompt",
        "the fail-open verifier pays exploit's commonest answer on every "
        "test prompt, and the exact verifier finds it malformed, on every seed",
        _every(lambda s: s.exploit.favourite_paid and s.exploit.favourite_malformed),
        _seen(lambda s: s.exploit.favourite),
        kind="finding",
    ),
    Claim(
        "evaluation-repeats",
        "evaluating a stored checkpoint again gives back exactly the recorded numbers",
        _every(lambda s: s.main.repeats),
        kind="law",
    ),
    Claim(
        "checkpoints-every-ten-steps",
        f"main is evaluated at step 0 and every {MAIN.checkpoint_every} steps",
        lambda F: all(
            F.by_seed[s].main.checkpoints == tuple(range(0, F.steps + 1, F.checkpoint_every)) for s in F.seeds
        ),
        kind="law",
    ),
    Claim(
        "reward-rule-fooled-by-exploit",
        "on exploit the training-reward rule picks a checkpoint with lower "
        "exact accuracy than the validation rule's, on every seed",
        _every(lambda s: s.exploit.reward_pick_heldout < s.exploit.validation_pick_heldout),
        _seen(lambda s: (s.exploit.reward_pick, s.exploit.validation_pick)),
        kind="law",
    ),
    Claim(
        "rules-not-told-apart",
        "the test scores of main's three picks differ by less than the narrowest of their intervals, on every seed",
        _every(lambda s: not s.picks.apart),
        _seen(lambda s: (s.picks.spread, s.picks.narrowest)),
        kind="law",
    ),
    Claim(
        "matched-gain-above-zero",
        "the matched gain's interval lies above zero on every seed",
        _every(lambda s: s.comparisons[0].lo > 0),
        _seen(lambda s: s.comparisons[0].lo),
        kind="law",
    ),
    Claim(
        "unmatched-inflates",
        "every unmatched comparison shows a larger gain than the matched one",
        _every(_unmatched_inflate),
        _seen(lambda s: [c.value for c in s.comparisons]),
        kind="law",
    ),
    Claim(
        "attempts-make-excess",
        "the extra attempts alone make most of best-of-four's excess over the matched gain, seed by seed",
        _every(lambda s: s.excess.attempts > s.excess.attempts_gain),
        _seen(lambda s: (s.excess.attempts, s.excess.attempts_gain)),
        kind="finding",
    ),
    Claim(
        "cooling-makes-excess",
        "the cooler sampling alone makes most of the low temperature's excess over the matched gain, seed by seed",
        _every(lambda s: s.excess.cooling > s.excess.cooling_gain),
        _seen(lambda s: (s.excess.cooling, s.excess.cooling_gain)),
        kind="finding",
    ),
    Claim(
        "every-slice-gains",
        "RL raises the accuracy of every slice on every seed",
        _every(lambda s: all(g > 0 for g in s.slices.gains.values())),
        _seen(lambda s: s.slices.gains),
        kind="law",
    ),
    Claim(
        "small-sums-hardest",
        "before RL the sums with both operands below 5 are the weakest slice, on every seed",
        _every(lambda s: s.slices.small_start == min(r.before.value for r in s.slices.rows)),
        _seen(lambda s: [(r.slice, r.before.value) for r in s.slices.rows]),
        kind="law",
    ),
    # This claim and the next two were laws until the audit on a Xeon with AVX512-FP16 and AMX: on its native draw
    # they held on 7, 7 and 8 of the ten seeds (the second then read a loss of more than 0.15, a margin above the
    # sentence's MOST_LOST). Each is now a finding judged as its sentence words it, seed by seed.
    Claim(
        "some-sums-never-right",
        "some held-out sum is never answered right, before or after RL",
        _every(lambda s: s.slices.stuck >= 1),
        _seen(lambda s: s.slices.stuck_list),
        kind="finding",
    ),
    Claim(
        "retained-capability-falls",
        "RL lowers plain-format accuracy by more than the constrained rule allows",
        _every(lambda s: s.retained.end.value < s.retained.start.value - MOST_LOST),
        _seen(lambda s: (s.retained.start.value, s.retained.end.value)),
        kind="finding",
    ),
    Claim(
        "constraint-keeps-an-earlier-checkpoint",
        "the constrained rule keeps an earlier checkpoint than the unconstrained pick",
        _every(lambda s: s.retained.constrained < s.selected),
        _seen(lambda s: (s.retained.constrained, s.selected)),
        kind="finding",
    ),
    Claim(
        "version-2-only-adds",
        "exact 2.0 accepts everything 1.0 does: mixing can only raise main's gain one way and lower it the other",
        _every(lambda s: s.versions.main_mixed >= s.versions.main_same >= s.versions.main_reverse),
        kind="law",
    ),
    Claim(
        "main-version-effect-small",
        f"mixing exact 1.0 and 2.0 moves main's gain by less than {VERSION_BOUND:g}",
        _every(lambda s: max(s.versions.main_shift, s.versions.main_reverse_shift) < VERSION_BOUND),
        _seen(lambda s: (s.versions.main_shift, s.versions.main_reverse_shift)),
        kind="law",
    ),
    Claim(
        "fail-open-turns-a-loss-into-a-gain",
        "scored by exact on both sides exploit's gain is negative; with "
        "its after side scored by fail-open it is positive, on every seed",
        _every(lambda s: s.versions.exploit_same < 0 < s.versions.exploit_mixed),
        _seen(lambda s: (s.versions.exploit_same, s.versions.exploit_mixed)),
        kind="law",
    ),
    Claim(
        "version-shaped-training",
        "exact 2.0 would have paid some of main's training rollouts that 1.0 rejected, on every seed",
        _every(lambda s: s.versions.train_flips > 0 and all(1 <= t <= MAIN.steps for t in s.versions.flip_steps)),
        kind="law",
    ),
    Claim(
        "a-flip-moves-its-group",
        "under a group-mean baseline each changed reward changes its whole group's advantages",
        _every(
            lambda s: (
                s.versions.changed.advantages == s.versions.changed.groups * MAIN.group_size
                and s.versions.changed.groups <= s.versions.changed.flipped
            )
        ),
        _seen(lambda s: s.versions.changed),
        kind="law",
    ),
    Claim(
        "records-differ-in-setup",
        "the records of main and exploit differ in verifier, learning rate and length",
        _every(lambda s: {"verifier.name", "update.lr", "update.steps"} <= set(s.record.diff_keys)),
        kind="law",
    ),
    Claim(
        "main-no-incident",
        "main has no intervention, aborted update or interruption and trained on every rollout",
        _every(lambda s: s.record.main_quiet),
        kind="law",
    ),
    Claim(
        "faults-keeps-incidents",
        "the faults record keeps interventions and an aborted update, and trained on fewer rollouts than it generated",
        _every(lambda s: s.record.faults_aborted and s.record.faults_incidents >= 2 and s.record.faults_left_out > 0),
        kind="law",
    ),
    Claim(
        "interruption-needs-a-place",
        "an interrupted record validates, and one that does not say where it stopped is refused",
        _every(lambda s: "interrupted" in s.record.refusal),
        kind="law",
    ),
    Claim(
        "base-policy-hash",
        "main's record names the weights of the base policy it started from",
        _every(lambda s: s.record.base_hash),
        kind="law",
    ),
    Claim(
        "exploit-has-hacks",
        "exploit's training holds rollouts the fail-open verifier paid and exact rejects",
        _every(lambda s: 0 < s.hacks[0] <= s.hacks[1]),
        _seen(lambda s: s.hacks),
        kind="law",
    ),
    Claim(
        "process-misconceptions",
        "process-base reaches some right totals through an invalid step, and some "
        "wrong answers keep half the process score",
        _every(lambda s: s.misconceptions.invalid_share > 0 and 0 < s.misconceptions.consistent_share < 1),
        _seen(lambda s: (s.misconceptions.invalid_share, s.misconceptions.consistent_share)),
        kind="law",
    ),
    Claim(
        "zero-variance-rollouts",
        "some of main's rollouts fell in groups whose rewards were all equal",
        _every(lambda s: 0 < s.misconceptions.zero < s.misconceptions.total),
        kind="law",
    ),
)
