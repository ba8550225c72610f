"""REINFORCE with a group-mean baseline, written out whole (chapter 3, "A loop you can read whole").

:func:`reinforce` is the book's RL algorithm in one function of plain
PyTorch: sample a group of answers to every training prompt, score them,
subtract each group's mean reward, weight every generated token's
log-probability by its answer's advantage, and take one AdamW step. The
chapter shows its source beside the pseudocode. It shares nothing with the
engine's training code (:mod:`rlbook.core.rl`) but the sampler, the
verifier and the task list, so no run's cache key depends on it; it takes
``main``'s settings as they are written in the catalogue, and a test holds
its gradient equal to that of the engine's step (:func:`rlbook.core.rl.rl_step`)
on the same batch.

:func:`train_and_evaluate` runs it from the ``base`` policy of one seed and
evaluates the held-out sums as the book's runs do, so that chapter 3's
facts can set it beside ``main``, which is in effect the same algorithm.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from rlbook.core import rewards
from rlbook.core.config import RLConfig
from rlbook.core.evaluate import eval_seed, evaluate
from rlbook.core.policy import Policy
from rlbook.core.sampling import sample
from rlbook.core.world import split


def reinforce(
    policy: Policy,
    settings: RLConfig,
    seed: int = 0,
    after_step: Callable | None = None,
    offset: float = 0.0,
    baseline: bool = True,
) -> Policy:
    """Train ``policy`` by REINFORCE with a group-mean baseline.

    The group size, steps, learning rate and warm-up are those of
    ``settings`` (chapter 3 passes ``main``'s). ``offset`` is added to
    every reward, moving its zero (2 and 1 for a right and a wrong answer
    at an offset of 1); ``baseline=False`` weights each answer by its
    reward itself instead of its advantage. Chapter 3 trains with both
    to show what the baseline buys.
    """
    prompts = [task.prompt for task in split("train")]
    verifier = rewards.get_verifier("exact")
    group, lr = settings.group_size, settings.lr
    opt = torch.optim.AdamW(policy.parameters(), lr=lr, weight_decay=0.0)
    gen = torch.Generator().manual_seed(seed)
    for step in range(1, settings.steps + 1):
        # 1. a group of answers to every prompt, each scored 1 or 0
        batch = sample(policy, prompts, n=group, generator=gen)
        texts = batch.completions()
        scores, _ = rewards.score(verifier, batch.prompts, texts)
        r = torch.tensor(scores, dtype=torch.float32).view(-1, group) + offset
        # 2. advantage: each reward minus its group's mean reward
        #    (without a baseline, the reward itself)
        adv = (r - r.mean(dim=1, keepdim=True) if baseline else r).flatten()
        # 3. log-probability of every generated token, under the
        #    policy as it is now
        ids = torch.cat([batch.prompt_ids, batch.tokens], dim=1)
        logits, _ = policy(ids[:, :-1])
        first = batch.prompt_ids.shape[1] - 1  # predicts token 0
        logp = logits[:, first:].log_softmax(-1)
        logp = logp.gather(-1, batch.tokens[..., None])[..., 0]
        # 4. minus the advantage-weighted log-probabilities,
        #    averaged over every generated token of the batch
        mask = batch.mask.float()
        loss = -(adv[:, None] * logp * mask).sum() / mask.sum()
        # 5. one AdamW step, the learning rate warmed up linearly
        opt.param_groups[0]["lr"] = lr * min(1.0, step / settings.warmup)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if after_step is not None:
            after_step(step, policy)
    return policy


def heldout_reward(policy: Policy, seed: int, step: int, n: int = 32) -> float:
    """Expected reward on the held-out sums, sampled as a book run's checkpoint ``step`` of ``seed`` is."""
    return evaluate(policy, split("heldout"), n=n, seed=eval_seed(seed, step)).expected_reward


def train_and_evaluate(
    start: Policy, seed: int, settings: RLConfig, offset: float = 0.0, baseline: bool = True
) -> dict[str, list]:
    """:func:`reinforce` from ``start`` with ``settings``, the held-out expected reward at its checkpoints.

    Returns ``{"steps": [0, every, ...], "heldout": [...]}``, a checkpoint
    every ``settings.checkpoint_every`` steps: the same checkpoints, samples
    and verifier as a book run's evaluations, so the two curves compare point
    by point (chapter 3). ``offset`` and ``baseline`` are :func:`reinforce`'s:
    chapter 3 trains with rewards moved up, with and without the baseline.
    """
    curve: dict[str, list] = {"steps": [0], "heldout": [heldout_reward(start, seed, 0)]}

    def record(step: int, policy: Policy) -> None:
        if step % settings.checkpoint_every == 0:
            curve["steps"].append(step)
            curve["heldout"].append(heldout_reward(policy, seed, step))

    reinforce(start, settings, seed=seed, after_step=record, offset=offset, baseline=baseline)
    return curve
