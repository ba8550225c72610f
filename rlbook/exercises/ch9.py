"""Checkers for chapter 9's exercises (DAPO's and GSPO's ingredients), each registered with its reference solution.

- :func:`check_sequence_ratio` (Exercise 9.1): GSPO's one ratio per answer,
  then applied to answers of the ``gspo`` run's batch before and after that
  step's updates, beside the reader's guess of how many leave the clip range.
- :func:`check_silent_groups` (Exercise 9.2): which groups of a batch carry
  no learning signal, then applied to ``main``'s first batch, beside the
  reader's guess of how many groups dynamic sampling would replace.
- :func:`check_length_penalty` (Exercise 9.3): DAPO's soft length penalty,
  then applied to the lengths of the worked world's answers under the tight
  budget, beside the reader's guess of what a right worked answer is worth.

Each checker returns a :class:`~rlbook.exercises.CheckResult` and never
raises on a wrong answer.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping

import numpy as np
import torch

from rlbook.core import losses, overlong, refill

from . import CheckResult, as_number, call, close, named_by, never_raises, not_a_function, not_answered, verdict
from .registry import Exercise, Mistake, register

# ------------------------------------------------------------------ exercise 9.1: GSPO's ratio


def _ratio_cases(gen: torch.Generator) -> list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """Random (logp, old_logp, mask) with answers of different lengths and junk after each answer's end."""
    cases = []
    for rows, cols in ((4, 5), (6, 3), (3, 8)):
        old = -torch.rand(rows, cols, generator=gen, dtype=torch.float64) * 2
        logp = old + torch.randn(rows, cols, generator=gen, dtype=torch.float64) * 0.3
        lengths = torch.randint(1, cols + 1, (rows,), generator=gen)
        lengths[0] = cols
        lengths[1] = 1
        mask = torch.arange(cols)[None, :] < lengths[:, None]
        logp = torch.where(mask, logp, torch.full_like(logp, -7.0))  # what lies past an answer's end is junk
        cases.append((logp, old, mask))
    return cases


RATIO_SLIPS = (
    (
        lambda lp, old, m: torch.exp(((lp - old) * m).sum(-1)),
        (
            "you multiplied the tokens' ratios: that ratio compounds with the answer's length. GSPO takes their "
            "geometric mean, exp of the mean log-ratio over the answer's tokens"
        ),
    ),
    (
        lambda lp, old, m: (torch.exp(lp - old) * m).sum(-1) / m.sum(-1),
        (
            "you averaged the tokens' ratios themselves: GSPO averages their logarithms and then exponentiates, "
            "which is the geometric mean"
        ),
    ),
    (
        lambda lp, old, m: torch.exp((lp - old).mean(-1)),
        (
            "you averaged over every position, past the answer's end as well: average over the answer's tokens only, "
            "where the mask is set"
        ),
    ),
)
"""Ratios a reader may compute instead of GSPO's, each with what the check says of it."""


def _as_rows(got, rows: int) -> torch.Tensor | None:
    """The reader's ratios as a float64 vector of ``rows`` values ((B,) or (B, 1) accepted); None otherwise."""
    try:
        got = got.detach() if isinstance(got, torch.Tensor) else got
        values = torch.as_tensor(np.asarray(got, dtype=np.float64)).reshape(-1)
    except (TypeError, ValueError, RuntimeError):
        return None
    return values if values.numel() == rows else None


