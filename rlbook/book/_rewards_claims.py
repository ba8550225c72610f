"""Chapter 2's claims (chapters/02-outcome-process-rewards.qmd), as checks over its facts.

The laws and findings the chapter's sentences rest on, each a check over
the facts :mod:`rlbook.book.rewards` computes, on every seed where the prose
speaks of every seed; the facts module imports them as its ``CLAIMS``, where
:mod:`rlbook.book` reads them. Private to the chapter:
:func:`rlbook.book.topics` skips modules whose name starts with an
underscore.
"""

from __future__ import annotations

from rlbook.analysis import disagreement as d
from rlbook.book._rewards_words import BARELY
from rlbook.book.claims import Claim, every, every_seed


def _every(key):
    """A check that ``key(seed facts)`` holds on every seed of the facts."""
    return every(key)


def _on_seeds(key):
    """What ``key(seed facts)`` is on each seed, for a failing claim's message."""
    return lambda F: {s: key(F.by_seed[s]) for s in F.seeds}


def _pre(s):
    return s.breakdown["pretrained"]


def _sft(s):
    return s.breakdown["after SFT"]


CLAIMS = (
    Claim(
        "cases-as-intended",
        "every known case and shortcut gets the status it was written to get",
        lambda F: not F.mismatches,
        lambda F: F.mismatches,
        kind="law",
    ),
    Claim(
        "pretrained-fails-on-format",
        "almost all the pretrained policy's rejections fail on format, on every seed",
        _every(lambda s: s.format_share["pretrained"] > 0.99),
        _on_seeds(lambda s: s.format_share["pretrained"]),
        kind="law",
    ),
    Claim(
        "pretrained-never-ends",
        "the pretrained policy almost never ends an answer, on every seed",
        _every(lambda s: _pre(s)["incomplete"] > 0.99 * _pre(s)["samples"]),
        _on_seeds(lambda s: _pre(s)["incomplete"]),
        kind="law",
    ),
    Claim(
        "pretrained-writes-right-sums",
        "some rejected pretrained answers start with the right sum, on every seed",
        _every(lambda s: _pre(s)["right_number_rejected"] > 0),
        _on_seeds(lambda s: _pre(s)["right_number_rejected"]),
        kind="law",
    ),
    Claim(
        "sft-fails-on-arithmetic",
        "after SFT most failures are wrong sums, on every seed",
        _every(lambda s: s.format_share["after SFT"] < 0.5),
        _on_seeds(lambda s: s.format_share["after SFT"]),
        kind="law",
    ),
    Claim(
        "sft-raises-reward",
        "SFT raises the expected reward above the pretrained policy's, on every seed",
        _every(lambda s: _sft(s)["expected_reward"] > _pre(s)["expected_reward"]),
        _on_seeds(lambda s: (_pre(s)["expected_reward"], _sft(s)["expected_reward"])),
        kind="law",
    ),
    Claim(
        "process-base-knows-plain-sums",
        "process-base starts from base's pretrained policy, which already writes the plain sums right",
        lambda F: F.process_parent == "base" and all(F.by_seed[s].plain_known > 0.9 for s in F.seeds),
        _on_seeds(lambda s: s.plain_known),
        kind="law",
    ),
    Claim(
        "valid-steps-imply-right-sum",
        "two valid steps force the right final sum: no wrong value has both steps valid, on every seed",
        _every(lambda s: s.incorrect_all_valid == 0),
        _on_seeds(lambda s: s.incorrect_all_valid),
        kind="law",
    ),
    Claim(
        "both-cells-filled",
        "some right answers come through an invalid step and some wrong answers earn partial credit, on every seed",
        _every(lambda s: s.counts[d.RIGHT_INVALID] > 0 and s.counts[d.PARTIAL_CREDIT] > 0),
        _on_seeds(lambda s: (s.counts[d.RIGHT_INVALID], s.counts[d.PARTIAL_CREDIT])),
        kind="law",
    ),
    Claim(
        "wrong-first-sums-mostly-off-by-one",
        "most right answers through an invalid step wrote a first sum off by one, on every seed",
        _every(lambda s: s.right_invalid["off_by_one"] > s.right_invalid["total"] / 2),
        _on_seeds(lambda s: (s.right_invalid["off_by_one"], s.right_invalid["total"])),
        kind="law",
    ),
    Claim(
        "partial-credit-both-ways",
        "partial credit comes both from a slip after a right first sum and from a "
        "wrong first sum carried forward, on every seed",
        _every(
            lambda s: (
                s.partial["first_valid"] > 0
                and s.partial["second_valid"] > 0
                and s.partial["first_valid"] + s.partial["second_valid"] == s.partial["total"]
            )
        ),
        _on_seeds(lambda s: dict(s.partial)),
        kind="law",
    ),
    Claim(
        "figure-agrees-then-disagrees",
        "the figure's two rollouts answer one prompt: the judges agree on the "
        "first and disagree on the second, on every seed",
        _every(
            lambda s: (
                len(s.pair) == 2
                and s.pair[0]["prompt"] == s.pair[1]["prompt"]
                and s.pair[0]["kind"] == d.AGREE
                and s.pair[0]["status"] == "accepted"
                and s.pair[1]["kind"] == d.RIGHT_INVALID
            )
        ),
        _on_seeds(lambda s: [(j["prompt"], j["completion"], j["kind"]) for j in s.pair]),
        kind="law",
    ),
    Claim(
        "block-holds-a-choice",
        "Exercise 2.3's block holds rollouts the judges disagree on and rollouts they "
        "agree on, none for the figure's prompt",
        _every(
            lambda s: (
                {j["kind"] in d.DISAGREEMENTS for j in s.block} == {True, False}
                and not {j["prompt"] for j in s.block} & {j["prompt"] for j in s.pair}
            )
        ),
        _on_seeds(lambda s: [j["kind"] for j in s.block]),
        kind="law",
    ),
    Claim(
        "right-answers-mostly-valid",
        "most of the fine-tuned policy's accepted answers come through valid steps, on every seed",
        _every(lambda s: s.valid_share > 0.5),
        _on_seeds(lambda s: s.valid_share),
        kind="law",
    ),
    Claim(
        "rule-change-moves-both-ways",
        "judging step 2 against the true partial sum takes credit from some "
        "rollouts and gives it to others, on every seed",
        _every(lambda s: s.rule_change["gained"] > 0 and s.rule_change["lost"] > 0),
        _on_seeds(lambda s: dict(s.rule_change)),
        kind="law",
    ),
    Claim(
        "rl-raises-accuracy",
        "both rewards raise held-out accuracy on average over the seeds",
        lambda F: (
            F.comparison.outcome_end_accuracy > F.comparison.outcome_start_accuracy
            and F.comparison.shaped_end_accuracy > F.comparison.shaped_start_accuracy
        ),
        lambda F: (
            F.comparison.outcome_start_accuracy,
            F.comparison.outcome_end_accuracy,
            F.comparison.shaped_start_accuracy,
            F.comparison.shaped_end_accuracy,
        ),
        kind="law",
    ),
    # A law on every audited triple of two draws, until a CPU with AVX512-FP16 and AMX drew seeds 0-2 on which the
    # mean moved from 0.53 to 0.60: a finding, and the page words how far it moved (F.comparison.outcome_move).
    Claim(
        "outcome-only-validity-barely-moves",
        f"outcome-only RL, which never looks at the steps, moves the mean step validity by less than {BARELY} "
        "either way",
        lambda F: abs(F.comparison.outcome_end_validity - F.comparison.outcome_start_validity) < BARELY,
        lambda F: (F.comparison.outcome_start_validity, F.comparison.outcome_end_validity),
        kind="finding",
    ),
    Claim(
        "shaped-ends-more-valid",
        "the shaped runs end with the higher step validity on average",
        lambda F: F.comparison.validity_gap > 0,
        lambda F: F.comparison.validity_gap,
        kind="law",
    ),
    Claim(
        "invalid-share-grows",
        "outcome-only RL raises the share of right answers through an invalid step to over "
        "one and a half times its first batch's",
        every_seed(lambda F, s: F.comparison.growth[s] > 1.5),
        lambda F: dict(F.comparison.growth),
        kind="finding",
    ),
    Claim(
        "outcome-only-ends-above-shaped",
        "the outcome-only run ends with the higher share of right answers through an invalid step, on every seed",
        lambda F: F.comparison.late_gap_min > 0,
        lambda F: F.comparison.late_gap_min,
        kind="law",
    ),
    Claim(
        "invalid-share-stays-small",
        "right answers through an invalid step stay well under half of every batch read",
        lambda F: F.comparison.peak_share < 0.5,
        lambda F: F.comparison.peak_share,
        kind="law",
    ),
)
