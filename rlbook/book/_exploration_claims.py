"""Chapter 6's claims (chapters/06-exploration-rollouts.qmd), as checks over its facts.

The laws and findings the chapter's sentences rest on, each a check over the
facts :mod:`rlbook.book.exploration` computes: what temperature does to
sampling, what ``main``'s batches are made of, pass@k before and after RL,
the pretraining format, and how ``stale`` and ``accepted-only`` collect
their rollouts. The facts module imports them as its ``CLAIMS``, where
:mod:`rlbook.book` reads them. Private to the chapter:
:func:`rlbook.book.topics` skips modules whose name starts with an
underscore.
"""

from __future__ import annotations

from rlbook.book.claims import Claim, every

NEAR = 0.1
"""How close to ``main`` the chapter claims ``accepted-only`` ends, in held-out expected reward."""
PASS1_RISE = 0.1
"""The least rise in held-out pass@1 that the chapter claims RL makes on every seed (``rl-raises-pass-1``)."""
STALE_NOVEL = 0.1
"""The most of a second round at the coolest temperature that the chapter claims is new (``cool-round-stale``)."""


def _every(check):
    """A check that ``check(seed facts)`` holds on every seed."""
    return every(check)


def _at(rows, temperature):
    return next(r for r in rows if r.temperature == temperature)


def _gi(F) -> int:
    return list(F.ks).index(F.group)


