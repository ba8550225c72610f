"""The worked world's answer styles measured on a policy (chapter 7): which style it writes, how long, how right,
and how sure it is of its choice.

An answer is *worked* when it writes a column (any ``+``) and *direct*
otherwise (:func:`rlbook.core.world.answer_style`). Both styles begin with
a digit: a worked answer with the units digit of the first number, a direct
one with the first digit of the sum. So the choice between them is made by
the first two characters, a digit then ``+`` or not, and :func:`choice_entropy`
measures it exactly from the policy's probabilities, with no sampling.
The RL loop records both measurements at every checkpoint of a worked-world
run (:func:`rlbook.core.loop.checkpoint_eval`).
"""

from __future__ import annotations

import torch

from .evaluate import EvalResult
from .policy import Policy
from .world import STOI, Task, answer_style, encode

PLUS_ID = STOI["+"]
DIGIT_IDS = torch.tensor([STOI[d] for d in "0123456789"])


def worked_rows(tokens: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Which rows of generated ``tokens`` (rows, budget) are worked answers: a ``+`` among their first ``lengths``.

    Reads stored rollouts (the run log keeps each step's tokens and lengths)
    as :func:`rlbook.core.world.answer_style` reads text.
    """
    written = torch.arange(tokens.shape[1])[None, :] < lengths[:, None]
    return ((tokens.long() == PLUS_ID) & written).any(dim=1)


def style_summary(result: EvalResult) -> dict:
    """Counts of an evaluation's answers by style, how many of each the verifier accepted, and their mean length.

    The length is the number of characters generated, the end-of-turn mark
    included (a budget-stopped answer counts its whole budget).
    """
    summary: dict[str, float] = {"worked": 0, "worked_accepted": 0, "direct": 0, "direct_accepted": 0}
    for texts, statuses in zip(result.completions, result.statuses):
        for text, status in zip(texts, statuses):
            style = answer_style(text)
            summary[style] += 1
            summary[f"{style}_accepted"] += status == "accepted"
    lengths = (
        result.rollouts.lengths
        if result.rollouts is not None
        else torch.tensor([len(t) for row in result.completions for t in row])
    )
    summary["mean_length"] = float(lengths.float().mean())
    return summary


def _entropy(p: torch.Tensor) -> torch.Tensor:
    """Entropy in nats of each row of probabilities (0 log 0 counts as 0)."""
    return -(p * torch.log(p.clamp_min(1e-30))).sum(dim=-1)


@torch.inference_mode()
def choice_entropy(policy: Policy, tasks: list[Task]) -> dict:
    """The policy's first-character entropy and its style choice's entropy on ``tasks``, each averaged over them (nats).

    ``first_char``: the entropy of the first answer character at T = 1, what
    a sampler draws first; it mixes the style choice with doubt about a
    digit. ``style``: the binary entropy of the probability of starting a
    worked answer, P(worked) = sum over digits d of P(d) P(+ | d), exact.
    ``p_worked`` is that probability, averaged too.
    """
    was_training = policy.training
    policy.eval()
    try:
        prompts = torch.tensor([encode(t.prompt) for t in tasks])
        first = torch.softmax(policy(prompts)[0][:, -1], dim=-1)
        then = torch.cat(
            [prompts.repeat_interleave(len(DIGIT_IDS), dim=0), DIGIT_IDS.repeat(len(tasks))[:, None]], dim=1
        )
        plus = torch.softmax(policy(then)[0][:, -1], dim=-1)[:, PLUS_ID].view(len(tasks), len(DIGIT_IDS))
    finally:
        policy.train(was_training)
    p_worked = (first[:, DIGIT_IDS] * plus).sum(dim=1).clamp(0.0, 1.0)
    style = _entropy(torch.stack([p_worked, 1 - p_worked], dim=1))
    return {
        "first_char": float(_entropy(first).mean()),
        "style": float(style.mean()),
        "p_worked": float(p_worked.mean()),
    }
