"""Measuring a policy outside the training loop.

Chapter 1 estimates expected reward by sampling; chapter 4 uses pass@k;
chapter 5 compares policies under matched inference settings. Every result
carries the settings it was measured under, so a figure can say exactly
what produced it. The training loop evaluates its checkpoints with these
functions; the intervals around a result are :mod:`rlbook.core.stats`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from . import rewards as rw
from .policy import Policy
from .sampling import Rollouts, sample
from .world import BUDGET, TEMPLATES, Task


@dataclass
class EvalResult:
    """Rewards of ``n`` samples on each of a list of tasks, with the settings used.

    ``rewards`` has shape (tasks, n); ``statuses`` and ``completions`` are
    lists of lists in the same layout. ``rollouts``, when :func:`evaluate`
    made the result, are the sampled rollouts themselves, so that another
    verifier can score the same answers.
    """

    tasks: list[Task]
    rewards: np.ndarray
    statuses: list[list[str]]
    completions: list[list[str]]
    settings: dict = field(default_factory=dict)
    rollouts: Rollouts | None = None

    @property
    def per_prompt(self) -> np.ndarray:
        """Estimated expected reward of each prompt: the mean over its samples."""
        return self.rewards.mean(axis=1)

    @property
    def expected_reward(self) -> float:
        """Mean reward over all prompts and samples."""
        return float(self.rewards.mean())

    def status_counts(self) -> dict[str, int]:
        """How many samples the verifier gave each status."""
        flat = [s for row in self.statuses for s in row]
        return {s: flat.count(s) for s in rw.STATUSES if flat.count(s)}

    def correct_counts(self) -> np.ndarray:
        """How many of each task's samples the verifier accepted (pass@k reads these)."""
        return np.array([sum(s == "accepted" for s in row) for row in self.statuses])

    def answers(self, i: int) -> list[tuple[str, int, str]]:
        """(completion, count, status) for task ``i``, most frequent first."""
        seen: dict[str, list] = {}
        for text, status in zip(self.completions[i], self.statuses[i]):
            seen.setdefault(text, [0, status])[0] += 1
        return sorted(((t, c, s) for t, (c, s) in seen.items()), key=lambda x: -x[1])


def eval_seed(seed: int, step: int) -> int:
    """The sampler seed of the checkpoint evaluation at ``step`` of a run with ``seed`` (its train prompts use one more).

    A function of (seed, step) alone, far from the training seeds, so that
    evaluating a checkpoint never disturbs the run's own random stream, and
    any later reader (chapter 1's workshop) can draw the same samples again.
    """
    return 10_000 * (seed + 1) + step


def evaluate(
    policy: Policy,
    tasks: list[Task],
    n: int = 32,
    temperature: float = 1.0,
    budget: int = BUDGET,
    verifier=None,
    seed: int = 0,
    greedy: bool = False,
) -> EvalResult:
    """Sample ``n`` answers per task and score them: expected reward by sampling.

    ``greedy=True`` takes the most probable answer instead (``n`` is then 1).
    """
    verifier = verifier or rw.get_verifier("exact")
    n = 1 if greedy else n
    gen = torch.Generator().manual_seed(seed)
    rollouts = sample(
        policy, [t.prompt for t in tasks], n=n, temperature=temperature, budget=budget, generator=gen, greedy=greedy
    )
    texts = rollouts.completions()
    rewards, statuses = rw.score(verifier, rollouts.prompts, texts)
    settings = {
        "n": n,
        "temperature": None if greedy else temperature,
        "token_budget": budget,
        "decoding": "greedy" if greedy else "sample",
        "seed": seed,
        "verifier": f"{verifier.name}@{verifier.version}",
        "policy_version": rollouts.policy_version,
        "template": TEMPLATES[tasks[0].world],
    }
    shape = (len(tasks), n)
    return EvalResult(
        tasks,
        rewards.reshape(shape),
        [statuses[i * n : (i + 1) * n] for i in range(len(tasks))],
        [texts[i * n : (i + 1) * n] for i in range(len(tasks))],
        settings,
        rollouts,
    )


def greedy_accuracy(policy: Policy, tasks: list[Task], budget: int = BUDGET, verifier=None) -> float:
    """Fraction of tasks whose greedy (most probable) answer the verifier accepts."""
    return evaluate(policy, tasks, budget=budget, verifier=verifier, greedy=True).expected_reward


def step_validity(result: EvalResult) -> float:
    """Mean process score (share of valid steps) over all samples of a multi-step evaluation.

    Each distinct (prompt, completion) is judged once, as in :func:`rlbook.core.rewards.score`.
    """
    judged: dict[tuple[str, str], float] = {}
    scores = []
    for task, row in zip(result.tasks, result.completions):
        for completion in row:
            if (task.prompt, completion) not in judged:
                judged[task.prompt, completion] = rw.process_score(task.prompt, completion).score
            scores.append(judged[task.prompt, completion])
    return float(np.mean(scores))
