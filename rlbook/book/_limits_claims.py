"""Chapter 5's claims (chapters/05-reward-limits.qmd), as checks over its facts.

The laws the chapter's sentences rest on, each a check over the facts
:mod:`rlbook.book.limits` computes: the two verifiers, the reward hack and
its detector, the learned judge over-optimised, and the response policy's
interventions. A comment above a claim says why it is stated at the level it
is, where a numerical draw or a seed once asked for it. The facts module
imports them as its ``CLAIMS``, where :mod:`rlbook.book` reads them. Private
to the chapter: :func:`rlbook.book.topics` skips modules whose name starts
with an underscore.
"""

from __future__ import annotations

import numpy as np

from rlbook.book._limits_words import TRUSTED, share_grew
from rlbook.book.claims import Claim, every_seed

CLAIMS = (
    Claim(
        "fail-open-pays",
        "the fail-open verifier pays '7#', '#', ' 7#' and '7?#' on 3+4, and not '8#'",
        lambda F: list(F.verifiers.fail_open) == [1, 0, 1, 1, 1],
        lambda F: F.verifiers.fail_open,
        kind="law",
    ),
    Claim(
        "exact-refuses",
        "the exact verifier accepts '7#' only, calling '8#' wrong and the other three malformed",
        lambda F: list(F.verifiers.exact) == ["accepted", "incorrect", "malformed", "malformed", "malformed"],
        lambda F: F.verifiers.exact,
        kind="law",
    ),
    Claim(
        "hack-found",
        "the loophole took over on at least one seed, which the chapter shows",
        lambda F: F.shown is not None and F.shown in F.taken,
        lambda F: F.taken,
        kind="law",
    ),
    Claim(
        "base-rarely-exploits",
        "base writes an answer only the loophole pays in under 10 % of its samples",
        lambda F: all(F.hack[s].base_rate < 0.1 for s in F.seeds),
        lambda F: [F.hack[s].base_rate for s in F.seeds],
        kind="law",
    ),
    Claim(
        "slower-fewer-takeovers",
        "at main's learning rate and warm-up the loophole took over on fewer seeds",
        lambda F: len(F.slow_taken) < len(F.taken),
        lambda F: (F.slow_taken, F.taken),
        kind="law",
    ),
    # It grew on every seed until the README's plain draw, where seed 2's share stayed under 2 % and shrank; what
    # every draw seen supports is that it grew on some seed.
    Claim(
        "slow-share-grows",
        "at main's settings the loophole's share of a batch still grew on some seed",
        lambda F: any(share_grew(F.hack[s].slow.share) for s in F.seeds),
        lambda F: [(F.hack[s].slow.share[0], F.hack[s].slow.share[-1]) for s in F.seeds],
        kind="law",
    ),
    Claim(
        "reward-rose-accuracy-fell",
        "on the shown seed the training reward rose while held-out accuracy collapsed",
        lambda F: F.hack[F.shown].reward_gain > F.phrases.rise and F.hack[F.shown].report.heldout[-1] < 0.05,
        lambda F: (F.hack[F.shown].reward_gain, F.hack[F.shown].report.heldout[-1]),
        kind="law",
    ),
    Claim(
        "knocked-off-first",
        "wherever the loophole took over, the first full-size updates first knocked the "
        "policy off its sums (under half the first batch's right answers) while the loophole paid for a minority",
        lambda F: (
            F.exploit.warmup == 0
            and all(F.hack[s].dip.right < F.hack[s].dip.first_right / 2 and F.hack[s].dip.share < 0.5 for s in F.taken)
        ),
        lambda F: [F.hack[s].dip for s in F.taken],
        kind="law",
    ),
    Claim(
        "never-recovered",
        "wherever the loophole took over, held-out accuracy never came back to its start",
        lambda F: all(max(F.hack[s].report.heldout[1:]) < F.hack[s].report.heldout[0] for s in F.taken),
        lambda F: [F.hack[s].report.heldout for s in F.taken],
        kind="law",
    ),
    Claim(
        "loophole-pays-most",
        "the loophole pays for most of the shown seed's last batch, and its commonest answer "
        "is one the exact verifier calls malformed and int cannot read",
        lambda F: (
            F.hack[F.shown].share[-1] > 0.5
            and F.hack[F.shown].wrong[0].status == "malformed"
            and F.hack[F.shown].wrong[0].paid_reason.startswith("accepted because parsing failed")
        ),
        lambda F: (F.hack[F.shown].share[-1], F.hack[F.shown].wrong[0]),
        kind="law",
    ),
    Claim(
        "split-turns-over",
        "at the shown seed's first step most of the reward is the task's, at its last the loophole's",
        lambda F: (
            F.hack[F.shown].task[0] > F.hack[F.shown].loophole[0]
            and F.hack[F.shown].loophole[-1] > F.hack[F.shown].task[-1]
        ),
        lambda F: (
            (F.hack[F.shown].task[0], F.hack[F.shown].loophole[0]),
            (F.hack[F.shown].task[-1], F.hack[F.shown].loophole[-1]),
        ),
        kind="law",
    ),
    Claim(
        "detector-names-the-exploit",
        "where the loophole took over, the detector flags an exploited verifier and held-out accuracy did not rise",
        lambda F: all(F.hack[s].diagnosis == "exploited verifier" and F.hack[s].heldout_gain <= 0 for s in F.taken),
        lambda F: [(F.hack[s].diagnosis, F.hack[s].heldout_gain) for s in F.taken],
        kind="law",
    ),
    Claim(
        "detector-blames-no-honest-seed",
        "where the loophole did not take over, it paid for under 5 % of any batch and the detector blames no verifier",
        lambda F: all(
            F.hack[s].diagnosis != "exploited verifier" and max(F.hack[s].share) < 0.05
            for s in F.seeds
            if s not in F.taken
        ),
        kind="law",
    ),
    # A law until the audit's first truly native draw: on its seed 3 the detector flagged main at step 10 ("gain
    # did not transfer") while main's held-out accuracy rose by 0.27. A false alarm on one seed of twenty: a finding.
    Claim(
        "detector-silent-on-main",
        "the detector stays silent on main, whose held-out accuracy rose",
        every_seed(lambda F, s: F.hack[s].honest.flagged is None and F.hack[s].honest.gain > 0),
        kind="finding",
    ),
    Claim(
        "judge-good-where-trained",
        "the judge's AUC and accuracy on fresh samples of its training prompts are above 0.75, every seed",
        lambda F: all(
            F.judge[s].report.train_prompts.auc > 0.75 and F.judge[s].report.train_prompts.accuracy > 0.75
            for s in F.seeds
        ),
        lambda F: [F.judge[s].report.train_prompts for s in F.seeds],
        kind="law",
    ),
    Claim(
        "judge-worse-held-out",
        "on held-out prompts the judge's AUC is more than 0.1 below, every seed",
        lambda F: all(
            F.judge[s].report.heldout_prompts.auc < F.judge[s].report.train_prompts.auc - 0.1 for s in F.seeds
        ),
        lambda F: [(F.judge[s].report.train_prompts.auc, F.judge[s].report.heldout_prompts.auc) for s in F.seeds],
        kind="law",
    ),
    Claim(
        "best-of-n-proxy-rises",
        "best-of-n's proxy never falls with n and rises by more than 0.05, every seed",
        lambda F: all(
            np.all(np.diff(F.judge[s].bon.proxy) >= 0) and F.judge[s].bon.proxy[-1] > F.judge[s].bon.proxy[0] + 0.05
            for s in F.seeds
        ),
        lambda F: [F.judge[s].bon.proxy for s in F.seeds],
        kind="law",
    ),
    Claim(
        "best-of-n-gold-falls",
        "best-of-n's gold reward peaks at n = 64 or below and ends below its value at n = 1",
        lambda F: all(F.judge[s].bon.gold[-1] < F.judge[s].bon.gold[0] and F.judge[s].bon.peak <= 64 for s in F.seeds),
        lambda F: [F.judge[s].bon.gold for s in F.seeds],
        kind="law",
    ),
    # On one numerical draw rm's gold rose on seed 0, so its fall is claimed on two seeds of three.
    Claim(
        "rm-proxy-up-gold-down",
        "against the judge alone the proxy rises by more than 0.05 on every seed and the gold falls on at least two",
        lambda F: (
            all(F.judge[s].rm.proxy[-1] > F.judge[s].rm.proxy[0] + 0.05 for s in F.seeds)
            and sum(F.judge[s].rm.gold[-1] < F.judge[s].rm.gold[0] for s in F.seeds) >= 2
        ),
        lambda F: [(F.judge[s].rm.proxy[-1], F.judge[s].rm.gold[0], F.judge[s].rm.gold[-1]) for s in F.seeds],
        kind="law",
    ),
    # On another draw rm-kl collapsed at its last checkpoint on seed 1: the mean over checkpoints is claimed. On
    # the draw ATEN_CPU_CAPABILITY=default, rm's gold held up on seed 0 and rm-kl's mean led it by only 0.035:
    # the lead is claimed, not its size.
    Claim(
        "kl-holds-gold",
        "with the KL penalty the gold reward, averaged over the checkpoints, is above rm's, every seed",
        lambda F: all(np.mean(F.judge[s].kl.gold) > np.mean(F.judge[s].rm.gold) for s in F.seeds),
        lambda F: [(np.mean(F.judge[s].rm.gold), np.mean(F.judge[s].kl.gold)) for s in F.seeds],
        kind="law",
    ),
    Claim(
        "over-rated-grows",
        "the over-rated share of rm's batches grows by more than 0.05, every seed",
        lambda F: all(F.judge[s].over.share[-1] > F.judge[s].over.share[0] + 0.05 for s in F.seeds),
        lambda F: [(F.judge[s].over.share[0], F.judge[s].over.share[-1]) for s in F.seeds],
        kind="law",
    ),
    # A law until the audit on a Xeon with AVX512-FP16 and AMX, where it failed on one triple of the pinned draw:
    # now a finding, judged seed by seed as the page words it.
    Claim(
        "over-rated-everywhere",
        "rm's favourite over-rated answer is written wrongly on at least five prompts and scored at least 0.5",
        every_seed(lambda F, s: F.judge[s].over.top[0][3] >= 5 and F.judge[s].over.top[0][2] >= 0.5),
        lambda F: [F.judge[s].over.top for s in F.seeds],
        kind="finding",
    ),
    # Every seed until the README's AVX2 draw, where seed 1's answer was the right answer of no training prompt.
    Claim(
        "over-rated-is-trusted",
        "rm's favourite over-rated answer is the right answer of several training "
        "prompts on some seed, so the judge saw it labelled right again and again",
        lambda F: any(F.judge[s].over.top[0][4] >= TRUSTED for s in F.seeds),
        lambda F: [F.judge[s].over.top[0][4] for s in F.seeds],
        kind="law",
    ),
    Claim(
        "intervention-per-fault",
        "each injected fault gives one intervention, at its step, every seed",
        lambda F: all([e.step for e in F.response[s].events] == list(F.response[s].planned) for s in F.seeds),
        lambda F: [[e.step for e in F.response[s].events] for s in F.seeds],
        kind="law",
    ),
    Claim(
        "fault-batches-as-stored",
        "the outage batch is all unverifiable and the burst mostly malformed, every seed",
        lambda F: all(
            F.response[s].events[0].unverifiable_share == 1.0 and F.response[s].events[1].malformed_share > 0.5
            for s in F.seeds
        ),
        kind="law",
    ),
    Claim(
        "nan-loss-not-applied",
        "the non-finite loss was never applied, every seed",
        lambda F: all(F.response[s].events[2].aborted_update == "non-finite loss" for s in F.seeds),
        kind="law",
    ),
    Claim(
        "record-carries-interventions",
        "the run record carries the log's interventions, every seed",
        lambda F: all(F.response[s].recorded for s in F.seeds),
        kind="law",
    ),
    Claim(
        "abort-stops-early",
        "the abort run stopped before its last step and says so in its record, every seed",
        lambda F: all(
            F.response[s].abort.status == "aborted" and F.response[s].abort.step < F.abort_steps for s in F.seeds
        ),
        lambda F: [F.response[s].abort for s in F.seeds],
        kind="law",
    ),
)
