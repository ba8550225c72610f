"""Token-level policy losses: how advantages become a gradient (chapter 3).

Every tensor here has shape ``(B, T)``, one row per sampled sequence:

- ``logp``: log-probability of each sampled token under the policy being
  trained (it carries the gradient);
- ``old_logp``: the log-probability recorded when the token was sampled;
- ``adv``: per-token advantages ``(B, T)``, or one per sequence ``(B,)``;
- ``mask``: 1 (or True) on generated tokens that are trained on, 0 on prompt,
  padding and after-the-end positions.

Each loss is a number to *minimise*: the negative of an objective to maximise.
Losses that limit the update return ``(loss, stats)``, with ``stats`` a dict of
floats for the run's log. Nothing else in ``rlbook`` is imported.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

AGGREGATIONS = ("token_mean", "seq_mean", "constant")
"""The ways of turning per-token losses into one number; see :func:`aggregate`."""


def aggregate(per_token: Tensor, mask: Tensor, how: str = "token_mean", max_tokens: int | None = None) -> Tensor:
    """One number from per-token values, counting only positions where ``mask`` is set (chapter 3).

    - ``"token_mean"``: sum over every generated token of the batch divided by
      their number, so every token weighs the same (the token-level loss of
      DAPO, Yu et al. 2025; TRL's ``loss_type="dapo"`` and ``"bnpo"``, which
      differ in counting the tokens of one device's batch or of the whole
      accumulated batch: the same for one batch on one device).
    - ``"seq_mean"``: mean over sequences of each sequence's token mean, so a
      short answer's tokens weigh more (the original GRPO, Shao et al. 2024;
      TRL's ``loss_type="grpo"``).
    - ``"constant"``: sum divided by the constant ``B * max_tokens``
      (``max_tokens`` defaults to ``T``), so no answer's length rescales its
      tokens (Dr. GRPO, Liu et al. 2025; TRL's ``loss_type="dr_grpo"``, with
      ``max_tokens`` = ``max_completion_length``).
    """
    m = mask.bool()
    total = torch.where(m, per_token, torch.zeros_like(per_token))
    if how == "token_mean":
        return total.sum() / m.sum().clamp(min=1)
    if how == "seq_mean":
        return (total.sum(dim=-1) / m.sum(dim=-1).clamp(min=1)).mean()
    if how == "constant":
        return total.sum() / (m.shape[0] * (max_tokens or m.shape[-1]))
    raise ValueError(f"unknown aggregation {how!r}; choose one of {AGGREGATIONS}")


def _per_token(adv: Tensor, logp: Tensor) -> Tensor:
    """``adv`` broadcastable against ``logp``: a ``(B,)`` tensor becomes ``(B, 1)``."""
    return adv.unsqueeze(-1) if adv.dim() == logp.dim() - 1 else adv


def importance_ratio(logp: Tensor, old_logp: Tensor) -> Tensor:
    """``pi(token) / pi_old(token) = exp(logp - old_logp)``, token by token (chapter 3).

    1 where the trained policy agrees with the policy that sampled the token,
    2 where it now gives the token twice the probability.
    """
    return torch.exp(logp - old_logp)


def policy_gradient_loss(
    logp: Tensor, adv: Tensor, mask: Tensor, how: str = "token_mean", max_tokens: int | None = None
) -> Tensor:
    """REINFORCE with a baseline: ``loss = -aggregate(A * logp)`` (chapter 3).

    Its gradient is ``-A * grad log pi(token)``: raise the probability of tokens
    with positive advantage, lower it for negative ones (Williams 1992; Sutton
    and Barto 2018, ch. 13). It is exact only on-policy, for tokens sampled by
    the policy being trained.
    """
    return -aggregate(_per_token(adv, logp) * logp, mask, how, max_tokens)


def _ratio_stats(ratio: Tensor, mask: Tensor, low: Tensor, high: Tensor) -> dict[str, float]:
    """Fractions of masked tokens clipped low, high or either, and the masked mean ratio."""
    m = mask.bool()
    n = m.sum().clamp(min=1)
    clipped = {"clip_fraction": low | high, "clip_low_fraction": low, "clip_high_fraction": high}
    stats = {name: ((where & m).sum() / n).item() for name, where in clipped.items()}
    stats["ratio_mean"] = (torch.where(m, ratio.detach(), torch.zeros_like(ratio)).sum() / n).item()
    return stats


def pg_loss(
    logp: Tensor, old_logp: Tensor, adv: Tensor, mask: Tensor, how: str = "token_mean", max_tokens: int | None = None
) -> tuple[Tensor, dict[str, float]]:
    """:func:`policy_gradient_loss` with the ``(loss, stats)`` interface of the clipped losses (chapter 3).

    ``old_logp`` only feeds ``stats["ratio_mean"]``: nothing is clipped, so the
    clip fractions are 0.
    """
    ratio = importance_ratio(logp, old_logp)
    none = torch.zeros_like(ratio, dtype=torch.bool)
    return policy_gradient_loss(logp, adv, mask, how, max_tokens), _ratio_stats(ratio, mask, none, none)


def ppo_clip_loss(
    logp: Tensor,
    old_logp: Tensor,
    adv: Tensor,
    mask: Tensor,
    eps_low: float = 0.2,
    eps_high: float = 0.2,
    how: str = "token_mean",
    max_tokens: int | None = None,
) -> tuple[Tensor, dict[str, float]]:
    """PPO's clipped surrogate, token by token (Schulman et al. 2017) (chapter 3).

    With ``ratio = exp(logp - old_logp)`` the objective per token is
    ``min(ratio * A, clip(ratio, 1 - eps_low, 1 + eps_high) * A)`` and
    ``loss = -aggregate(objective)``. Once a token's ratio has moved past the
    bound in the direction its advantage pushes (above ``1 + eps_high`` with
    ``A > 0``, below ``1 - eps_low`` with ``A < 0``), the clipped term is the
    minimum and that token's gradient is zero. A larger ``eps_high`` than
    ``eps_low`` is DAPO's "clip-higher" (Yu et al. 2025).
    ``stats["clip_fraction"]`` is the fraction of masked tokens whose gradient
    the clip removed, split into ``clip_low_fraction`` and ``clip_high_fraction``.
    """
    ratio = importance_ratio(logp, old_logp)
    a = _per_token(adv, logp)
    objective = torch.minimum(ratio * a, ratio.clamp(1 - eps_low, 1 + eps_high) * a)
    low = (ratio < 1 - eps_low) & (a < 0)
    high = (ratio > 1 + eps_high) & (a > 0)
    return -aggregate(objective, mask, how, max_tokens), _ratio_stats(ratio, mask, low, high)


def cispo_loss(
    logp: Tensor,
    old_logp: Tensor,
    adv: Tensor,
    mask: Tensor,
    cap_high: float = 4.0,
    cap_low: float = 0.0,
    how: str = "token_mean",
    max_tokens: int | None = None,
) -> tuple[Tensor, dict[str, float]]:
    """CISPO: REINFORCE weighted by a capped, stop-gradient importance ratio (MiniMax-M1, 2025) (chapter 3).

    ``loss = -aggregate(sg(clip(ratio, cap_low, cap_high)) * A * logp)``, where
    ``sg`` (``detach``) stops the gradient. PPO drops the gradient of a clipped
    token; CISPO keeps every token's gradient through ``logp`` and only caps
    how much weight it gets. The paper writes the caps as ``1 - eps_low`` and
    ``1 + eps_high``; here they are the weights themselves. Conventions differ:
    TRL's ``loss_type="cispo"`` caps the ratio from above at ``epsilon_high``
    (its documentation recommends 5.0); the book's default caps the weight at
    4 from above (``cispo_cap``). ``stats["clip_fraction"]`` is the fraction
    of masked tokens whose weight was capped.
    """
    ratio = importance_ratio(logp, old_logp).detach()
    weight = ratio.clamp(cap_low, cap_high)
    loss = -aggregate(weight * _per_token(adv, logp) * logp, mask, how, max_tokens)
    return loss, _ratio_stats(ratio, mask, ratio < cap_low, ratio > cap_high)


def sequence_ratio(logp: Tensor, old_logp: Tensor, mask: Tensor) -> Tensor:
    """GSPO's sequence-level importance ratio, shape ``(B, 1)`` (Zheng et al. 2025) (chapter 9).

    ``s_i = (pi(y_i) / pi_old(y_i)) ** (1 / |y_i|) = exp(mean over the
    answer's masked tokens of (logp - old_logp))``: the per-token ratios'
    geometric mean, so an answer's length does not compound its ratio.
    TRL's ``importance_sampling_level="sequence"`` computes the same.
    """
    m = mask.bool()
    log_ratio = torch.where(m, logp - old_logp, torch.zeros_like(logp))
    return torch.exp(log_ratio.sum(-1, keepdim=True) / m.sum(-1, keepdim=True).clamp(min=1))


def gspo_loss(
    logp: Tensor,
    old_logp: Tensor,
    adv: Tensor,
    mask: Tensor,
    eps_low: float = 3e-4,
    eps_high: float = 4e-4,
    how: str = "seq_mean",
    max_tokens: int | None = None,
) -> tuple[Tensor, dict[str, float]]:
    """GSPO: PPO's clipped surrogate with one ratio per answer, :func:`sequence_ratio` (Zheng et al. 2025) (chapter 9).

    Every token of answer ``i`` carries the objective
    ``min(s_i * A_i, clip(s_i, 1 - eps_low, 1 + eps_high) * A_i)``, so the
    clip keeps or drops a whole answer. Aggregated by ``"seq_mean"`` it is
    the paper's ``(1/G) sum_i`` of that objective; ``"token_mean"`` weighs
    each answer by its length, as TRL does with ``loss_type="dapo"`` at the
    sequence level. The paper clips the geometric-mean ratio much tighter
    than PPO clips a token's (3e-4 and 4e-4 by default here, the paper's).
    ``stats`` count the clipped answers' tokens, as PPO's count tokens.
    """
    ratio = sequence_ratio(logp, old_logp, mask)
    a = _per_token(adv, logp)
    objective = torch.minimum(ratio * a, ratio.clamp(1 - eps_low, 1 + eps_high) * a).expand_as(logp)
    low = ((ratio < 1 - eps_low) & (a < 0)).expand_as(logp)
    high = ((ratio > 1 + eps_high) & (a > 0)).expand_as(logp)
    return -aggregate(objective, mask, how, max_tokens), _ratio_stats(ratio.expand_as(logp), mask, low, high)


def kl_k3(logp: Tensor, ref_logp: Tensor) -> Tensor:
    """Per-token "k3" estimate of KL(pi || pi_ref): ``exp(d) - d - 1`` with ``d = ref_logp - logp`` (chapter 3).

    For tokens sampled from ``pi`` its expectation is the KL divergence, and it
    is never negative (``exp(d) >= 1 + d``), zero exactly where the two
    log-probabilities agree (Schulman 2020, "Approximating KL divergence";
    used as GRPO's KL penalty, Shao et al. 2024).
    """
    d = ref_logp - logp
    return torch.exp(d) - d - 1


def kl_k3_ratio(logp: Tensor, old_logp: Tensor, ref_logp: Tensor) -> Tensor:
    """Per-token k3 times the importance ratio ``r = exp(logp - old_logp)``, ``r`` carrying a gradient (chapter 3).

    On tokens sampled from an older policy, ``r * k3`` has the KL divergence
    ``KL(pi || pi_ref)`` of the current policy as its expectation, and its
    gradient with respect to a token's log-probability is
    ``r * (logp - ref_logp)``: in expectation over the samples, the exact
    gradient of that KL, on fresh and reused batches alike. Plain
    :func:`kl_k3` as a loss has the per-token gradient
    ``1 - exp(ref_logp - logp)`` instead, whose average is the gradient of
    ``KL(pi_ref || pi)`` on fresh samples and of neither on reused ones.
    This is TRL's ``use_bias_correction_kl=True`` (its default in 1.16).
    On-policy (``logp == old_logp``) the value equals :func:`kl_k3`.
    """
    return torch.exp(logp - old_logp) * kl_k3(logp, ref_logp)


KL_ESTIMATORS = ("k3", "k3-ratio")
"""The KL penalties a run configuration can add: plain :func:`kl_k3` or :func:`kl_k3_ratio`."""


def kl_penalty(estimator: str, logp: Tensor, old_logp: Tensor, ref_logp: Tensor) -> Tensor:
    """Per-token KL penalty to the reference by the named estimator of :data:`KL_ESTIMATORS` (chapter 3)."""
    if estimator == "k3":
        return kl_k3(logp, ref_logp)
    if estimator == "k3-ratio":
        return kl_k3_ratio(logp, old_logp, ref_logp)
    raise ValueError(f"unknown KL estimator {estimator!r}; choose one of {KL_ESTIMATORS}")


LOSSES: dict[str, Callable[..., tuple[Tensor, dict[str, float]]]] = {
    "pg": pg_loss,
    "ppo": ppo_clip_loss,
    "cispo": cispo_loss,
    "gspo": gspo_loss,
}
"""The policy losses by the name a run configuration uses; each returns ``(loss, stats)``."""


def token_loss(
    name: str, logp: Tensor, old_logp: Tensor, adv: Tensor, mask: Tensor, how: str = "token_mean", **params
) -> tuple[Tensor, dict[str, float]]:
    """The named loss of :data:`LOSSES` on one batch, returning ``(loss, stats)`` (chapter 3).

    ``params`` are that loss's own settings (``eps_low``, ``eps_high``,
    ``cap_high``, ``cap_low``, ``max_tokens``).
    """
    if name not in LOSSES:
        raise ValueError(f"unknown loss {name!r}; choose one of {sorted(LOSSES)}")
    return LOSSES[name](logp, old_logp, adv, mask, how=how, **params)
