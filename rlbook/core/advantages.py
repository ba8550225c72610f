"""Advantages: how much better one sampled answer did than its siblings.

Chapter 1 uses them to close the RL loop; chapter 3 studies them (group
baselines, scaling by the standard deviation, zero-variance groups, giving each
generated token its answer's advantage).

Rewards come as a tensor of shape ``(num_groups, group_size)``: one row per
prompt, one column per sampled answer (``G`` of them). A 1-D tensor is one
group. Every function here is a pure function of tensors; nothing else in
``rlbook`` is imported.

The same names mean different things in different libraries, so each function
says which convention it follows. TRL's ``GRPOTrainer`` option
``scale_rewards`` picks between them: ``"none"`` is :func:`group_centered`,
``"group"`` is :func:`group_normalized`, ``"batch"`` is :func:`batch_normalized`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import torch
from torch import Tensor


def _as_rewards(rewards) -> Tensor:
    """``rewards`` as a floating tensor of 1 or 2 dimensions (lists are accepted)."""
    r = torch.as_tensor(rewards)
    if not r.is_floating_point():
        r = r.to(torch.get_default_dtype())
    if r.dim() not in (1, 2):
        raise ValueError(f"rewards must have shape (group_size,) or (num_groups, group_size), got {tuple(r.shape)}")
    return r


def group_centered(rewards) -> Tensor:
    """Group-centred advantages ``A_i = r_i - mean(r_group)`` (chapters 1 and 3).

    The mean reward of a prompt's own group is the baseline: the
    group-relative baseline of GRPO (DeepSeekMath, Shao et al. 2024) without
    dividing by the standard deviation, as Dr. GRPO (Liu et al. 2025) argues
    for. TRL calls this ``scale_rewards="none"``.
    Advantages sum to zero within each group, and a group whose rewards are all
    equal gets all-zero advantages. Same shape as ``rewards``.
    """
    r = _as_rewards(rewards)
    return r - r.mean(dim=-1, keepdim=True)


def group_normalized(rewards, eps: float = 1e-6, ddof: int = 0) -> Tensor:
    """Group-normalised advantages ``A_i = (r_i - mean(r_group)) / (std(r_group) + eps)`` (chapter 3).

    ``std`` divides by ``G - ddof``: ``ddof=0`` (the default) is the population
    standard deviation, ``ddof=1`` the sample one. ``eps`` keeps an all-equal
    group (std 0) at advantage 0 instead of 0/0.
    DeepSeekMath (Shao et al. 2024) writes GRPO's outcome advantage as
    ``(r_i - mean(r)) / std(r)`` without saying which std or adding an eps.
    TRL's ``scale_rewards="group"`` uses torch's default ``std`` (``ddof=1``)
    and adds ``1e-4``: pass ``ddof=1, eps=1e-4`` to match it.
    Example: ``[1, 0, 0, 0]`` with ``ddof=0`` has std ``sqrt(0.1875) = 0.433``,
    giving ``[1.732, -0.577, -0.577, -0.577]``.
    """
    r = _as_rewards(rewards)
    std = r.std(dim=-1, keepdim=True, correction=ddof)
    return group_centered(r) / (std + eps)


def batch_normalized(rewards, eps: float = 1e-6, ddof: int = 0) -> Tensor:
    """Group-centred advantages scaled by the whole batch's reward std (chapter 3).

    ``A_i = (r_i - mean(r_group)) / (std(all rewards in the batch) + eps)``: the
    baseline is still per prompt, but one scale serves every group, so a group
    with little spread is not blown up to unit size. This is TRL's
    ``scale_rewards="batch"`` (which uses ``ddof=1`` and ``eps=1e-4``).
    """
    r = _as_rewards(rewards)
    return group_centered(r) / (r.std(correction=ddof) + eps)


def leave_one_out(rewards) -> Tensor:
    """RLOO's advantage (Ahmadian et al. 2024): each reward minus the mean of the other G - 1 in its group (chapter 3).

    The baseline of answer ``i`` leaves ``i`` out, so it does not depend on
    the answer it scores. Since the others sum to ``G * mean - r_i``, the
    result equals ``G / (G - 1)`` times :func:`group_centered`; it is
    computed from the others' mean directly, so that chapter 3 can check that
    identity on a real group. Groups need at least 2 answers.
    """
    r = _as_rewards(rewards)
    size = r.shape[-1]
    if size < 2:
        raise ValueError(f"leaving one out needs groups of at least 2, got {size}")
    others = (r.sum(dim=-1, keepdim=True) - r) / (size - 1)
    return r - others


def zero_variance_mask(rewards) -> Tensor:
    """Boolean tensor of shape ``(num_groups,)``: True where a group's rewards are all equal (chapter 3).

    Such a group has all-zero advantages under every method here, so it
    contributes no learning signal, whether every answer was right or every
    answer was wrong. A 1-D ``rewards`` is one group (result of shape ``(1,)``).
    """
    r = _as_rewards(rewards)
    r = r.reshape(-1, r.shape[-1])
    return r.amax(dim=-1) == r.amin(dim=-1)


def zero_variance_fraction(rewards) -> float:
    """Fraction of groups whose rewards are all equal (chapter 3).

    rlbook's runs log it as ``zero_variance_frac``; TRL 1.16 logs the same
    quantity as ``frac_reward_zero_std`` (except under ``scale_rewards="batch"``,
    see :data:`rlbook.trl.METRIC_NOTES`).
    """
    return zero_variance_mask(rewards).float().mean().item()


def zero_variance_split(rewards, right_from: float | None = None) -> dict[str, float]:
    """Fractions of all groups that are all-right, all-wrong or mixed (chapter 3).

    ``"all_right"``: the group's rewards are all equal and positive (every
    sample earned reward), or with ``right_from`` all equal and at least
    ``right_from`` (every sample earned the full reward, where a shaped
    reward also pays part of it); ``"all_wrong"``: all equal and not right;
    ``"mixed"``: the rest, the groups that carry a learning signal. The three
    fractions sum to 1, and ``all_right + all_wrong`` equals
    :func:`zero_variance_fraction`: the groups are split on the rewards
    themselves, never on a thresholded copy.
    """
    r = _as_rewards(rewards)
    r = r.reshape(-1, r.shape[-1])
    equal = zero_variance_mask(r)
    right = equal & ((r[:, 0] > 0) if right_from is None else (r[:, 0] >= right_from))
    wrong = equal & ~right
    return {
        "all_right": right.float().mean().item(),
        "all_wrong": wrong.float().mean().item(),
        "mixed": (~equal).float().mean().item(),
    }


ADVANTAGE_METHODS: dict[str, Callable[..., Tensor]] = {
    "centered": group_centered,
    "group_std": group_normalized,
    "batch_std": batch_normalized,
    "rloo": leave_one_out,
}
"""The advantage estimators by the name a run configuration uses."""


def advantage_params(method: str) -> dict[str, object]:
    """The settings the advantage method ``method`` uses, with their values: its function's keyword defaults.

    The run record (chapter 8) writes them, so a record names ``eps`` and
    ``ddof`` only for a method that divides by a standard deviation.
    """
    if method not in ADVANTAGE_METHODS:
        raise ValueError(f"unknown advantage method {method!r}; choose one of {sorted(ADVANTAGE_METHODS)}")
    parameters = inspect.signature(ADVANTAGE_METHODS[method]).parameters.values()
    return {p.name: p.default for p in parameters if p.default is not inspect.Parameter.empty}


def compute_advantages(rewards, method: str = "centered") -> Tensor:
    """Advantages of ``rewards`` by the named method of :data:`ADVANTAGE_METHODS` (chapters 1 and 3)."""
    if method not in ADVANTAGE_METHODS:
        raise ValueError(f"unknown advantage method {method!r}; choose one of {sorted(ADVANTAGE_METHODS)}")
    return ADVANTAGE_METHODS[method](rewards)


def token_advantages(advantages: Tensor, mask: Tensor) -> Tensor:
    """Per-token advantages of shape ``(B, T)``: each generated token gets its sequence's advantage (chapter 3).

    ``advantages`` holds one number per sequence, ``B`` in all; a
    ``(num_groups, group_size)`` tensor is read row by row, group after group,
    the order in which the samples are laid out. ``mask`` is 1 (or True) on the
    generated tokens that are trained on and 0 on prompt, padding and
    after-the-end positions, which get advantage 0. With an outcome reward every
    token of an answer shares the credit equally: the simplest credit
    assignment, and the one chapter 3 questions.
    """
    per_sequence = advantages.reshape(-1, 1)
    if per_sequence.shape[0] != mask.shape[0]:
        raise ValueError(f"{per_sequence.shape[0]} advantages for {mask.shape[0]} sequences")
    return per_sequence * mask.to(per_sequence.dtype)
