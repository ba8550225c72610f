"""A learned process reward model (chapter 11): a scorer of each step of a worked answer, trained on the exact rule's
labels of the policy's own steps, in the spirit of Lightman et al. (2023).

A worked-world answer (:class:`rlbook.core.world.WorkedTask`) such as
``7+8=15,4+3+1=8;85#`` has three *steps*: the units column ``7+8=15``, the
tens column ``4+3+1=8`` and the final number ``85``. A direct answer ``85#``
has one, its number. :func:`answer_steps` cuts an answer into its steps and
:func:`step_labels` labels each with the exact rule: a column is right when it
is the column the sum's working writes at that place, the number when the
exact verifier accepts the answer. :func:`process_right` is the exact process
rule for a whole answer: every step right, and a worked answer writes both
columns.

The learned scorer (:class:`ProcessModel`) is the policy's network with a
scalar head read at every position; its logit at the character that ends a
step (``,``, ``;`` or the end mark) is its guess that the step is right, and
attention is causal, so it has read nothing after that step.
:func:`train_process_model` fits it with binary cross-entropy on the labelled
steps of a policy's samples; :func:`answer_score` turns its per-step
probabilities into one score per answer, the smallest or their product.
:class:`ProcessVerifier` and :class:`ExactProcessVerifier` make the two
process judges rewards for the RL loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import torch
import torch.nn.functional as F

from . import rewards as rw
from .policy import Policy
from .reward_model import RewardModel
from .sampling import sample
from .train import adamw
from .world import EOT, EOT_ID, PLAIN_PROMPT, SEPARATOR, WORKED_BUDGET, WorkedTask, encode

KINDS = ("units", "tens", "number")
"""The kinds of step a right worked answer writes, in order; a direct answer writes the last only."""
AGGREGATES = ("min", "product")
"""How a learned scorer's step probabilities become one score per answer (:func:`answer_score`)."""


@dataclass(frozen=True)
class Step:
    """One step of an answer: its text, the offset in the answer of the character that ends it, and its kind.

    ``kind`` is the step's place: ``units`` and ``tens`` for the first and
    second column, ``extra`` for any column after those, ``number`` for the
    final number.
    """

    text: str
    end: int
    kind: str


def answer_steps(completion: str) -> list[Step]:
    """The steps of a worked-world answer, in order: its columns (the text before the last ``;``, cut at each ``,``)
    then its number (the text after the last ``;``, up to the end mark).

    A step ends at the character after it (``,``, ``;`` or the end mark), or
    at the answer's last character when the budget cut it off there.
    """
    steps: list[Step] = []
    start = 0
    if SEPARATOR in completion:
        working = completion[: completion.rindex(SEPARATOR)]
        for i, text in enumerate(working.split(",")):
            steps.append(Step(text, start + len(text), KINDS[i] if i < 2 else "extra"))
            start += len(text) + 1
    tail = completion[start:]
    number = tail[: tail.index(EOT)] if EOT in tail else tail
    end = start + len(number) if EOT in tail else max(len(completion) - 1, 0)
    steps.append(Step(number, end, "number"))
    return steps


def _task(prompt: str) -> WorkedTask:
    match = PLAIN_PROMPT.fullmatch(prompt)
    if match is None:
        raise ValueError(f"{prompt!r} is not a prompt of the worked world")
    return WorkedTask((int(match[1]), int(match[2])))


def step_labels(prompt: str, completion: str) -> list[bool]:
    """The exact rule's verdict on each step of :func:`answer_steps`: a column is right when it is the sum's own
    column at that place (``4+3+1=8`` for the tens of 47+38), the number when the exact verifier accepts the answer.
    """
    columns = _task(prompt).working.split(",")
    right_number = rw.get_verifier("exact")(prompt, completion).reward >= 1.0
    labels = []
    for i, step in enumerate(answer_steps(completion)):
        if step.kind == "number":
            labels.append(right_number)
        else:
            labels.append(i < len(columns) and step.text == columns[i])
    return labels


def process_right(prompt: str, completion: str) -> bool:
    """The exact process rule: every step right and, for a worked answer, both columns written (none missing, none
    extra). A direct answer's only step is its number, so there the rule is the outcome verifier."""
    steps = answer_steps(completion)
    worked = len(steps) > 1
    return all(step_labels(prompt, completion)) and (not worked or len(steps) == len(KINDS))


@dataclass(frozen=True)
class ProcessConfig:
    """How the step scorer is trained: how many sampled answers are labelled, and the optimiser's schedule."""

    answers: int = 2000
    steps: int = 400
    batch: int = 64
    lr: float = 1e-3
    budget: int = WORKED_BUDGET
    temperature: float = 1.0


class ProcessModel(RewardModel):
    """Chapter 5's judge (:class:`rlbook.core.reward_model.RewardModel`: the policy's body and a scalar head), read
    at every position instead of at the last written one."""

    def step_logits(self, ids: torch.Tensor) -> torch.Tensor:
        """Logits of shape (rows, positions): at each position, read from that position and those before it."""
        hidden, _ = self.body(ids)
        return self.score(hidden).squeeze(-1)


@dataclass(frozen=True)
class Labelled:
    """Answers with their steps located and labelled: padded token ids (rows, width), and one entry per step:
    its row, its position in the row and its label (1.0 right)."""

    pairs: list[tuple[str, str]]
    ids: torch.Tensor
    rows: torch.Tensor
    positions: torch.Tensor
    labels: torch.Tensor
    kinds: list[str]


