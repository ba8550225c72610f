"""Fresh samples at several temperatures: what the policy explores, what it knows and what a group can teach (ch6)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch

from rlbook.core import rewards as rw
from rlbook.core.evaluate import evaluate
from rlbook.core.policy import Policy
from rlbook.core.sampling import sample
from rlbook.core.stats import pass_at_k_curve
from rlbook.core.world import BUDGET, Task

from .batch import from_rollouts
from .composition import CATEGORIES, READABLE, composition, duplicate_shares, novelty


def own_format_accuracy(
    policy: Policy, tasks: Sequence[Task], n: int = 32, temperature: float = 1.0, seed: int = 0, greedy: bool = False
) -> np.ndarray:
    """Per task, the share of ``n`` samples that finish the pretraining line ``a+b=`` with the right sum.

    Pretraining showed the sums as bare lines (``3+4=7``, with random spaces),
    so this asks what the policy knows in the format it learnt them in, apart
    from the chat format that SFT taught. A sample is right when the text up to
    its first line end, spaces removed, is the answer (``a+b+c=`` lines expect
    the partial sums ``s1,s2``); a sample with no line end within the budget is
    wrong. Chapter 6 compares it with held-out accuracy in the chat format
    before and after RL.
    """
    targets = [",".join(map(str, t.steps)) for t in tasks]
    lines = ["\n" + "+".join(map(str, t.operands)) + "=" for t in tasks]
    n = 1 if greedy else n
    rollouts = sample(
        policy,
        lines,
        n=n,
        temperature=temperature,
        budget=max(map(len, targets)) + 2,
        generator=torch.Generator().manual_seed(seed),
        greedy=greedy,
    )
    right = [
        text.split("\n")[0].replace(" ", "") == target and "\n" in text
        for text, target in zip(rollouts.completions(), (t for t in targets for _ in range(n)))
    ]
    return np.array(right, dtype=float).reshape(len(tasks), n).mean(axis=1)


def temperature_audit(
    policy: Policy,
    prompts: list[str],
    temperatures: Sequence[float],
    n: int = 16,
    rounds: int = 2,
    budget: int = BUDGET,
    seed: int = 0,
    verifier=None,
) -> list[dict]:
    """The exploration audit of fresh samples at several temperatures (``fig-exploration-coverage``).

    At each temperature the policy answers every prompt ``n`` times in each of
    ``rounds`` rounds, as if it took ``rounds`` training steps without
    changing. Returns one dict per temperature: the category shares and
    the split duplicate shares (``duplicate_accepted``...) as means over
    rounds, ``novel_share`` of the last round (answers not seen for that
    prompt in earlier rounds), ``tokens_per_rollout``, ``distinct_per_prompt``
    (distinct completions per prompt over all rounds) and
    ``distinct_right_per_prompt`` (distinct accepted ones).
    """
    verifier = verifier or rw.get_verifier("exact")
    rows = []
    for temperature in temperatures:
        gen = torch.Generator().manual_seed(seed)
        batches = [
            from_rollouts(sample(policy, prompts, n=n, temperature=temperature, budget=budget, generator=gen), verifier)
            for _ in range(rounds)
        ]
        shares = {c: float(np.mean([composition(b)[c] for b in batches])) for c in CATEGORIES}
        shares.update({f"duplicate_{s}": float(np.mean([duplicate_shares(b)[s] for b in batches])) for s in READABLE})
        pairs = {(p, c, s) for b in batches for p, c, s in zip(b.prompts, b.completions, b.statuses)}
        rows.append(
            {
                "temperature": float(temperature),
                **shares,
                "novel_share": novelty(batches)[-1]["novel_share"],
                "tokens_per_rollout": float(np.mean([b.tokens / len(b) for b in batches])),
                "distinct_per_prompt": len(pairs) / len(prompts),
                "distinct_right_per_prompt": sum(s == "accepted" for _, _, s in pairs) / len(prompts),
            }
        )
    return rows


def mixed_group_rate(n: int, c: int, k: int) -> float:
    """Probability that a group of ``k`` of the ``n`` samples (``c`` right) mixes right and wrong answers.

    Drawing k without replacement, all wrong has probability C(n-c,k)/C(n,k)
    and all right C(c,k)/C(n,k); only a mixed group gives group-centred
    advantages that are not all zero (chapter 3's zero-variance groups), so
    this is the chance that a prompt teaches anything at group size k.
    """
    if not 1 <= k <= n or not 0 <= c <= n:
        raise ValueError(f"need 1 <= k <= n and 0 <= c <= n, got n={n}, c={c}, k={k}")
    total = math.comb(n, k)
    return 1.0 - (math.comb(n - c, k) + math.comb(c, k)) / total


def sparse_reward_audit(
    policy: Policy,
    tasks: list[Task],
    temperatures: Sequence[float],
    n: int = 64,
    ks: Sequence[int] = (1, 2, 4, 8, 16, 32, 64),
    budget: int = BUDGET,
    seed: int = 0,
) -> list[dict]:
    """pass@k, never-right prompts, mixed-group rates and token cost at each temperature (chapter 6).

    For each temperature: ``pass_at_k`` (mean unbiased pass@k over tasks for
    each k in ``ks``, exact verifier), ``never_right`` (tasks with no
    accepted sample among ``n``), ``mixed`` (mean :func:`mixed_group_rate` for
    each k), ``tokens_per_sample`` and the per-task ``correct`` counts.
    """
    rows = []
    for temperature in temperatures:
        result = evaluate(policy, tasks, n=n, temperature=temperature, budget=budget, seed=seed)
        correct = [sum(s == "accepted" for s in row) for row in result.statuses]
        rows.append(
            {
                "temperature": float(temperature),
                "ks": list(ks),
                "pass_at_k": pass_at_k_curve(n, result.correct_counts(), ks),
                "never_right": [t for t, c in zip(tasks, correct) if c == 0],
                "mixed": np.array([np.mean([mixed_group_rate(n, c, k) for c in correct]) for k in ks]),
                "tokens_per_sample": float(np.mean([len(c) for row in result.completions for c in row])),
                "correct": correct,
            }
        )
    return rows
