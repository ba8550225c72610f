"""Learning from pairs: pairs of answers a verifier ranks, a Bradley–Terry reward model, and DPO (chapter 10).

A *pair* is one prompt with two of the policy's answers to it, one
*chosen* (the verifier's right answer) and one *rejected* (a wrong one).
The pairs come from the groups an RL step would sample: each group's right
and wrong answers are matched at random, so a group whose answers are all
right or all wrong gives no pair, as it gives no gradient in GRPO. A knob,
``noise``, swaps a share of the pairs, as a human labeller would err.

Two learners read the same pairs:

- the Bradley–Terry reward model (Bradley and Terry 1952; Ouyang et al.
  2022): a scalar score ``r`` trained so that ``sigmoid(r(chosen) -
  r(rejected))`` is the probability of the preference (:func:`bradley_terry_loss`);
- DPO (Rafailov et al. 2023), which needs no reward model: the KL-regularised
  objective's optimum has ``r = beta * log(pi / pi_ref)`` up to a term of the
  prompt alone, which cancels in a pair, so the same likelihood trains the
  policy directly (:func:`dpo_loss`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from . import rewards as rw
from .policy import Policy
from .reward_model import RewardModel
from .sampling import sample
from .train import adamw
from .world import BUDGET, EOT_ID


@dataclass(frozen=True)
class PreferenceConfig:
    """How the pairs are sampled and how DPO and the reward model learn from them.

    The sampling defaults are ``main``'s: ``rounds`` groups of
    ``group_size`` answers on every training prompt is what ``main`` samples
    in ``rounds`` steps, so the two spend the same number of answers.
    """

    rounds: int = 100
    group_size: int = 16
    temperature: float = 1.0
    budget: int = BUDGET
    noise: float = 0.0
    beta: float = 1.0
    lr: float = 1e-4
    steps: int = 500
    batch: int = 64
    checkpoint_every: int = 100

    def __post_init__(self) -> None:
        if not 0.0 <= self.noise < 0.5:
            raise ValueError(f"noise is the share of pairs swapped, from 0 up to (not including) 0.5; got {self.noise}")
        if self.beta <= 0:
            raise ValueError(f"beta must be positive; got {self.beta}")
        if min(self.rounds, self.group_size, self.steps, self.batch, self.checkpoint_every) < 1:
            raise ValueError("rounds, group_size, steps, batch and checkpoint_every must each be at least 1")


@dataclass
class Pairs:
    """Pairs of answers as token ids: ``prompt_ids`` (P, prompt length), ``chosen`` and ``rejected`` (P, budget).

    ``swapped`` marks the pairs the noise turned round (their chosen answer
    is the wrong one). ``sampled`` counts every answer drawn to make them,
    ``groups`` the groups, and ``silent`` the groups that gave no pair.
    """

    prompt_ids: torch.Tensor
    chosen: torch.Tensor
    rejected: torch.Tensor
    swapped: torch.Tensor
    sampled: int
    groups: int
    silent: int

    def __len__(self) -> int:
        return len(self.prompt_ids)


def answer_mask(tokens: torch.Tensor) -> torch.Tensor:
    """True for the tokens an answer wrote: up to and including its first end mark, all of them if it has none."""
    ends = (tokens == EOT_ID).long().cumsum(dim=1)
    return (ends == 0) | ((tokens == EOT_ID) & (ends == 1))


def matched(right: torch.Tensor, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """One group's pairs: its right and wrong rows (``right`` is a bool per row) matched at random.

    ``min(#right, #wrong)`` pairs, each row used at most once; none when the
    group is all right or all wrong.
    """
    rows = torch.arange(len(right))
    good, bad = rows[right], rows[~right]
    k = min(len(good), len(bad))
    return good[torch.randperm(len(good), generator=generator)[:k]], bad[
        torch.randperm(len(bad), generator=generator)[:k]
    ]


def preference_pairs(policy: Policy, prompts: list[str], cfg: PreferenceConfig, seed: int) -> Pairs:
    """Pairs from ``cfg.rounds`` groups of ``policy``'s answers on each of ``prompts``, ranked by the exact verifier.

    Deterministic for a seed. With ``cfg.noise`` > 0 each pair is swapped
    with that probability: :func:`swapped` of :func:`drawn_pairs`.
    """
    pairs, draws = drawn_pairs(policy, prompts, cfg, seed)
    return swapped(pairs, draws < cfg.noise)


def drawn_pairs(policy: Policy, prompts: list[str], cfg: PreferenceConfig, seed: int) -> tuple[Pairs, torch.Tensor]:
    """The pairs of :func:`preference_pairs` before any swap, and one uniform draw in [0, 1) per pair.

    The pairs a noise swaps are those whose draw is below it, so pairs at
    several noises share one sampling (chapter 10's clean and noisy learners
    read the same answers). ``cfg.noise`` plays no part here.
    """
    gen = torch.Generator().manual_seed(seed)
    verifier = rw.get_verifier("exact")
    kept: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = []
    silent = 0
    for _ in range(cfg.rounds):
        batch = sample(policy, prompts, n=cfg.group_size, temperature=cfg.temperature, budget=cfg.budget, generator=gen)
        right = torch.from_numpy(rw.score(verifier, batch.prompts, batch.completions())[0] >= 1.0)
        for g in range(len(prompts)):
            rows = slice(g * cfg.group_size, (g + 1) * cfg.group_size)
            good, bad = matched(right[rows], gen)
            silent += len(good) == 0
            first = g * cfg.group_size
            kept.append((batch.prompt_ids[first + good], batch.tokens[first + good], batch.tokens[first + bad]))
    prompt_ids, chosen, rejected = (torch.cat(parts) for parts in zip(*kept))
    draws = torch.rand(len(chosen), generator=gen)
    groups = cfg.rounds * len(prompts)
    none = torch.zeros(len(chosen), dtype=torch.bool)
    return Pairs(prompt_ids, chosen, rejected, none, groups * cfg.group_size, groups, silent), draws


def swapped(pairs: Pairs, swap: torch.Tensor) -> Pairs:
    """``pairs`` with the chosen and rejected answers of the pairs ``swap`` marks (a bool per pair) turned round."""
    flip = swap[:, None]
    chosen = torch.where(flip, pairs.rejected, pairs.chosen)
    rejected = torch.where(flip, pairs.chosen, pairs.rejected)
    return Pairs(pairs.prompt_ids, chosen, rejected, swap, pairs.sampled, pairs.groups, pairs.silent)


def sequence_logprobs(policy: Policy, prompt_ids: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """log pi(answer | prompt) of each row: the sum of the log-probabilities of the tokens the answer wrote."""
    logits, _ = policy(torch.cat([prompt_ids, tokens], dim=1)[:, :-1])
    logp = torch.log_softmax(logits[:, prompt_ids.shape[1] - 1 :], dim=-1)
    per_token = logp.gather(-1, tokens[:, :, None]).squeeze(-1)
    return (per_token * answer_mask(tokens)).sum(dim=1)


def pair_logprobs(policy: Policy, pairs: Pairs) -> tuple[torch.Tensor, torch.Tensor]:
    """log pi of the chosen and of the rejected answer of every pair (:func:`sequence_logprobs`), without gradient."""
    with torch.no_grad():
        return (
            sequence_logprobs(policy, pairs.prompt_ids, pairs.chosen),
            sequence_logprobs(policy, pairs.prompt_ids, pairs.rejected),
        )


def dpo_loss(
    chosen: torch.Tensor, rejected: torch.Tensor, ref_chosen: torch.Tensor, ref_rejected: torch.Tensor, beta: float
) -> torch.Tensor:
    """DPO's loss (Rafailov et al. 2023, eq. 7), averaged over the pairs.

    ``-log sigmoid(beta * [(log pi(y_w) - log pi_ref(y_w)) - (log pi(y_l) - log pi_ref(y_l))])``
    from the sequence log-probabilities of the chosen (w) and rejected (l)
    answers under the policy and the frozen reference.
    """
    return -F.logsigmoid(beta * ((chosen - ref_chosen) - (rejected - ref_rejected))).mean()


def implicit_reward(logp: torch.Tensor, ref_logp: torch.Tensor, beta: float) -> torch.Tensor:
    """DPO's implicit reward of answers, ``beta * (log pi - log pi_ref)``: the reward its policy is optimal for."""
    return beta * (logp - ref_logp)


def bradley_terry_loss(chosen: torch.Tensor, rejected: torch.Tensor) -> torch.Tensor:
    """The Bradley–Terry negative log-likelihood of the preferences, ``-log sigmoid(r_w - r_l)``, averaged."""
    return -F.logsigmoid(chosen - rejected).mean()


def train_dpo(
    reference: Policy,
    pairs: Pairs,
    cfg: PreferenceConfig,
    seed: int,
    checkpoint: Callable[[int, Policy], None] | None = None,
    reference_logprobs: tuple[torch.Tensor, torch.Tensor] | None = None,
) -> Policy:
    """A copy of ``reference`` trained with :func:`dpo_loss` on random batches of ``pairs``.

    The reference's log-probabilities of the chosen and rejected answers are
    read once, before training (:func:`pair_logprobs`), or passed in as
    ``reference_logprobs`` by a caller that has them. ``checkpoint(step,
    policy)`` is called before the first step and every
    ``cfg.checkpoint_every`` steps. Deterministic for a seed and thread count.
    """
    ref_chosen, ref_rejected = reference_logprobs or pair_logprobs(reference, pairs)
    policy = copy.deepcopy(reference)
    opt = adamw(policy.parameters(), cfg.lr)
    gen = torch.Generator().manual_seed(seed)
    if checkpoint:
        checkpoint(0, policy)
    for step in range(1, cfg.steps + 1):
        rows = torch.randint(len(pairs), (cfg.batch,), generator=gen)
        prompts = pairs.prompt_ids[rows]
        loss = dpo_loss(
            sequence_logprobs(policy, prompts, pairs.chosen[rows]),
            sequence_logprobs(policy, prompts, pairs.rejected[rows]),
            ref_chosen[rows],
            ref_rejected[rows],
            cfg.beta,
        )
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if checkpoint and step % cfg.checkpoint_every == 0:
            checkpoint(step, policy)
    return policy


def reward_scores(model: RewardModel, prompt_ids: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """The reward model's score of each answer, read at the answer's last written token."""
    return model(torch.cat([prompt_ids, tokens], dim=1), prompt_ids.shape[1] + answer_mask(tokens).sum(dim=1))


def train_bradley_terry(policy: Policy, pairs: Pairs, cfg: PreferenceConfig, seed: int) -> RewardModel:
    """A reward model from ``policy``'s weights trained with :func:`bradley_terry_loss` on ``pairs``.

    The same steps, batch and learning rate as DPO's. Deterministic for a
    seed and thread count.
    """
    model = RewardModel(policy)
    opt = adamw(model.parameters(), cfg.lr)
    gen = torch.Generator().manual_seed(seed)
    for _ in range(cfg.steps):
        rows = torch.randint(len(pairs), (cfg.batch,), generator=gen)
        prompts = pairs.prompt_ids[rows]
        loss = bradley_terry_loss(
            reward_scores(model, prompts, pairs.chosen[rows]), reward_scores(model, prompts, pairs.rejected[rows])
        )
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return model.eval()
