"""What chapter 3's checks say of a wrong answer about a real batch of rewards (the Try it and Exercise 3.2).

A batch is one row of rewards per group, as the chapter hands ``main``'s
first and last batches to its checks (:func:`as_batch`). For the Try it's two
questions this module finds what a reader's pair got wrong
(:func:`signal_problem`, :func:`size_problem`), and it holds the tables of
plausible slips that the Try it's and Exercise 3.2's checks name
(:data:`SIZE_SLIPS` with :func:`size_mistakes`, :data:`SHARE_SLIPS` with
:func:`share_mistakes`). The checks, their reference solutions and named
mistakes are in :mod:`rlbook.exercises.ch3`, through which the page calls
them.
"""

from __future__ import annotations

import math

import torch

from rlbook.core import advantages as adv_lib

from . import as_numbers


def as_batch(rewards) -> torch.Tensor | None:
    """A batch of rewards as a (groups, G) tensor, or None when it is not one."""
    try:
        batch = torch.as_tensor([list(map(float, row)) for row in rewards], dtype=torch.float32)
    except (TypeError, ValueError):
        return None
    return batch if batch.dim() == 2 and batch.shape[1] > 1 else None


def signal_problem(got, want: tuple[float, float], rewards: torch.Tensor) -> str | None:
    """What is wrong with the reader's ``(mean reward, share with a signal)`` for ``rewards``, or None."""
    values = as_numbers(got)  # a tuple, a list, a 1-d array or tensor of two numbers
    if values is None or len(values) != 2:
        return f"give two numbers, (mean reward, share of groups with a signal); got {got!r:.60}"
    mean, share = values
    swapped = math.isclose(share, want[0], abs_tol=1e-4) and math.isclose(mean, want[1], abs_tol=1e-4)
    if swapped and not math.isclose(mean, want[0], abs_tol=1e-4):
        return "the two numbers are the other way round: the pair is (mean reward, share with a signal)"
    if any(math.isclose(v, 100 * w, abs_tol=1e-2) and abs(w) > 1e-9 for v, w in zip(values, want, strict=True)):
        return "give the mean and the share as fractions between 0 and 1, not as percentages"
    if not math.isclose(mean, want[0], abs_tol=1e-4):
        return f"the mean reward of a batch is the mean of all its rewards, {want[0]:.4f}; you gave {mean:.4f}"
    if math.isclose(share, want[1], abs_tol=1e-4):
        return None
    if math.isclose(share, 1 - want[1], abs_tol=1e-4):
        return (
            "that is the share of groups with no signal (every reward equal); the question asks for the "
            "groups whose rewards differ"
        )
    if math.isclose(share, want[1] * len(rewards), abs_tol=1e-4) and len(rewards) > 1:
        return f"that is a count of groups; give the share, the count divided by the {len(rewards)} groups"
    all_right = float((rewards.min(dim=1).values >= 1).float().mean())
    if math.isclose(share, 1 - all_right, abs_tol=1e-4):
        return "all-wrong groups carry no signal either: every advantage in them is 0 too"
    return (
        f"a group carries a signal when its rewards are not all equal (its advantages are not all 0): "
        f"{want[1]:.4f} of these groups do; you gave {share:.4f}"
    )


def mean_abs(advantages: torch.Tensor, mixed: torch.Tensor) -> tuple[float, float]:
    """Mean |advantage| over every answer and over the answers of the ``mixed`` groups (0 when there are none)."""
    push = advantages.abs()
    return float(push.mean()), float(push[mixed].mean()) if bool(mixed.any()) else 0.0


_PER_GROUP = "; the question asks for group-centred advantages, each reward minus its group's mean only"

SIZE_SLIPS = (
    "a group's advantages sum to 0, so their plain mean is 0: average their absolute values, |A|",
    "you divided by the group's standard deviation" + _PER_GROUP,
    "you divided by the group's (sample) standard deviation" + _PER_GROUP,
    "you subtracted the whole batch's mean reward; subtract each group's own mean",
    "those are leave-one-out (RLOO) advantages, {size}/{fewer} times the centred ones" + _PER_GROUP,
    "you squared the advantages; take their absolute values, |A|",
    "the second number averages over the answers of the groups with a signal only",
    "the two numbers are the other way round: the pair is (over all answers, over the groups with a signal)",
)
"""What the Try it's check says of each slip :func:`size_mistakes` computes, in its order (``{size}``: the group
size, ``{fewer}``: one less)."""


