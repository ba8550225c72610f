"""Chapter 10's claims (chapters/10-preferences-dpo.qmd), as checks over its facts (:mod:`rlbook.book.preference`).

Laws are the outcomes the audit of ten seeds on two draws found on every
one, with room; the comparisons that held on some seeds only are findings,
worded from the runs. Private to the chapter: :func:`rlbook.book.topics`
skips modules whose name starts with an underscore.
"""

from __future__ import annotations

from rlbook.book.claims import Claim, every

SILENT = 0.1
"""The least share of ``base``'s groups without a pair at which the chapter says pairs, like GRPO, lose groups."""
RANKED = 0.6
"""The least share of held-out pairs the clean reward model must rank as the verifier does."""
WRONG = 0.9
"""The share of those answers above which the chapter calls them nearly all wrong."""


CLAIMS = (
    Claim(
        "groups-without-pairs",
        f"more than {SILENT:.0%} of base's groups give no pair, every seed",
        every(lambda s: s.pairs.silent > SILENT),
        lambda F: [F.by_seed[s].pairs.silent for s in F.seeds],
        kind="law",
    ),
    # A law until the audit of ten seeds on two draws: on seed 0 of the native draw dpo ended at 0.382, below
    # base's 0.416.
    Claim(
        "dpo-above-base",
        "dpo ends above base in held-out accuracy",
        every(lambda s: s.policies.dpo.end > s.main.start),
        kind="finding",
    ),
    Claim(
        "main-above-dpo",
        "main ends above dpo in held-out accuracy, from as many sampled answers",
        every(lambda s: s.main.end > s.policies.dpo.end),
        lambda F: [(F.by_seed[s].main.end, F.by_seed[s].policies.dpo.end) for s in F.seeds],
        kind="law",
    ),
    Claim(
        "dpo-pushes-rejected-down",
        "under dpo the pairs' rejected answers lose more log-probability than the chosen ones gain, every seed",
        every(lambda s: -s.policies.dpo.moved.rejected > abs(s.policies.dpo.moved.chosen)),
        lambda F: [tuple(F.by_seed[s].policies.dpo.moved.values()) for s in F.seeds],
        kind="law",
    ),
    Claim(
        "main-raises-chosen-more",
        "main raises the log-probability of the pairs' chosen answers more than dpo does",
        every(lambda s: s.main.moved.chosen > s.policies.dpo.moved.chosen),
        lambda F: [(F.by_seed[s].main.moved.chosen, F.by_seed[s].policies.dpo.moved.chosen) for s in F.seeds],
        kind="finding",
    ),
    # A law: on all ten audited seeds of both draws the rejected answers lost at least 3.28 times what the chosen
    # ones gained.
    Claim(
        "main-pushes-rejected-down-too",
        "under main too the pairs' rejected answers lose more log-probability than the chosen ones gain, every seed",
        every(lambda s: -s.main.moved.rejected > abs(s.main.moved.chosen)),
        lambda F: [tuple(F.by_seed[s].main.moved.values()) for s in F.seeds],
        kind="law",
    ),
    Claim(
        "small-beta-below-base",
        "dpo-small-beta ends below base in held-out accuracy, every seed",
        every(lambda s: s.policies["dpo-small-beta"].end < s.main.start),
        lambda F: [(F.by_seed[s].policies["dpo-small-beta"].end, F.by_seed[s].main.start) for s in F.seeds],
        kind="law",
    ),
    Claim(
        "small-beta-lowers-chosen",
        "under dpo-small-beta the pairs' chosen answers lose log-probability, every seed",
        every(lambda s: s.policies["dpo-small-beta"].moved.chosen < 0),
        lambda F: [F.by_seed[s].policies["dpo-small-beta"].moved.chosen for s in F.seeds],
        kind="law",
    ),
    # First said as "more than half of dpo-small-beta's answers", which held on 8 of the ten audited seeds of the
    # pinned draw (26 % on seeds 7 and 8): said against dpo's share, it held on all ten.
    Claim(
        "small-beta-writes-unseen",
        f"dpo-small-beta writes a larger share of answers its pairs never held than dpo does, and more than "
        f"{WRONG:.0%} of them are wrong, every seed",
        every(
            lambda s: (
                s.policies["dpo-small-beta"].unseen.share > s.policies.dpo.unseen.share
                and s.policies["dpo-small-beta"].unseen.wrong > WRONG
            )
        ),
        lambda F: [
            (F.by_seed[s].policies["dpo-small-beta"].unseen.share, F.by_seed[s].policies.dpo.unseen.share)
            for s in F.seeds
        ],
        kind="law",
    ),
    # A law until the audit: on one of the ten pinned seeds 88 % of these answers were wrong.
    Claim(
        "dpo-unseen-wrong",
        f"more than {WRONG:.0%} of the answers dpo writes that its pairs never held are wrong",
        every(lambda s: s.policies.dpo.unseen.wrong > WRONG),
        kind="finding",
    ),
    Claim(
        "main-writes-fewer-unseen",
        "a smaller share of main's answers than of dpo's are answers the pairs never held",
        every(lambda s: s.main.unseen.share < s.policies.dpo.unseen.share),
        kind="finding",
    ),
    Claim(
        "noisy-below-clean",
        "dpo-noisy ends below dpo in held-out accuracy",
        every(lambda s: s.policies["dpo-noisy"].end < s.policies.dpo.end),
        kind="finding",
    ),
    # A law on the pinned draw (ten seeds of ten) that held on five of the native draw's ten, where bt ranked as
    # few as 32 % of the held-out pairs right: a finding.
    Claim(
        "bt-ranks-most",
        f"bt ranks more than {RANKED:.0%} of the held-out pairs as the verifier does",
        every(lambda s: s.models.bt.ranked > RANKED),
        kind="finding",
    ),
    Claim(
        "bt-fits-more-than-new",
        "bt ranks a larger share of its own training pairs than of the held-out pairs as the verifier does",
        every(lambda s: s.models.bt.fitted > s.models.bt.ranked),
        kind="finding",
    ),
    Claim(
        "noise-costs-ranking",
        "bt-noisy ranks fewer held-out pairs as the verifier does than bt",
        every(lambda s: s.models["bt-noisy"].ranked < s.models.bt.ranked),
        kind="finding",
    ),
)
