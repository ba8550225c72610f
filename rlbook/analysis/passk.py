"""pass@k before and after RL, at equal sampling budgets (chapter 6, @sec-pass-at-k-rl).

Does RL teach a policy to solve prompts it could not solve before, or does
it make it write, more often, answers it could already sample? Yue et al.
(2025) ask this of large reasoning models by giving the policy before RL and
the policy after it the same number k of attempts per prompt and comparing
pass@k as k grows: a gain that shrinks as k grows is sharpening (the base
policy reaches the same answers given enough attempts), a gain that persists
is widening. Both policies are sampled ``n`` times per prompt with the same
settings and pass@k is estimated without bias from those samples
(:func:`rlbook.core.stats.pass_at_k`).

Per prompt, the comparison also splits the rise in pass@1 into the part on
prompts the policy before RL solved at least once in its ``n`` samples and
the part on prompts it never solved (which a larger ``n`` might still have
solved: never in ``n`` samples means a rate below about 3/n, not zero).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlbook.core.evaluate import evaluate
from rlbook.core.policy import Policy
from rlbook.core.stats import pass_at_k_curve
from rlbook.core.world import Task


@dataclass(frozen=True)
class PassAtKComparison:
    """pass@k of a policy before and after RL on the same prompts, from ``n`` samples each.

    ``before`` and ``after`` are the mean pass@k over prompts at each k in
    ``ks``; ``counts_before`` and ``counts_after`` each prompt's number of
    accepted samples out of ``n``.
    """

    n: int
    ks: list[int]
    before: np.ndarray
    after: np.ndarray
    counts_before: np.ndarray
    counts_after: np.ndarray

    @property
    def gap(self) -> np.ndarray:
        """pass@k after RL minus before, at each k."""
        return self.after - self.before

    @property
    def never_before(self) -> int:
        """Prompts with no accepted answer in the ``n`` samples of the policy before RL."""
        return int((self.counts_before == 0).sum())

    @property
    def never_after(self) -> int:
        """Prompts with no accepted answer in the ``n`` samples of the policy after RL."""
        return int((self.counts_after == 0).sum())

    @property
    def widened(self) -> int:
        """Prompts never solved before RL in ``n`` samples that the policy after RL solved at least once."""
        return int(((self.counts_before == 0) & (self.counts_after > 0)).sum())

    @property
    def narrowed(self) -> int:
        """Prompts solved at least once before RL that the policy after RL never solved in ``n`` samples."""
        return int(((self.counts_before > 0) & (self.counts_after == 0)).sum())

    @property
    def gain_on_solved(self) -> float:
        """Share of the rise in pass@1 that lies on prompts the policy before RL solved at least once.

        The rise is the sum over prompts of (accepted after - accepted before) / n;
        raises if pass@1 did not rise, where a share of it means nothing.
        """
        gain = (self.counts_after - self.counts_before) / self.n
        if gain.sum() <= 0:
            raise ValueError("pass@1 did not rise, so it has no share to split")
        return float(gain[self.counts_before > 0].sum() / gain.sum())


def compare_counts(counts_before, counts_after, n: int, ks: list[int]) -> PassAtKComparison:
    """The comparison from each prompt's accepted count out of ``n`` samples, before and after RL."""
    before, after = np.asarray(counts_before, dtype=int), np.asarray(counts_after, dtype=int)
    if before.shape != after.shape or before.ndim != 1:
        raise ValueError(f"counts must be two 1-D arrays over the same prompts, got {before.shape} and {after.shape}")
    ks = [int(k) for k in ks]
    return PassAtKComparison(n, ks, pass_at_k_curve(n, before, ks), pass_at_k_curve(n, after, ks), before, after)


def pass_at_k_before_after(
    before: Policy, after: Policy, tasks: list[Task], n: int, ks: list[int], seed: int = 0, temperature: float = 1.0
) -> PassAtKComparison:
    """Sample both policies ``n`` times per task with the same settings and compare their pass@k at each k."""
    counts = [evaluate(p, tasks, n=n, temperature=temperature, seed=seed).correct_counts() for p in (before, after)]
    return compare_counts(counts[0], counts[1], n, ks)