@never_raises
def check_sequence_ratio(fn: Callable | None, batch: Mapping | None = None, predicted=None) -> CheckResult:
    """Exercise 9.1: ``fn(logp, old_logp, mask)`` must give one ratio per answer, :func:`rlbook.core.losses.sequence_ratio`.

    Tried on random answers of different lengths, then applied to ``batch``
    (the ``gspo`` run's answers before and after one step's updates: its
    ``logp``, ``old_logp`` and ``mask`` as lists, and the run's clip range
    ``eps`` below and above 1), where it counts the answers
    whose ratio lies outside GSPO's clip range and sets that beside the
    reader's ``predicted`` share.
    """
    if fn is None:
        return not_answered("`sequence_ratio`")
    if not callable(fn):
        return not_a_function("sequence_ratio", fn)
    for logp, old, mask in _ratio_cases(torch.Generator().manual_seed(9)):
        got, error = call(fn, logp.clone(), old.clone(), mask.clone())
        if error:
            return verdict(False, error)
        if got is None:
            return not_answered("`sequence_ratio` (it returned None)")
        mine = _as_rows(got, len(mask))
        if mine is None:
            return verdict(False, f"return one ratio per answer, {len(mask)} numbers for {len(mask)} answers")
        want = losses.sequence_ratio(logp, old, mask).reshape(-1)
        if not close(mine, want, 1e-6):
            for wrong, message in RATIO_SLIPS:
                if close(mine, wrong(logp, old, mask.double()), 1e-6):
                    return verdict(False, message)
            return verdict(
                False,
                f"expected ratios {[round(x, 4) for x in want.tolist()]}, got {[round(x, 4) for x in mine.tolist()]}",
            )
    tail = "" if batch is None else _outside(fn, batch, predicted)
    return verdict(True, f"your ratios match GSPO's on answers of every length{tail}")


def _outside(fn: Callable, batch: Mapping, predicted) -> str:
    """How many of the batch's answers the reader's ratio puts outside GSPO's clip range, beside the guess."""
    logp, old = (torch.tensor(batch[k], dtype=torch.float64) for k in ("logp", "old_logp"))
    mask = torch.tensor(batch["mask"])
    ratios = torch.as_tensor(fn(logp, old, mask), dtype=torch.float64).reshape(-1)
    low, high = 1 - batch["eps"][0], 1 + batch["eps"][1]
    outside = int(((ratios < low) | (ratios > high)).sum())
    count = (
        f"every one of these {len(ratios)} answers lies"
        if outside == len(ratios)
        else f"{outside} of these {len(ratios)} answers ({outside / len(ratios):.0%}) lie"
    )
    said = (
        f"; after the step's updates {count} outside [{low:g}, {high:g}], with ratios from "
        f"{float(ratios.min()):.3f} to {float(ratios.max()):.3f}"
    )
    guess = as_number(predicted)
    if guess is not None:
        said += f". You predicted {guess:.0%}"
    return said


def sequence_ratio(logp, old_logp, mask):
    """Exercise 9.1's reference: the geometric mean of an answer's token ratios, over its own tokens."""
    m = mask.double()
    log_ratio = ((logp - old_logp) * m).sum(-1) / m.sum(-1)
    return torch.exp(log_ratio)


# ------------------------------------------------------------------ exercise 9.2: silent groups


def _reward_cases(seed: int) -> list[tuple[list[float], int]]:
    """Batches of rewards in groups: all right, all wrong, mixed and shaped (0.5 steps), of several group sizes."""
    rng = random.Random(seed)
    cases: list[tuple[list[float], int]] = [
        ([1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0], 4),
        ([0.5, 0.5, 1.0, 1.0, 0.0, 0.5], 2),
    ]
    for size in (3, 5, 8):
        rewards: list[float] = []
        for _ in range(6):
            kind = rng.choice(("right", "wrong", "mixed", "shaped"))
            if kind == "right":
                rewards += [1.0] * size
            elif kind == "wrong":
                rewards += [0.0] * size
            elif kind == "mixed":
                rewards += [1.0] + [float(rng.random() < 0.5) for _ in range(size - 2)] + [0.0]
            else:
                rewards += [0.5] * size
        cases.append((rewards, size))
    return cases


def _silent(rewards, size: int) -> list[bool]:
    """The truth: a group is silent when all its rewards are equal."""
    return (~refill.informative(np.array(rewards, dtype=float), size)[::size]).tolist()


SILENT_SLIPS = (
    (
        lambda r, g: [all(x == 0 for x in r[i : i + g]) for i in range(0, len(r), g)],
        (
            "you called only the all-wrong groups silent: a group whose answers are all right is silent too, since "
            "every advantage is its reward minus the same mean"
        ),
    ),
    (
        lambda r, g: [
            all(x == 1 for x in r[i : i + g]) or all(x == 0 for x in r[i : i + g]) for i in range(0, len(r), g)
        ],
        (
            "you looked for groups all right or all wrong: a group whose rewards are all equal at any value (0.5 under a "
            "shaped reward) is silent as well"
        ),
    ),
)
"""Answers a reader may give instead of Exercise 9.2's, each with what the check says of it."""