def size_mistakes(rewards: torch.Tensor) -> list[tuple[tuple[float, float], str]]:
    """The pairs a plausible slip gives for one batch, each with what it got wrong (:data:`SIZE_SLIPS`)."""
    mixed = rewards.max(dim=1).values > rewards.min(dim=1).values
    centred = adv_lib.group_centered(rewards)
    size = rewards.shape[1]
    right = mean_abs(centred, mixed)
    signed = (float(centred.mean()), float(centred[mixed].mean()) if bool(mixed.any()) else 0.0)
    squared = (float((centred**2).mean()), float((centred[mixed] ** 2).mean()) if bool(mixed.any()) else 0.0)
    pairs = [
        signed,
        mean_abs(adv_lib.group_normalized(rewards), mixed),
        mean_abs(adv_lib.group_normalized(rewards, ddof=1), mixed),
        mean_abs(rewards - rewards.mean(), mixed),
        mean_abs(adv_lib.leave_one_out(rewards), mixed),
        squared,
        (right[0], right[0]),
        (right[1], right[0]),
    ]
    return [(pair, why.format(size=size, fewer=size - 1)) for pair, why in zip(pairs, SIZE_SLIPS, strict=True)]


def size_problem(got, rewards: torch.Tensor, other: torch.Tensor) -> str | None:
    """What is wrong with the reader's ``(mean |A|, mean |A| with a signal)`` for ``rewards``, or None."""
    values = as_numbers(got)
    if values is None or len(values) != 2:
        return f"give two numbers, (mean |A| over all answers, mean |A| over the groups with a signal); got {got!r:.60}"
    if any(math.isnan(v) for v in values):
        return (
            "your numbers are NaN: dividing by a group's standard deviation gives 0/0 on a group whose rewards "
            "are all equal; the question asks for group-centred advantages, reward minus the group's mean only"
        )
    mixed = rewards.max(dim=1).values > rewards.min(dim=1).values

    def same(pair: tuple[float, float]) -> bool:
        return all(math.isclose(v, w, abs_tol=1e-4) for v, w in zip(values, pair, strict=True))

    want = mean_abs(adv_lib.group_centered(rewards), mixed)
    if same(want):
        return None
    other_mixed = other.max(dim=1).values > other.min(dim=1).values
    if same(mean_abs(adv_lib.group_centered(other), other_mixed)):
        return "those are the other batch's numbers: 'first' is F.rewards_first, 'last' F.rewards_last"
    for pair, why in size_mistakes(rewards):
        if same(pair):
            return why
    if same((float(rewards.mean()), float(mixed.float().mean()))):
        return "that is (mean reward, share of groups with a signal), the question above; this one asks for |A|"
    wrong = "the first number" if not math.isclose(values[0], want[0], abs_tol=1e-4) else "the second number"
    return (
        f"{wrong} differs: take each reward minus its group's mean reward, then average the absolute values "
        "over every answer of the batch (first number) and over the answers of the groups whose rewards are not "
        "all equal (second)"
    )


SHARE_SLIPS = (
    "you kept only the groups with one right answer; a group with one wrong answer is nearly settled too",
    "that is the share of groups, not of the push: weight each group by the sum of its |advantages|",
)
"""What Exercise 3.2's check says of each slip :func:`share_mistakes` computes, in its order."""


def share_mistakes(rewards: torch.Tensor) -> list[tuple[dict, str]]:
    """Answers a student reaches by a plausible slip, each with what it got wrong (:data:`SHARE_SLIPS`)."""
    right = rewards.sum(dim=1)
    minority = torch.minimum(right, rewards.shape[1] - right)
    centred, normed = adv_lib.group_centered(rewards), adv_lib.group_normalized(rewards)

    def share(advantages: torch.Tensor, where: torch.Tensor) -> float:
        push = advantages.abs().sum(dim=1)
        return float(push[where].sum() / push.sum())

    one_right = right == 1
    groups = float((minority == 1).float().mean())
    answers = [
        {"centred": share(centred, one_right), "normalised": share(normed, one_right)},
        {"centred": groups, "normalised": groups},
    ]
    return list(zip(answers, SHARE_SLIPS, strict=True))
