"""A learned judge (reward model): the policy's own network with a scalar head, trained on a verifier's labels.

Chapter 4 builds it to show what optimisation does to a learned reward
(Gao et al. 2023). The judge reads a prompt and a completion and returns the
probability that the completion is right. It starts from a policy's weights
(the book's ``base``), reads the hidden state at the last written character
through one linear head, and is trained with binary cross-entropy on the exact
verifier's verdicts of the policy's own samples at T = 1: a realistic,
limited set of labels, as a preference or correctness dataset would be.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from . import rewards as rw
from .policy import Policy
from .sampling import sample
from .train import adamw
from .world import EOT_ID, encode, split


@dataclass(frozen=True)
class JudgeConfig:
    """How the judge is trained: how many labelled samples, and the optimiser's schedule."""

    labels: int = 1000
    steps: int = 400
    batch: int = 64
    lr: float = 1e-3
    budget: int = 4
    temperature: float = 1.0


class RewardModel(nn.Module):
    """A policy's transformer body with a linear head on the last written position: logit of P(right)."""

    def __init__(self, policy: Policy):
        super().__init__()
        self.body = copy.deepcopy(policy)
        self.body.head = nn.Identity()
        self.score = nn.Linear(policy.cfg.d_model, 1)
        nn.init.zeros_(self.score.weight)
        nn.init.zeros_(self.score.bias)

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """Logits of shape (batch,) for rows of ``ids`` whose first ``lengths`` tokens are written.

        Padding after a row's end cannot change it: attention is causal.
        """
        hidden, _ = self.body(ids)
        last = hidden[torch.arange(len(ids)), lengths - 1]
        return self.score(last).squeeze(-1)


def encode_pairs(pairs: list[tuple[str, str]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Token ids of prompt + completion for each pair, padded with the end mark, and their lengths."""
    rows = [encode(p + c) for p, c in pairs]
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), EOT_ID, dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = torch.tensor(r)
    return ids, torch.tensor([len(r) for r in rows])


def judge_probabilities(model: RewardModel, pairs: list[tuple[str, str]]) -> np.ndarray:
    """The judge's P(right) for each (prompt, completion) pair, read in one batch."""
    if not pairs:
        return np.zeros(0)
    ids, lengths = encode_pairs(pairs)
    with torch.no_grad():
        return torch.sigmoid(model(ids, lengths)).double().numpy()


def labelled_samples(policy: Policy, prompts: list[str], n: int, seed: int, cfg: JudgeConfig):
    """``n`` samples of ``policy``, each on a prompt drawn uniformly from ``prompts``, with the exact verifier's labels.

    Returns the (prompt, completion) pairs and a float array of 1.0 (right) and 0.0.
    """
    gen = torch.Generator().manual_seed(seed)
    chosen = [prompts[i] for i in torch.randint(len(prompts), (n,), generator=gen).tolist()]
    rollouts = sample(policy, chosen, n=1, temperature=cfg.temperature, budget=cfg.budget, generator=gen)
    texts = rollouts.completions()
    rewards, _ = rw.score(rw.get_verifier("exact"), chosen, texts)
    return list(zip(chosen, texts)), (rewards >= 1.0).astype(float)


def train_judge(policy: Policy, cfg: JudgeConfig, seed: int) -> RewardModel:
    """A judge trained from ``policy``'s weights on ``cfg.labels`` labelled samples of it on the training prompts.

    Deterministic for a seed and thread count.
    """
    prompts = [t.prompt for t in split("train")]
    pairs, labels = labelled_samples(policy, prompts, cfg.labels, 1_000 + seed, cfg)
    ids, lengths = encode_pairs(pairs)
    target = torch.tensor(labels, dtype=torch.float32)
    model = RewardModel(policy)
    opt = adamw(model.parameters(), cfg.lr)
    gen = torch.Generator().manual_seed(2_000 + seed)
    for _ in range(cfg.steps):
        rows = torch.randint(len(pairs), (cfg.batch,), generator=gen)
        loss = F.binary_cross_entropy_with_logits(model(ids[rows], lengths[rows]), target[rows])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return model.eval()


def auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """Area under the ROC curve: P(a right sample scores above a wrong one), ties counting one half."""
    right, wrong = scores[labels >= 1], scores[labels < 1]
    if len(right) == 0 or len(wrong) == 0:
        return float("nan")
    above = (right[:, None] > wrong[None, :]).mean()
    ties = (right[:, None] == wrong[None, :]).mean()
    return float(above + 0.5 * ties)


def calibration_error(scores: np.ndarray, labels: np.ndarray, bins: int = 10) -> float:
    """Expected calibration error: the mean |share right - mean score| over equal-width score bins, by weight."""
    which = np.minimum((scores * bins).astype(int), bins - 1)
    error = 0.0
    for b in range(bins):
        inside = which == b
        if inside.any():
            error += inside.mean() * abs(labels[inside].mean() - scores[inside].mean())
    return float(error)


def judge_report(model: RewardModel, policy: Policy, seed: int, cfg: JudgeConfig, n: int = 1000) -> dict:
    """Accuracy (at 0.5), AUC, calibration error and share right of fresh samples of ``policy``.

    On two sets: ``train_prompts`` (new samples on the prompts the judge's
    labels came from) and ``heldout_prompts`` (prompts it never saw).
    """
    report = {}
    for name, tasks, offset in (("train_prompts", split("train"), 3_000), ("heldout_prompts", split("heldout"), 4_000)):
        pairs, labels = labelled_samples(policy, [t.prompt for t in tasks], n, offset + seed, cfg)
        scores = judge_probabilities(model, pairs)
        report[name] = {
            "accuracy": float(((scores >= 0.5) == (labels >= 1)).mean()),
            "auc": auc(scores, labels),
            "calibration_error": calibration_error(scores, labels),
            "share_right": float(labels.mean()),
            "mean_score": float(scores.mean()),
            "n": n,
        }
    return report


class JudgeVerifier:
    """The judge as the RL loop's reward: P(right) as the reward, and a verdict that says it is the judge's.

    The status is ``accepted`` when the judge's probability is at least 0.5
    and ``incorrect`` otherwise: the judge reads no format, so it never calls
    an answer malformed. :meth:`verdicts` judges many pairs in one batch
    (:func:`rlbook.core.rewards.score` uses it).
    """

    name: ClassVar[str] = "judge"
    VERSIONS: ClassVar[dict[str, str]] = {
        "1.0": "P(right) from a reward model trained on the exact verifier's labels of base samples"
    }

    def __init__(self, model: RewardModel, version: str = "1.0"):
        self.model = model
        self.version = version

    @property
    def description(self) -> str:
        return self.VERSIONS[self.version]

    def verdicts(self, pairs: list[tuple[str, str]]) -> list[rw.Verdict]:
        """The judge's verdict on each (prompt, completion) pair."""
        return [
            rw.Verdict(
                float(p),
                "accepted" if p >= 0.5 else "incorrect",
                f"the judge gives P(right) = {p:.3f}",
                self.name,
                self.version,
            )
            for p in judge_probabilities(self.model, pairs)
        ]

    def __call__(self, prompt: str, completion: str) -> rw.Verdict:
        return self.verdicts([(prompt, completion)])[0]