def _as_flags(got, groups: int) -> list[bool] | None:
    """The reader's answer as one bool per group; None when it has another length or holds anything else."""
    try:
        flags = [bool(x) for x in list(got)]
    except Exception:  # noqa: BLE001 - not a sequence, or items with no single truth value (arrays, tensors)
        return None
    return flags if len(flags) == groups else None


@never_raises
def check_silent_groups(fn: Callable | None, batch: Mapping | None = None, predicted=None) -> CheckResult:
    """Exercise 9.2: ``fn(rewards, group_size)`` must flag each group whose rewards are all equal (True: silent).

    Tried on made-up batches, then applied to ``batch`` (``main``'s first
    batch: its ``rewards`` and ``group_size``), beside the reader's
    ``predicted`` count of silent groups.
    """
    if fn is None:
        return not_answered("`silent_groups`")
    if not callable(fn):
        return not_a_function("silent_groups", fn)
    for rewards, size in _reward_cases(2):
        got, error = call(fn, list(rewards), size)
        if error:
            return verdict(False, error)
        if got is None:
            return not_answered("`silent_groups` (it returned None)")
        groups = len(rewards) // size
        flags = _as_flags(got, groups)
        if flags is None:
            return verdict(
                False,
                f"return one True or False per group: {groups} values for {len(rewards)} rewards in groups of {size}",
            )
        if flags != _silent(rewards, size):
            for wrong, message in SILENT_SLIPS:
                if flags == wrong(rewards, size):
                    return verdict(False, message)
            return verdict(
                False, f"for rewards {rewards} in groups of {size} expected {_silent(rewards, size)}, got {flags}"
            )
    tail = "" if batch is None else _first_batch(fn, batch, predicted)
    return verdict(True, f"your flags match on {len(_reward_cases(2))} batches{tail}")


def _first_batch(fn: Callable, batch: Mapping, predicted) -> str:
    """What the reader's flags say of ``main``'s first batch, beside the guess."""
    rewards, size = list(batch["rewards"]), int(batch["group_size"])
    flags = [bool(x) for x in fn(rewards, size)]
    silent = sum(flags)
    right = sum(flag and rewards[i * size] == 1 for i, flag in enumerate(flags))
    said = (
        f"; in main's first batch {silent} of its {len(flags)} groups are silent ({right} all right, "
        f"{silent - right} all wrong): dynamic sampling would sample {silent * size} more answers in its first round"
    )
    guess = as_number(predicted)
    if guess is not None:
        said += f". You predicted {guess:g} silent groups"
    return said


def silent_groups(rewards, group_size):
    """Exercise 9.2's reference: a group is silent when its rewards are all the same."""
    groups = [rewards[i : i + group_size] for i in range(0, len(rewards), group_size)]
    return [min(g) == max(g) for g in groups]


# ------------------------------------------------------------------ exercise 9.3: DAPO's length penalty

PENALTY_SLIPS = (
    (
        lambda n, budget, cache: ((budget - cache) - n) / cache,
        "a short answer gets a bonus: the penalty is 0 up to budget - cache tokens, never positive",
    ),
    (
        lambda n, budget, cache: -1.0 if n > budget - cache else 0.0,
        (
            "every answer in the last cache tokens gets -1: the penalty falls linearly over them, from 0 to -1 at the "
            "budget"
        ),
    ),
    (
        lambda n, budget, cache: min(0.0, ((budget - cache) - n) / budget),
        "you divided by the budget: the ramp is cache tokens long, so divide by cache",
    ),
)
"""Penalties a reader may write instead of DAPO's, each with what the check says of it."""


