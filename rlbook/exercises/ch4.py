"""Checkers for chapter 4's exercises (choices in the update), each registered with its reference solution.

- :func:`check_ppo_clip_loss` (Exercise 4.1): PPO's clipped token loss, its value and its gradient.

Each check runs the reader's answer on fresh inputs, compares it with the
reference in ``rlbook`` and returns a :class:`~rlbook.exercises.CheckResult`
whose message says what differs. It never raises on a wrong answer.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from rlbook.core import losses

from . import CheckResult, call, close, named_by, never_raises, not_a_function, not_answered, verdict
from .registry import Exercise, Mistake, register


def _random_batch(gen: torch.Generator, rows: int = 6, cols: int = 5) -> tuple[torch.Tensor, ...]:
    """Random ``logp``, ``old_logp``, per-sequence ``adv`` and ``mask`` with ratios well past the clip region."""
    old = -torch.rand(rows, cols, generator=gen) * 3
    logp = old + torch.randn(rows, cols, generator=gen) * 0.5
    adv = torch.randn(rows, generator=gen)
    mask = torch.rand(rows, cols, generator=gen) < 0.75
    mask[:, 0] = True
    return logp, old, adv, mask


@never_raises
def check_ppo_clip_loss(fn: Callable | None) -> CheckResult:
    """Exercise 4.1: ``fn(logp, old_logp, adv, mask, eps)`` must equal :func:`rlbook.core.losses.ppo_clip_loss`'s loss and its gradient.

    ``adv`` has one value per sequence (shape ``(B,)``); the loss averages over
    the masked tokens of the whole batch (``token_mean``).
    """
    if fn is None:
        return not_answered("`my_ppo_clip_loss`")
    if not callable(fn):
        return not_a_function("my_ppo_clip_loss", fn)
    gen = torch.Generator().manual_seed(7)
    for trial in range(5):
        logp, old, adv, mask = _random_batch(gen)
        eps = 0.2 if trial % 2 == 0 else 0.1
        mine = logp.clone().requires_grad_(True)
        ref = logp.clone().requires_grad_(True)
        got, error = call(fn, mine, old.clone(), adv.clone(), mask.clone(), eps)
        if error:
            return verdict(False, error)
        if got is None:
            return not_answered("`my_ppo_clip_loss` (it returned None)")
        if not isinstance(got, torch.Tensor) or got.dim() != 0:
            return verdict(False, "return one number, a 0-dimensional tensor (the loss to minimise)")
        want, _ = losses.ppo_clip_loss(ref, old, adv, mask, eps_low=eps, eps_high=eps)
        if not close(got.detach(), want.detach()):
            return verdict(False, _diagnose_ppo(float(got.detach()), logp, old, adv, mask, eps, float(want.detach())))
        if not got.requires_grad:
            return verdict(False, "the loss has no gradient: keep logp in the computation (no .detach(), no .item())")
        got.backward()
        want.backward()
        if mine.grad is None or not close(mine.grad, ref.grad):
            return verdict(
                False,
                "the value is right but the gradient is not: "
                + _diagnose_ppo_gradient(mine.grad, logp, old, adv, mask, eps),
            )
    return verdict(True, "matches rlbook.core.losses.ppo_clip_loss, value and gradient, on 5 random batches")


PPO_SLIPS = (
    "the sign: the loss is minus the objective",
    "you used the clipped term alone; take the minimum of the clipped and unclipped terms",
    "you used max instead of min",
    "you averaged over every position; average over the masked (generated) tokens only",
    "no clipping at all: that is the plain importance-weighted loss",
    (
        "you took the minimum of the ratios and then multiplied by the advantage: for a negative advantage that "
        "picks the wrong term. Take the minimum of the products, min(ratio * A, clip(ratio) * A)"
    ),
    (
        "you averaged each sequence first, then the sequences (a per-sequence mean): the book's loss averages over "
        "every masked token of the batch at once"
    ),
    "you summed over the tokens: divide by the number of masked tokens, mask.sum()",
    "you divided by every position, mask.numel(): divide by the masked tokens only, mask.sum()",
)
"""What Exercise 4.1's check says of each wrong loss value :func:`_ppo_slips` computes, in its order."""