def locate(pairs: list[tuple[str, str]], label: bool = True) -> Labelled:
    """Token ids of each (prompt, completion), padded with the end mark, and where each step ends in them.

    With ``label=False`` the labels are left at zero (scoring needs only the
    places).
    """
    encoded = [encode(p + c) for p, c in pairs]
    ids = torch.full((len(pairs), max((len(e) for e in encoded), default=1)), EOT_ID, dtype=torch.long)
    rows, positions, labels, kinds = [], [], [], []
    for r, ((prompt, completion), e) in enumerate(zip(pairs, encoded)):
        ids[r, : len(e)] = torch.tensor(e)
        steps = answer_steps(completion)
        verdicts = step_labels(prompt, completion) if label else [False] * len(steps)
        for step, right in zip(steps, verdicts):
            rows.append(r)
            positions.append(len(prompt) + step.end)
            labels.append(float(right))
            kinds.append(step.kind)
    return Labelled(pairs, ids, torch.tensor(rows), torch.tensor(positions), torch.tensor(labels), kinds)


def sampled_answers(policy: Policy, prompts: list[str], n: int, cfg: ProcessConfig, seed: int) -> list[tuple[str, str]]:
    """``n`` answers of ``policy`` at ``cfg.temperature``, each on a prompt drawn uniformly from ``prompts``."""
    gen = torch.Generator().manual_seed(seed)
    chosen = [prompts[i] for i in torch.randint(len(prompts), (n,), generator=gen).tolist()]
    rollouts = sample(policy, chosen, n=1, temperature=cfg.temperature, budget=cfg.budget, generator=gen)
    return list(zip(chosen, rollouts.completions()))


def train_process_model(policy: Policy, data: Labelled, cfg: ProcessConfig, seed: int) -> ProcessModel:
    """A step scorer trained from ``policy``'s weights on the labelled steps of ``data``.

    Each update reads ``cfg.batch`` answers drawn at random and averages
    the loss over all their steps. Deterministic for a seed and thread count.
    """
    model = ProcessModel(policy)
    opt = adamw(model.parameters(), cfg.lr)
    gen = torch.Generator().manual_seed(seed)
    by_row = [torch.nonzero(data.rows == r).squeeze(1) for r in range(len(data.pairs))]
    for _ in range(cfg.steps):
        chosen = torch.randint(len(data.pairs), (cfg.batch,), generator=gen)
        steps = torch.cat([by_row[r] for r in chosen.tolist()])
        logits = model.step_logits(data.ids[chosen])
        local = torch.repeat_interleave(torch.arange(cfg.batch), torch.tensor([len(by_row[r]) for r in chosen]))
        loss = F.binary_cross_entropy_with_logits(logits[local, data.positions[steps]], data.labels[steps])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return model.eval()


def step_probabilities(model: ProcessModel, data: Labelled) -> np.ndarray:
    """The scorer's P(right) for every step of ``data``, in its order (one batch, no gradient)."""
    if not data.pairs:
        return np.zeros(0)
    with torch.no_grad():
        logits = model.step_logits(data.ids)
    return torch.sigmoid(logits[data.rows, data.positions]).double().numpy()


def answer_score(probabilities: np.ndarray, rows: torch.Tensor, answers: int, how: str = "min") -> np.ndarray:
    """One score per answer from its steps' probabilities: the smallest (``min``) or their ``product``."""
    if how not in AGGREGATES:
        raise ValueError(f"unknown aggregate {how!r}; choose one of {AGGREGATES}")
    scores = np.ones(answers) if how == "product" else np.full(answers, np.inf)
    for r, p in zip(rows.tolist(), probabilities.tolist()):
        scores[r] = scores[r] * p if how == "product" else min(scores[r], p)
    return scores


class ProcessVerifier:
    """The learned step scorer as the RL loop's reward: the answer's score (:func:`answer_score`) as the reward.

    The status is ``accepted`` at a score of 0.5 or more and ``incorrect``
    below: the scorer reads no format, so it never calls an answer malformed.
    """

    name: ClassVar[str] = "prm"
    VERSIONS: ClassVar[dict[str, str]] = {"1.0": "the smallest P(right) a learned step scorer gives the answer's steps"}

    def __init__(self, model: ProcessModel, how: str = "min", version: str = "1.0"):
        self.model, self.how, self.version = model, how, version

    @property
    def description(self) -> str:
        return self.VERSIONS[self.version]

    def verdicts(self, pairs: list[tuple[str, str]]) -> list[rw.Verdict]:
        """The scorer's verdict on each (prompt, completion) pair, read in one batch."""
        data = locate(pairs, label=False)
        scores = answer_score(step_probabilities(self.model, data), data.rows, len(pairs), self.how)
        return [
            rw.Verdict(
                float(s),
                "accepted" if s >= 0.5 else "incorrect",
                f"the step scorer gives {self.how} P(right) = {s:.3f}",
                self.name,
                self.version,
            )
            for s in scores
        ]

    def __call__(self, prompt: str, completion: str) -> rw.Verdict:
        return self.verdicts([(prompt, completion)])[0]


class ExactProcessVerifier:
    """The exact process rule (:func:`process_right`) as a reward: 1 when every step is right, 0 otherwise."""

    name: ClassVar[str] = "process-exact"
    VERSIONS: ClassVar[dict[str, str]] = {"1.0": "1 when every step of the answer is the sum's own, 0 otherwise"}

    def __init__(self, version: str = "1.0"):
        self.version = version

    @property
    def description(self) -> str:
        return self.VERSIONS[self.version]

    def __call__(self, prompt: str, completion: str) -> rw.Verdict:
        right = process_right(prompt, completion)
        why = "every step is right" if right else "a step is wrong or missing"
        return rw.Verdict(float(right), "accepted" if right else "incorrect", why, self.name, self.version)
