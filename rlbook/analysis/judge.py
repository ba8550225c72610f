"""Optimising against a learned judge (chapter 5, reward-model over-optimisation): best-of-n and RL, proxy against gold.

The *proxy* is the judge's probability that an answer is right
(:mod:`rlbook.core.reward_model`); the *gold* reward is the exact verifier's.
Best-of-n draws n answers of ``base`` for a prompt and keeps the one the judge
rates highest; the ``rm`` and ``rm-kl`` runs train against the judge. Both
optimise the proxy, and the gold reward says what that bought (Gao et al. 2023).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np
import torch

from rlbook.core import rewards as rw
from rlbook.core.policy import Policy
from rlbook.core.reward_model import RewardModel, judge_probabilities
from rlbook.core.sampling import sample
from rlbook.core.world import decode, split
from rlbook.runs import Run

NS = (1, 4, 16, 64, 256, 1024)
"""The sample counts n of chapter 5's best-of-n curve."""


@dataclass
class BestOfN:
    """Mean proxy and gold reward of the judge's pick among n samples, for each n of ``ns``."""

    ns: tuple[int, ...]
    proxy: np.ndarray
    gold: np.ndarray
    picks: int

    @property
    def peak(self) -> int:
        """The n at which the pick's gold reward is highest (the smallest such n)."""
        return self.ns[int(np.argmax(self.gold))]


def best_of_n(policy: Policy, model: RewardModel, seed: int, ns: tuple[int, ...] = NS, budget: int = 4) -> BestOfN:
    """Best-of-n against the judge on the training prompts: max(ns) fresh samples of ``policy`` per prompt at T = 1.

    Each prompt's samples are cut into max(ns) / n disjoint sets of n; the
    judge's favourite of each set is scored by the judge (proxy) and by the
    exact verifier (gold), and both are averaged over every set of every
    prompt. Ties in the judge's score go to the earlier sample.
    """
    top = max(ns)
    if any(top % n for n in ns):
        raise ValueError(f"every n must divide the largest, {top}: got {ns}")
    prompts = [t.prompt for t in split("train")]
    rollouts = sample(policy, prompts, n=top, budget=budget, generator=torch.Generator().manual_seed(50_000 + seed))
    texts = rollouts.completions()
    pairs = list(zip(rollouts.prompts, texts))
    distinct = list(dict.fromkeys(pairs))
    judged = dict(zip(distinct, judge_probabilities(model, distinct)))
    exact = rw.get_verifier("exact")
    proxy = np.array([judged[p] for p in pairs]).reshape(len(prompts), top)
    gold = rw.score(exact, rollouts.prompts, texts)[0].reshape(len(prompts), top)
    mean_proxy, mean_gold = [], []
    for n in ns:
        sets_proxy = proxy.reshape(len(prompts), top // n, n)
        pick = sets_proxy.argmax(axis=2)[..., None]
        mean_proxy.append(float(np.take_along_axis(sets_proxy, pick, 2).mean()))
        mean_gold.append(float(np.take_along_axis(gold.reshape(len(prompts), top // n, n), pick, 2).mean()))
    return BestOfN(tuple(ns), np.array(mean_proxy), np.array(mean_gold), len(prompts) * top)


@dataclass
class JudgeCurves:
    """A run against the judge, at each checkpoint: proxy and gold on the training prompts, gold held out."""

    steps: list[int]
    proxy: np.ndarray
    gold: np.ndarray
    heldout: np.ndarray


def curves(run: Run) -> JudgeCurves:
    """Proxy (the judge's mean score) and gold (exact) on fresh training samples, and held-out gold, per checkpoint."""
    evals = run.evals
    return JudgeCurves(
        [e["step"] for e in evals],
        np.array([e["train_reward"] for e in evals]),
        np.array([e["train_exact_reward"] for e in evals]),
        np.array([e["heldout_expected_reward"] for e in evals]),
    )


@dataclass
class Exploit:
    """What the judge over-rates in a run's batches: wrong answers it scores at least 0.5.

    ``share[i]`` is the share of step ``steps[i]``'s batch that is over-rated;
    ``top`` the over-rated completions of the last batch, most common first,
    as (completion, count, mean judge score, how many prompts it is wrong on,
    how many training prompts it is exactly the right completion of).
    """

    steps: list[int]
    share: np.ndarray
    single_digit: np.ndarray
    top: list[tuple[str, int, float, int, int]]


def exploit(run: Run) -> Exploit:
    """The over-rated answers of every stored batch of ``run`` (its rewards are the judge's scores)."""
    exact = rw.get_verifier("exact")
    right_of = Counter(t.completion for t in split("train"))
    steps, share, single = [], [], []
    last: list[tuple[str, str, float]] = []
    for r in run.rollouts:
        prompts = [p for p in r["prompts"] for _ in range(len(r["tokens"]) // len(r["prompts"]))]
        texts = [decode(t[:n]) for t, n in zip(r["tokens"].tolist(), r["lengths"].tolist())]
        gold = rw.score(exact, prompts, texts)[0]
        proxy = r["rewards"].double().numpy()
        over = (proxy >= 0.5) & (gold < 1.0)
        steps.append(r["step"])
        share.append(float(over.mean()))
        single.append(float(np.mean([len(t) == 2 and t[0].isdigit() and t[1] == "#" for t in texts])))
        last = [(p, t, float(s)) for p, t, s, o in zip(prompts, texts, proxy, over) if o]
    by_text: dict[str, list] = {}
    for prompt, text, score in last:
        by_text.setdefault(text, []).append((prompt, score))
    top = []
    for text, seen in sorted(by_text.items(), key=lambda kv: -len(kv[1])):
        top.append((text, len(seen), float(np.mean([s for _, s in seen])), len({p for p, _ in seen}), right_of[text]))
    return Exploit(steps, np.array(share), np.array(single), top)
