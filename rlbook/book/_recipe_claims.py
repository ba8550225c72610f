"""Chapter 9's claims (chapters/09-modern-recipe.qmd), as checks over its facts (:mod:`rlbook.book.recipe`).

Laws are properties of the code (a refilled batch holds no silent group)
or outcomes the audit of ten seeds on two draws found everywhere; the
comparisons between runs whose seeds part ways are findings, worded from
the runs. Private to the chapter: :func:`rlbook.book.topics` skips modules
whose name starts with an underscore.
"""

from __future__ import annotations

from rlbook.book.claims import Claim, every

SILENT = 0.1
"""The least share of silent groups in ``main``'s batches at which the chapter calls dynamic sampling's work real."""
CUT = 0.05
"""The least share of answers the tight budget cuts off over the first ten steps for the chapter to study it."""
FEW_WORKED = 0.1
"""The share of worked answers under which the chapter says a run stopped writing its working."""
CLIPPED_ABOVE = 0.02
"""The share of tokens per step clipped from above under which the chapter says a wider upper bound has little to
release."""
ENTROPY_GAP = 0.02
"""How close, in nats, the chapter calls the late entropies of ``ppo`` and ``clip-higher`` alike."""


CLAIMS = (
    # A law until the audit of ten seeds: on one seed of each draw clip-higher, whose run parts from ppo's after its
    # first batch, clipped a larger share from above (0.55 % against 0.54 %), so it is a finding.
    Claim(
        "clip-higher-clips-less-above",
        "clip-higher's upper bound of 1.28 clips a smaller share of tokens from above than ppo's 1.2",
        every(lambda s: s.clipped["clip-higher"].clip_high < s.clipped.ppo.clip_high),
        lambda F: [
            (F.by_seed[s].clipped["clip-higher"].clip_high, F.by_seed[s].clipped.ppo.clip_high) for s in F.seeds
        ],
        kind="finding",
    ),
    Claim(
        "few-tokens-clipped-above",
        f"under ppo fewer than {CLIPPED_ABOVE:.0%} of tokens per step are clipped from above, on average, every seed",
        every(lambda s: s.clipped.ppo.clip_high < CLIPPED_ABOVE),
        lambda F: [F.by_seed[s].clipped.ppo.clip_high for s in F.seeds],
        kind="law",
    ),
    Claim(
        "entropy-falls-alike",
        f"the entropy of ppo and of clip-higher falls over training, and ends within {ENTROPY_GAP} nats of each other",
        every(
            lambda s: (
                s.clipped.ppo.entropy_late < s.clipped.ppo.entropy_first
                and s.clipped["clip-higher"].entropy_late < s.clipped["clip-higher"].entropy_first
                and abs(s.clipped.ppo.entropy_late - s.clipped["clip-higher"].entropy_late) < ENTROPY_GAP
            )
        ),
        lambda F: [
            (F.by_seed[s].clipped.ppo.entropy_late, F.by_seed[s].clipped["clip-higher"].entropy_late) for s in F.seeds
        ],
        kind="finding",
    ),
    Claim(
        "clip-higher-above-ppo",
        "clip-higher ends above ppo in held-out accuracy",
        every(lambda s: s.clipped["clip-higher"].end > s.clipped.ppo.end),
        kind="finding",
    ),
    Claim(
        "gspo-clips-more",
        "gspo's tight clip removes the gradient of more than ten times ppo's share of tokens, every seed",
        every(lambda s: s.clipped.gspo.clip > 10 * s.clipped.ppo.clip),
        lambda F: [(F.by_seed[s].clipped.gspo.clip, F.by_seed[s].clipped.ppo.clip) for s in F.seeds],
        kind="law",
    ),
    Claim(
        "gspo-most-outside",
        "after the updates of the replayed step, more than half of gspo's answers lie outside its clip range, every seed",
        every(lambda s: s.outside > 0.5),
        lambda F: [F.by_seed[s].outside for s in F.seeds],
        kind="law",
    ),
    Claim(
        "gspo-below-ppo",
        "gspo ends below ppo in held-out accuracy",
        every(lambda s: s.clipped.gspo.end < s.clipped.ppo.end),
        kind="finding",
    ),
    Claim(
        "main-has-silent-groups",
        f"more than {SILENT:.0%} of main's groups per step are silent over its first 60 steps, on average, every seed",
        every(lambda s: s.sampled.silent_main > SILENT),
        lambda F: [F.by_seed[s].sampled.silent_main for s in F.seeds],
        kind="law",
    ),
    Claim(
        "refilled-batches-have-signal",
        "no batch that dynamic sampling learned from holds a silent group, every seed",
        every(lambda s: s.sampled.silent_dynamic == 0),
        lambda F: [F.by_seed[s].sampled.silent_dynamic for s in F.seeds],
        kind="law",
    ),
    Claim(
        "refilling-costs-answers",
        "dynamic sampling samples more answers than main over the same steps, every seed",
        every(lambda s: s.sampled.sampled > s.sampled.main_sampled),
        lambda F: [(F.by_seed[s].sampled.sampled, F.by_seed[s].sampled.main_sampled) for s in F.seeds],
        kind="law",
    ),
    Claim(
        "dynamic-ahead-per-step",
        "after the same number of steps, dynamic ends above main in held-out accuracy",
        every(lambda s: s.sampled.dynamic.end > s.sampled.main_at_steps),
        kind="finding",
    ),
    Claim(
        "dynamic-behind-per-answer",
        "dynamic ends below main's checkpoint with as many answers sampled",
        every(lambda s: s.sampled.dynamic.end < s.sampled.main_at_sampled),
        kind="finding",
    ),
    Claim(
        "token-mean-above-seq-mean",
        "worked (every token alike) ends above worked-seq-mean in held-out accuracy",
        every(lambda s: s.worked.worked.end > s.worked["worked-seq-mean"].end),
        kind="finding",
    ),
    # First measured on the first step's batch alone, which held on 8 and 7 of the ten audited seeds of each draw
    # (here and in the next claim): one batch of 256 answers is too small a sample, so both read ten steps. Read so,
    # the first held on every audited seed and the second on 9 of 10 of each draw: the second is a finding. The
    # first failed on seed 0 of a CPU with AVX512-FP16 and AMX (4.5 % cut off), so it is a finding too: the page
    # prints each seed's share.
    Claim(
        "tight-budget-cuts",
        f"the tight budget cuts off more than {CUT:.0%} of worked-tight's answers over its first ten steps, every seed",
        every(lambda s: s.worked["worked-tight"].cut_early > CUT),
        lambda F: [F.by_seed[s].worked["worked-tight"].cut_early for s in F.seeds],
        kind="finding",
    ),
    Claim(
        "tight-learns-to-fit",
        "under the tight budget the share of cut-off answers falls from the first ten steps to the last ten",
        every(lambda s: s.worked["worked-tight"].cut_late < s.worked["worked-tight"].cut_early),
        lambda F: [
            (F.by_seed[s].worked["worked-tight"].cut_early, F.by_seed[s].worked["worked-tight"].cut_late)
            for s in F.seeds
        ],
        kind="finding",
    ),
    Claim(
        "tight-fewer-worked",
        "under the tight budget the share of worked answers ends below worked's, every seed",
        every(lambda s: s.worked["worked-tight"].share_end < s.worked.worked.share_end),
        lambda F: [
            (F.by_seed[s].worked["worked-tight"].share_end, F.by_seed[s].worked.worked.share_end) for s in F.seeds
        ],
        kind="law",
    ),
    Claim(
        "filter-keeps-cutting",
        "with the cut-off answers filtered out of the loss, more answers are still cut off over the last ten steps "
        "than without the filter, every seed",
        every(lambda s: s.worked["worked-tight-filter"].cut_late > s.worked["worked-tight"].cut_late),
        lambda F: [
            (F.by_seed[s].worked["worked-tight-filter"].cut_late, F.by_seed[s].worked["worked-tight"].cut_late)
            for s in F.seeds
        ],
        kind="law",
    ),
    Claim(
        "filter-above-tight",
        "worked-tight-filter ends above worked-tight in held-out accuracy",
        every(lambda s: s.worked["worked-tight-filter"].end > s.worked["worked-tight"].end),
        kind="finding",
    ),
    # A law until the audit on a Xeon with AVX512-FP16 and AMX: it held on 9 of the pinned draw's ten seeds.
    Claim(
        "penalty-stops-working",
        f"under the length penalty the share of worked answers ends below {FEW_WORKED:.0%}",
        every(lambda s: s.worked["worked-tight-shape"].share_end < FEW_WORKED),
        lambda F: [F.by_seed[s].worked["worked-tight-shape"].share_end for s in F.seeds],
        kind="finding",
    ),
    Claim(
        "penalty-costs-accuracy",
        "under the length penalty held-out accuracy ends below its start",
        every(lambda s: s.worked["worked-tight-shape"].end < s.worked["worked-tight-shape"].start),
        kind="finding",
    ),
)
