"""The k1, k2 and k3 estimates of a KL divergence, worked out exactly on a toy distribution (chapter 4).

A KL penalty cannot sum over every answer a policy could write; it
estimates ``KL(pi || pi_ref)`` from sampled answers, with ``r = pi_ref / pi``
at the sampled answer (Schulman 2020, "Approximating KL divergence"):

- ``k1 = -log r``, the log-ratio itself;
- ``k2 = (log r)**2 / 2``;
- ``k3 = r - 1 - log r``, never negative, the book's KL penalty.

On a categorical distribution of a few outcomes every expectation is a
finite sum, so this module computes each estimator's mean and the mean of
its gradient with respect to ``pi``'s logits exactly: sums over the
outcomes, weighted by the sampling distribution, with the gradients from
autograd. The samples are *fresh* (drawn from ``pi`` itself), *reused*
(drawn from an older policy ``pi_old``), or reused and weighted by the
importance ratio ``pi / pi_old``, the ratio carrying a gradient. The
sampling weights never carry one: a sample, once drawn, is data.

:func:`table` gives chapter 4's table of the three, and
:func:`reward_gradient` the gradient of k1 subtracted from the reward, as
InstructGPT's PPO uses it, against which the chapter sets k3 added to the loss
as GRPO uses it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

ESTIMATORS: dict[str, Callable[[Tensor], Tensor]] = {
    "k1": lambda log_r: -log_r,
    "k2": lambda log_r: log_r**2 / 2,
    "k3": lambda log_r: log_r.exp() - 1 - log_r,
}
"""Each estimator as a function of ``log r = log pi_ref - log pi`` at a sampled outcome."""
SAMPLES = ("fresh", "reused", "reused, ratio")
"""Where the samples come from: ``pi`` itself, ``pi_old``, or ``pi_old`` with each term times ``pi / pi_old``."""
TARGETS = ("KL(π‖π_ref)", "KL(π_ref‖π)", "zero")
"""The gradients an estimator's mean gradient is held against, in :func:`gradient_of`'s words for the table."""
NEITHER = "neither"
"""What :func:`gradient_of` says of a mean gradient that is none of :data:`TARGETS`."""
OUTCOMES = 5
"""The toy distribution's number of outcomes."""
TOY_SEED = 0
"""The seed that draws the toy's three distributions."""
TOLERANCE = 1e-9
"""Two gradients are the same when they differ by at most this much, relative to the true gradient's length."""


@dataclass(frozen=True)
class Toy:
    """A trained policy's logits over a few outcomes, a reference distribution and an older policy's.

    ``logits`` are the trained policy's (``pi = softmax(logits)``), the
    variables every gradient is taken with respect to; ``ref`` and ``old``
    are probabilities, fixed.
    """

    logits: Tensor
    ref: Tensor
    old: Tensor

    @property
    def pi(self) -> Tensor:
        """The trained policy's probabilities."""
        return self.logits.softmax(-1)


def toy(outcomes: int = OUTCOMES, seed: int = TOY_SEED) -> Toy:
    """Chapter 4's toy: ``pi_ref`` drawn at random, ``pi`` a draw away from it and ``pi_old`` a smaller draw from ``pi``.

    In double precision, so that an identity holds to far below
    :data:`TOLERANCE`.
    """
    gen = torch.Generator().manual_seed(seed)
    ref_logits = torch.randn(outcomes, generator=gen, dtype=torch.float64)
    logits = ref_logits + torch.randn(outcomes, generator=gen, dtype=torch.float64)
    old_logits = logits + 0.5 * torch.randn(outcomes, generator=gen, dtype=torch.float64)
    return Toy(logits, ref_logits.softmax(-1), old_logits.softmax(-1))


def kl(p: Tensor, q: Tensor) -> Tensor:
    """The exact ``KL(p || q)`` of two categorical distributions, ``sum p log(p / q)``."""
    return (p * (p.log() - q.log())).sum()


def _terms(t: Toy, name: str, samples: str, logits: Tensor) -> tuple[Tensor, Tensor]:
    """The sampling weights (no gradient) and each outcome's term of estimator ``name``, a function of ``logits``."""
    logp = logits.log_softmax(-1)
    term = ESTIMATORS[name](t.ref.log() - logp)
    if samples == "fresh":
        return logp.exp().detach(), term
    if samples == "reused":
        return t.old, term
    if samples == "reused, ratio":
        return t.old, (logp - t.old.log()).exp() * term
    raise ValueError(f"unknown samples {samples!r}; choose one of {SAMPLES}")