CLAIMS = (
    Claim(
        "cool-first-sample",
        "a cool first sample is right more often than a hot one, every seed",
        _every(lambda s: s.sparse[0].pass_at_k[0] > s.sparse[-1].pass_at_k[0]),
        kind="law",
    ),
    Claim(
        "cool-leaves-more-unsolved",
        "the cool policy leaves at least as many held-out sums unsolved as T = 1",
        _every(lambda s: _at(s.sparse, 1.0).never <= s.sparse[0].never),
        lambda F: [[r.never for r in F.by_seed[s].sparse] for s in F.seeds],
        kind="law",
    ),
    Claim(
        "coolest-worst-at-64",
        "the coolest temperature has the lowest pass@64, every seed",
        _every(lambda s: s.sparse[0].pass_at_k[-1] == min(r.pass_at_k[-1] for r in s.sparse)),
        kind="law",
    ),
    Claim(
        "coolest-fewest-mixed",
        "the coolest temperature mixes the fewest groups of 16, every seed",
        lambda F: all(
            F.by_seed[s].sparse[0].mixed[_gi(F)] == min(r.mixed[_gi(F)] for r in F.by_seed[s].sparse) for s in F.seeds
        ),
        kind="law",
    ),
    Claim(
        "hot-writes-longer",
        "hotter sampling writes longer answers, every seed",
        _every(lambda s: s.sparse[-1].tokens > s.sparse[0].tokens),
        kind="law",
    ),
    Claim(
        "cool-batches-repeat",
        "cool batches are mostly repeats, hot ones less so, every seed",
        _every(lambda s: s.coverage[0].duplicate > 0.5 and s.coverage[0].duplicate > s.coverage[-1].duplicate),
        kind="law",
    ),
    Claim(
        "cool-round-stale",
        f"almost nothing in a second cool round is new (under {STALE_NOVEL:.0%}), every seed",
        _every(lambda s: s.coverage[0].novel_share < STALE_NOVEL),
        kind="law",
    ),
    Claim(
        "hot-adds-junk",
        "hot sampling adds malformed and cut-off answers, every seed",
        _every(
            lambda s: (
                s.coverage[-1].malformed + s.coverage[-1]["budget-stopped"]
                > s.coverage[0].malformed + s.coverage[0]["budget-stopped"]
            )
        ),
        kind="law",
    ),
    Claim(
        "hot-is-novel",
        "hot sampling gives more novel answers in a second round, every seed",
        _every(lambda s: s.coverage[0].novel_share < s.coverage[-1].novel_share),
        kind="law",
    ),
    Claim(
        "one-right-per-group",
        "a group holds at most one distinct right answer",
        lambda F: (
            all(r.accepted <= 1 / F.group + 1e-12 for s in F.seeds for r in F.by_seed[s].coverage)
            and all(a <= 1 / F.group + 1e-12 for s in F.seeds for a in F.by_seed[s].main.flow.accepted)
        ),
        kind="law",
    ),
    Claim(
        "gain-is-repeats",
        "most of main's reward gain is repeats of right answers, every seed",
        _every(lambda s: s.main.trend.reward_gain > 0 and s.main.trend.repeat_gain > 0.5 * s.main.trend.reward_gain),
        lambda F: [F.by_seed[s].main.trend for s in F.seeds],
        kind="law",
    ),
    Claim(
        "novelty-falls",
        "main's novel share falls from its first steps to its last, every seed",
        _every(lambda s: s.main.trend.novel_late < s.main.trend.novel_early),
        kind="law",
    ),
    Claim(
        "rl-raises-pass-1",
        f"RL raises pass@1 on the held-out sums by more than {PASS1_RISE:g}, every seed",
        _every(lambda s: s.passk.gap[0] > PASS1_RISE),
        lambda F: [F.by_seed[s].passk.gap[0] for s in F.seeds],
        kind="law",
    ),
    Claim(
        "lead-shrinks",
        "main's lead over base is smaller at k = 256 than at k = 1, every seed",
        _every(lambda s: s.passk.gap[-1] < s.passk.gap[0]),
        lambda F: [(F.by_seed[s].passk.gap[0], F.by_seed[s].passk.gap[-1]) for s in F.seeds],
        kind="law",
    ),
    Claim(
        "rise-on-solved",
        "more than half the rise in pass@1 lies on sums base solved at least once, every seed",
        _every(lambda s: s.passk.on_solved > 0.5),
        lambda F: [F.by_seed[s].passk.on_solved for s in F.seeds],
        kind="law",
    ),
    Claim(
        "chat-below-own-format",
        "the chat answers start below what the pretrained policy knew, and RL raises them, every seed",
        _every(lambda s: s.own.before < s.own.own and s.own.after > s.own.before),
        lambda F: [F.by_seed[s].own for s in F.seeds],
        kind="law",
    ),
    Claim(
        "own-format-forgotten",
        "after RL the pretraining format is right less often than before, every seed",
        _every(lambda s: s.own.own_after < s.own.own),
        kind="law",
    ),
    Claim(
        "stale-is-clipped",
        "stale rollouts are clipped, on-policy ones almost never",
        lambda F: F.phrases.stale_clip > F.phrases.main_clip and F.phrases.main_clip < F.clip_bound,
        lambda F: (F.phrases.stale_clip, F.phrases.main_clip),
        kind="law",
    ),
    Claim(
        "record-names-selection",
        "the record names the selection rule and keeps both counts, every seed",
        _every(
            lambda s: (
                s.collection.record.selection_rule == "keep accepted"
                and s.collection.record.rollouts_used < s.collection.record.rollouts_before_filtering
                and s.collection.record.rollouts_before_filtering == s.collection.selection_total.generated
            )
        ),
        kind="law",
    ),
    Claim(
        "rft-learns",
        "keeping the accepted rollouts raises held-out reward by more than 0.1 by the last step compared, every seed",
        _every(lambda s: s.collection["accepted-only"].heldout[-1] - s.collection["accepted-only"].heldout[0] > 0.1),
        kind="law",
    ),
    Claim(
        "rft-versus-main",
        "accepted-only ends level with or above main at the last step compared (as printed), seed by seed",
        _every(
            lambda s: round(s.collection["accepted-only"].heldout[-1], 2) >= round(s.collection.main.heldout[-1], 2)
        ),
        kind="finding",
    ),
    Claim(
        "rl-forgets-more",
        "RL lowers the pretraining format's sampled accuracy more than SFT did, seed by seed",
        _every(lambda s: s.own.own_sft - s.own.own_after > s.own.own - s.own.own_sft),
        lambda F: [(F.by_seed[s].own.own, F.by_seed[s].own.own_sft, F.by_seed[s].own.own_after) for s in F.seeds],
        kind="finding",
    ),
    Claim(
        "rft-near-main",
        "accepted-only ends within 0.1 of main there, every seed",
        _every(lambda s: abs(s.collection["accepted-only"].heldout[-1] - s.collection.main.heldout[-1]) < NEAR),
        lambda F: [
            (F.by_seed[s].collection["accepted-only"].heldout[-1], F.by_seed[s].collection.main.heldout[-1])
            for s in F.seeds
        ],
        kind="law",
    ),
)