@never_raises
def check_length_penalty(fn: Callable | None, lengths: Mapping | None = None, predicted=None) -> CheckResult:
    """Exercise 9.3: ``fn(length, budget, cache)`` must be DAPO's soft overlong penalty, :func:`rlbook.core.overlong.length_penalty`.

    Tried on every length up to several budgets, then applied to ``lengths``
    (the tight budget, its ramp and the worked world's answer lengths), beside
    the reader's ``predicted`` reward of a right worked answer of 17 characters.
    """
    if fn is None:
        return not_answered("`length_penalty`")
    if not callable(fn):
        return not_a_function("length_penalty", fn)
    for budget, cache in ((18, 4), (10, 3), (24, 24)):
        want = overlong.length_penalty(torch.arange(1, budget + 1), budget, cache).tolist()
        for n, w in zip(range(1, budget + 1), want):
            got, error = call(fn, n, budget, cache)
            if error:
                return verdict(False, error)
            if got is None:
                return not_answered("`length_penalty` (it returned None)")
            value = as_number(got)
            if value is None:
                return verdict(False, f"`length_penalty({n}, {budget}, {cache})` returned {got!r:.40}; return a number")
            if not math.isclose(value, w, abs_tol=1e-9):
                for wrong, message in PENALTY_SLIPS:
                    if all(
                        math.isclose(as_number(fn(k, budget, cache)) or 0.0, wrong(k, budget, cache), abs_tol=1e-9)
                        for k in range(1, budget + 1)
                    ):
                        return verdict(False, message)
                return verdict(False, f"`length_penalty({n}, {budget}, {cache})` gave {value:g}, DAPO's penalty {w:g}")
    tail = "" if lengths is None else _worked_lengths(fn, lengths, predicted)
    return verdict(True, f"your penalty is DAPO's at every length{tail}")


def _worked_lengths(fn: Callable, lengths: Mapping, predicted) -> str:
    """What the reader's penalty makes of the worked world's answer lengths under the tight budget."""
    budget, cache = int(lengths["budget"]), int(lengths["cache"])
    fits = [n for n in lengths["worked"] if n <= budget]
    worth = [f"{1 + float(fn(n, budget, cache)):.2f} at {n} characters" for n in fits]
    listed = worth[0] if len(worth) == 1 else f"{', '.join(worth[:-1])} and {worth[-1]}"
    said = (
        f"; under a budget of {budget} and a ramp of {cache}, a right worked answer earns {listed}, "
        f"a right direct answer 1"
    )
    guess = as_number(predicted)
    if guess is not None:
        said += f". You predicted {guess:g} for 17 characters"
    return said


def length_penalty(length, budget, cache):
    """Exercise 9.3's reference: 0 up to budget - cache tokens, then falling linearly to -1 at the budget."""
    start = budget - cache
    if length <= start:
        return 0.0
    return (start - length) / cache


# ------------------------------------------------------------------ registration


def _facts(seeds: tuple[int, ...]):
    """Chapter 9's facts on ``seeds``, unchecked (what the page's cells hand the checkers)."""
    from rlbook import book

    return book.load("recipe", seeds, check=False).exercise


MISTAKES: dict[str, tuple[Mistake, ...]] = {
    "sequence-ratio": tuple(Mistake(wrong, named_by(message)) for wrong, message in RATIO_SLIPS),
    "silent-groups-refill": tuple(Mistake(wrong, named_by(message)) for wrong, message in SILENT_SLIPS),
    "length-penalty": tuple(Mistake(wrong, named_by(message)) for wrong, message in PENALTY_SLIPS),
}
"""Chapter 9's named mistakes, by exercise, from its checkers' tables."""

register(
    Exercise(
        "sequence-ratio",
        "recipe",
        check_sequence_ratio,
        sequence_ratio,
        inputs=lambda seeds: (_facts(seeds).gspo,),
        mistakes=MISTAKES["sequence-ratio"],
    )
)
register(
    Exercise(
        "silent-groups-refill",
        "recipe",
        check_silent_groups,
        silent_groups,
        inputs=lambda seeds: (_facts(seeds).first_batch,),
        mistakes=MISTAKES["silent-groups-refill"],
    )
)
register(
    Exercise(
        "length-penalty",
        "recipe",
        check_length_penalty,
        length_penalty,
        inputs=lambda seeds: (_facts(seeds).lengths,),
        mistakes=MISTAKES["length-penalty"],
    )
)

__all__ = [
    "MISTAKES",
    "check_length_penalty",
    "check_sequence_ratio",
    "check_silent_groups",
    "length_penalty",
    "sequence_ratio",
    "silent_groups",
]