def _ppo_slips(logp, old, adv, mask, eps: float) -> list[torch.Tensor]:
    """The loss each slip of :data:`PPO_SLIPS` computes, in its order, from the arguments of Exercise 4.1's loss."""
    ratio = torch.exp(logp - old)
    a = adv[:, None]
    m = mask.float()
    unclipped = ratio * a
    clipped = ratio.clamp(1 - eps, 1 + eps) * a
    objective = torch.minimum(unclipped, clipped)
    return [
        (objective * m).sum() / m.sum(),
        -((clipped * m).sum() / m.sum()),
        -((torch.maximum(unclipped, clipped) * m).sum() / m.sum()),
        -objective.mean(),
        -((unclipped * m).sum() / m.sum()),
        -((torch.minimum(ratio, ratio.clamp(1 - eps, 1 + eps)) * a * m).sum() / m.sum()),
        -(((objective * m).sum(dim=1) / m.sum(dim=1)).mean()),
        -(objective * m).sum(),
        -(objective * m).sum() / m.numel(),
    ]


def _diagnose_ppo(got: float, logp, old, adv, mask, eps: float, want: float) -> str:
    """The likeliest mistake behind a wrong PPO loss value (:data:`PPO_SLIPS`)."""
    for hint, value in zip(PPO_SLIPS, _ppo_slips(logp, old, adv, mask, eps), strict=True):
        if math.isclose(got, float(value), rel_tol=1e-4, abs_tol=1e-5):
            return hint
    return f"expected {want:.5f}, got {got:.5f}"


def _gradient_of(loss_fn: Callable, logp: torch.Tensor) -> torch.Tensor:
    """The gradient of ``loss_fn(logp)`` with respect to ``logp``."""
    leaf = logp.clone().requires_grad_(True)
    loss_fn(leaf).backward()
    assert leaf.grad is not None  # every loss here is computed from leaf
    return leaf.grad


def _diagnose_ppo_gradient(grad: torch.Tensor | None, logp, old, adv, mask, eps: float) -> str:
    """The likeliest reason a PPO loss with the right value has the wrong gradient."""
    if grad is None or not torch.any(grad != 0):
        return (
            "no gradient reaches logp: a .detach(), .item() or torch.tensor(...) cuts it off. Compute the ratio "
            "from logp itself"
        )
    a, m = adv[:, None], mask.float()

    def unclipped(lp):
        return -((torch.exp(lp - old) * a) * m).sum() / m.sum()

    def clipped_value_as_constant(lp):
        ratio = torch.exp(lp - old)
        low = torch.minimum(ratio * a, ratio.clamp(1 - eps, 1 + eps) * a)
        return -((ratio * a + (low - ratio * a).detach()) * m).sum() / m.sum()

    def detached_clip(lp):
        ratio = torch.exp(lp - old)
        return -((torch.minimum(ratio * a, ratio.detach().clamp(1 - eps, 1 + eps) * a)) * m).sum() / m.sum()

    if close(grad, _gradient_of(unclipped, logp)) or close(grad, _gradient_of(clipped_value_as_constant, logp)):
        return (
            "it is the unclipped gradient on every token. Where the clipped term is the minimum, its gradient "
            "must be zero: clip the ratio itself with torch.clamp, so the clip cuts the gradient there"
        )
    if close(grad, _gradient_of(detached_clip, logp)):
        return (
            "inside the clip range the clipped term must carry the gradient too: clamp the ratio, do not detach "
            "it before clamping"
        )
    if torch.any(grad[~mask] != 0):
        return "tokens outside the mask get a gradient: multiply by the mask before summing"
    return "compute every term from logp itself (no .detach() inside the objective), and let the min pick the term"


def my_ppo_clip_loss(logp, old_logp, adv, mask, eps):
    """Exercise 4.1's reference: PPO's clipped loss, averaged over tokens."""
    ratio = torch.exp(logp - old_logp)
    a = adv[:, None]
    clipped = ratio.clamp(1 - eps, 1 + eps)
    objective = torch.minimum(ratio * a, clipped * a)
    return -(objective * mask).sum() / mask.sum()


def _ppo_slip(index: int) -> Mistake:
    """Exercise 4.1's slip number ``index`` of :data:`PPO_SLIPS`, as a loss function."""
    return Mistake(lambda *args: _ppo_slips(*args)[index], named_by(PPO_SLIPS[index]))


MISTAKES = tuple(_ppo_slip(i) for i in (0, 5, 6, 7))
"""Exercise 4.1's named mistakes: the sign, the minimum of the ratios times the advantage, a per-sequence mean and
a sum over the tokens."""

register(Exercise("ppo-clip-loss", "update", check_ppo_clip_loss, my_ppo_clip_loss, mistakes=MISTAKES))

__all__ = ["MISTAKES", "check_ppo_clip_loss", "my_ppo_clip_loss"]