def mean(t: Toy, name: str, samples: str) -> float:
    """The expected value of estimator ``name`` on ``samples``, summed exactly over the outcomes."""
    weights, term = _terms(t, name, samples, t.logits)
    return float((weights * term).sum())


def _gradient(loss: Callable[[Tensor], Tensor], logits: Tensor) -> Tensor:
    """The gradient of ``loss(logits)`` with respect to ``logits``, by autograd."""
    x = logits.detach().clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(loss(x), x)
    return grad


def mean_gradient(t: Toy, name: str, samples: str) -> Tensor:
    """The expected gradient of estimator ``name`` used as a loss on ``samples``, with respect to ``pi``'s logits.

    Each outcome's gradient weighted by how often it is sampled, the weights
    held fixed: what a loss that adds the estimate of each sampled outcome
    follows on average.
    """

    def loss(x: Tensor) -> Tensor:
        weights, term = _terms(t, name, samples, x)
        return (weights * term).sum()

    return _gradient(loss, t.logits)


def reward_gradient(t: Toy, samples: str) -> Tensor:
    """The expected gradient of k1 subtracted from the reward (InstructGPT's PPO), with respect to ``pi``'s logits.

    In the reward, k1 gets no gradient of its own: it joins the reward and
    reaches the weights through the policy gradient, ``E[k1 * grad log pi]``
    (the penalty's part, before its sign and ``beta``). On reused samples
    PPO's surrogate weights that term by the importance ratio; without it,
    by nothing.
    """

    def loss(x: Tensor) -> Tensor:
        logp = x.log_softmax(-1)
        k1 = ESTIMATORS["k1"](t.ref.log() - logp).detach()
        if samples == "fresh":
            return (logp.exp().detach() * k1 * logp).sum()
        if samples == "reused":
            return (t.old * k1 * logp).sum()
        if samples == "reused, ratio":
            return (t.old * k1 * (logp - t.old.log()).exp()).sum()
        raise ValueError(f"unknown samples {samples!r}; choose one of {SAMPLES}")

    return _gradient(loss, t.logits)


def true_gradients(t: Toy) -> dict[str, Tensor]:
    """The gradients of :data:`TARGETS` with respect to ``pi``'s logits: of each KL, by autograd, and zero."""
    return {
        TARGETS[0]: _gradient(lambda x: kl(x.softmax(-1), t.ref), t.logits),
        TARGETS[1]: _gradient(lambda x: kl(t.ref, x.softmax(-1)), t.logits),
        TARGETS[2]: torch.zeros_like(t.logits),
    }


def gradient_of(grad: Tensor, truths: dict[str, Tensor]) -> str:
    """Which of :data:`TARGETS` the mean gradient ``grad`` is, to :data:`TOLERANCE`; :data:`NEITHER` if none."""
    scale = float(truths[TARGETS[0]].norm())
    for name, truth in truths.items():
        if float((grad - truth).norm()) <= TOLERANCE * scale:
            return name
    return NEITHER


def gradient_error(grad: Tensor, truths: dict[str, Tensor]) -> float:
    """How far ``grad`` lies from the gradient of ``KL(pi || pi_ref)``, relative to that gradient's length."""
    truth = truths[TARGETS[0]]
    return float((grad - truth).norm() / truth.norm())


def table(t: Toy) -> list[dict]:
    """Chapter 4's table: for each estimator and each kind of samples, its mean, its bias and its mean gradient.

    The bias is the mean less the true ``KL(pi || pi_ref)``; the gradient's
    error is its distance from the gradient of that KL, relative to that
    gradient's length; "gradient of" names the target it equals.
    """
    truth = float(kl(t.pi, t.ref))
    truths = true_gradients(t)
    rows = []
    for name in ESTIMATORS:
        for samples in SAMPLES:
            value, grad = mean(t, name, samples), mean_gradient(t, name, samples)
            rows.append(
                {
                    "estimator": name,
                    "samples": samples,
                    "mean": value,
                    "bias": value - truth,
                    "gradient error": gradient_error(grad, truths),
                    "gradient of": gradient_of(grad, truths),
                }
            )
    return rows
