"""Both verdicts of one rollout: the outcome verifier's and the process scorer's, and the cell they put it in (ch2).

The outcome verifier (:class:`rlbook.core.rewards.ExactVerifier`) reads only
the final answer; the process scorer (:func:`rlbook.core.rewards.process_score`)
judges each partial sum. A :class:`Judged` rollout carries both, and its
:attr:`~Judged.kind` names the cell of chapter 2's disagreement matrix.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from rlbook.core import rewards as rw
from rlbook.core.policy import Policy
from rlbook.core.sampling import Rollouts, sample
from rlbook.core.world import Task, decode

OUTCOME_ROWS = ("accepted", "incorrect", "malformed", "incomplete")
"""The outcome statuses a rollout of a well-formed prompt can get (``unverifiable`` needs a bad prompt)."""

AGREE = "agree"
RIGHT_INVALID = "right answer through an invalid step"
VALID_MALFORMED = "valid steps, malformed end"
VALID_INCOMPLETE = "valid steps, stopped by the budget"
DISAGREEMENTS = (RIGHT_INVALID, VALID_MALFORMED, VALID_INCOMPLETE)
"""The cells where the outcome verdict (accepted or not) and the process verdict (every step valid or not) differ."""
PARTIAL_CREDIT = "wrong answer with partial step credit"
"""Not a disagreement of pass and fail, but the process score pays for a rollout the outcome rejects."""


@dataclass(frozen=True)
class Judged:
    """One rollout with both verdicts (chapter 2's disagreement analysis).

    ``status``/``reward``/``reason`` come from the outcome verifier;
    ``steps``/``process``/``process_reason`` from :func:`rewards.process_score`.
    """

    prompt: str
    completion: str
    status: str
    reward: float
    reason: str
    steps: tuple[bool, ...]
    process: float
    process_reason: str

    @property
    def outcome_pass(self) -> bool:
        """The outcome verifier accepts the final answer."""
        return self.status == "accepted"

    @property
    def process_pass(self) -> bool:
        """Every step the task expects is valid."""
        return bool(self.steps) and all(self.steps)

    @property
    def disagrees(self) -> bool:
        """The two verdicts differ: one passes the rollout and the other does not."""
        return self.outcome_pass != self.process_pass

    @property
    def kind(self) -> str:
        """The name of this rollout's cell: one of :data:`DISAGREEMENTS`, :data:`PARTIAL_CREDIT` or ``agree``."""
        if self.outcome_pass and not self.process_pass:
            return RIGHT_INVALID
        if self.process_pass and not self.outcome_pass:
            return VALID_INCOMPLETE if self.status == "incomplete" else VALID_MALFORMED
        if not self.outcome_pass and self.process > 0:
            return PARTIAL_CREDIT
        return AGREE


def judge(prompts: list[str], completions: list[str], verifier: rw.Verifier | None = None) -> list[Judged]:
    """Both verdicts for each (prompt, completion) pair; the outcome verifier defaults to exact 1.0 (ch2)."""
    if len(prompts) != len(completions):
        raise ValueError(f"{len(prompts)} prompts but {len(completions)} completions")
    verifier = verifier or rw.ExactVerifier()
    judged = []
    for prompt, completion in zip(prompts, completions):
        outcome = verifier(prompt, completion)
        process = rw.process_score(prompt, completion)
        judged.append(
            Judged(
                prompt,
                completion,
                outcome.status,
                outcome.reward,
                outcome.reason,
                process.steps,
                process.score,
                process.reason,
            )
        )
    return judged


def sample_rollouts(policy: Policy, tasks: list[Task], n: int, seed: int, budget: int = 8) -> Rollouts:
    """``n`` fresh rollouts per task at temperature 1, reproducible from ``seed`` (ch2's multi-step sample)."""
    return sample(policy, [t.prompt for t in tasks], n=n, budget=budget, generator=torch.Generator().manual_seed(seed))


def judge_rollouts(rollouts: Rollouts) -> list[Judged]:
    """Both verdicts for every rollout of a sampled batch (ch2)."""
    return judge(rollouts.prompts, rollouts.completions())


def logged_rollouts(step_log: dict) -> tuple[list[str], list[str]]:
    """Prompts and completions of one step of a run's rollout log (``run.rollouts[i]``), one per rollout.

    The log keeps one prompt per group and the generated token ids; rows of a
    group are contiguous, so each prompt is repeated for its group (ch2).
    """
    lengths = step_log["lengths"].tolist()
    completions = [decode(row[:n]) for row, n in zip(step_log["tokens"].tolist(), lengths)]
    group = len(completions) // len(step_log["prompts"])
    prompts = [p for p in step_log["prompts"] for _ in range(group)]
    return prompts, completions
