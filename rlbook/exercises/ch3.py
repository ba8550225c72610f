"""Chapter 3's exercises (from reward to gradient), each registered with its checker, reference and inputs.

- :func:`check_signal`: the Try it on a real run, each batch's mean reward and share of groups with a signal;
- :func:`check_push_size`: the Try it's second part, each batch's mean |advantage|, over all answers and
  over the groups with a signal;
- :func:`check_split_credit` (Exercise 3.1): outcome and per-step credit of a multi-step answer;
- :func:`check_credit_reading` (Exercise 3.1): which characters of the real answer each credit pushes down;
- :func:`check_push_shares` (Exercise 3.2): where group normalisation moves a real batch's push.

The Try it's and Exercise 3.2's checkers are here, with every reference
solution, named mistake and registration; what those checkers say of a wrong
answer about a batch (their tables of slips) is in
:mod:`rlbook.exercises.batch_slips`, and Exercise 3.1's checkers are in
:mod:`rlbook.exercises.step_credit`.
The page imports this module alone and calls every check through it
(``ch3.check_split_credit``): the book's table of exercises reads a page's
checks from its ``chN.check_...`` calls. Each check runs the reader's answer on
fresh inputs or on the chapter's real ones, compares it with the reference and
returns a :class:`~rlbook.exercises.CheckResult` whose message says what
differs. It never raises on a wrong answer.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import cast

import torch

from rlbook.core import advantages as adv_lib

from . import CheckResult, as_number, named_by, never_raises, not_answered, verdict
from .batch_slips import (
    SHARE_SLIPS,
    SIZE_SLIPS,
    as_batch,
    mean_abs,
    share_mistakes,
    signal_problem,
    size_mistakes,
    size_problem,
)
from .registry import Exercise, Mistake, register
from .step_credit import check_credit_reading, check_split_credit


def measure_signal(first, last) -> dict:
    """The Try it on a run, reference: each batch's mean reward and share
    of groups whose rewards are not all equal."""
    answer = {}
    for name, rewards in (("first", first), ("last", last)):
        r = torch.as_tensor(rewards, dtype=torch.float32)
        mixed = r.max(dim=1).values > r.min(dim=1).values
        answer[name] = (float(r.mean()), float(mixed.float().mean()))
    return answer


@never_raises
def check_signal(answer, first=None, last=None) -> CheckResult:
    """The Try it on a real run: each batch's mean reward and share of groups with a signal, as a dict.

    ``answer`` maps ``"first"`` and ``"last"`` to ``(mean reward, share of
    groups whose rewards are not all equal)`` for ``first`` and ``last``,
    the chapter's real first and last batches of ``main`` (one row per group).
    """
    if answer is None or (isinstance(answer, dict) and all(answer.get(k) is None for k in ("first", "last"))):
        return not_answered("`signal`, a dict with a (mean reward, share) pair for 'first' and 'last'")
    if not isinstance(answer, dict):
        return verdict(False, "`signal` must be a dict with the keys 'first' and 'last', each a pair of numbers")
    batches = {
        "first": as_batch(first) if first is not None else None,
        "last": as_batch(last) if last is not None else None,
    }
    if any(b is None for b in batches.values()):
        return verdict(False, "give the chapter's batches of rewards (F.rewards_first, F.rewards_last) after `signal`")
    want = measure_signal(batches["first"], batches["last"])
    for name in ("first", "last"):
        if answer.get(name) is None:
            return verdict(False, f"'{name}' is still empty: give the {name} batch's (mean reward, share)")
        problem = signal_problem(answer[name], want[name], cast(torch.Tensor, batches[name]))  # no None: see above
        if problem:
            return verdict(False, f"{name} batch: {problem}")
    (m0, s0), (m1, s1) = want["first"], want["last"]
    trend = "fewer" if s1 < s0 else "more" if s1 > s0 else "as many"
    return verdict(
        True,
        f"main's first batch: mean reward {m0:.2f}, and {s0:.0%} of its groups carry a signal; "
        f"its last: mean reward {m1:.2f}, {s1:.0%} of groups. The reward rose and {trend} groups "
        "carry a signal: a group whose answers are all right earns the most and teaches nothing",
    )


def push_size(first, last) -> dict:
    """The Try it's reference: each batch's mean |advantage|, over all its
    answers and over the answers of its groups with a signal."""
    size = {}
    for name, rewards in (("first", first), ("last", last)):
        r = torch.as_tensor(rewards, dtype=torch.float32)
        push = (r - r.mean(dim=1, keepdim=True)).abs()
        mixed = r.max(dim=1).values > r.min(dim=1).values
        size[name] = (float(push.mean()), float(push[mixed].mean()))
    return size


@never_raises
def check_push_size(answer, first=None, last=None) -> CheckResult:
    """The Try it: each real batch's mean |group-centred advantage|, over all answers and over the groups with a signal.

    ``answer`` maps ``"first"`` and ``"last"`` to ``(mean |A| over every
    answer, mean |A| over the answers of the groups whose rewards are not all
    equal)`` for ``first`` and ``last``, the chapter's real first and last
    batches of ``main`` (one row per group).
    """
    if answer is None or (isinstance(answer, dict) and all(answer.get(k) is None for k in ("first", "last"))):
        return not_answered("`size`, a dict with a pair of mean |A| for 'first' and 'last'")
    if not isinstance(answer, dict):
        return verdict(False, "`size` must be a dict with the keys 'first' and 'last', each a pair of numbers")
    batches = {
        "first": as_batch(first) if first is not None else None,
        "last": as_batch(last) if last is not None else None,
    }
    if any(b is None for b in batches.values()):
        return verdict(False, "give the chapter's batches of rewards (F.rewards_first, F.rewards_last) after `size`")
    first_batch, last_batch = cast(torch.Tensor, batches["first"]), cast(torch.Tensor, batches["last"])
    for name, rewards, other in (("first", first_batch, last_batch), ("last", last_batch, first_batch)):
        if answer.get(name) is None:
            return verdict(False, f"'{name}' is still empty: give the {name} batch's pair of mean |A|")
        problem = size_problem(answer[name], rewards, other)
        if problem:
            return verdict(False, f"{name} batch: {problem}")
    (a0, m0), (a1, m1) = (
        mean_abs(adv_lib.group_centered(b), b.max(dim=1).values > b.min(dim=1).values)
        for b in (first_batch, last_batch)
    )

    def change(before: float, after: float) -> str:
        if math.isclose(before, after, abs_tol=5e-4) or before == 0:
            return "stayed about the same"
        return f"{'fell' if after < before else 'rose'} by {abs(after - before) / before:.0%}"

    return verdict(
        True,
        f"main's first batch: mean |A| {a0:.3f} over all answers, {m0:.3f} over the groups with a signal; "
        f"its last: {a1:.3f} and {m1:.3f}. Over all answers the push per answer {change(a0, a1)}; inside "
        f"the groups with a signal it {change(m0, m1)}. A group with k of its G answers right has mean "
        "|A| = 2k(G - k)/G^2 (rewards 0 or 1): largest when half are right, small when nearly all are",
    )


def my_split_credit(completion, outcome_adv, step_adv):
    """Exercise 3.1's reference: per-character outcome and step credit."""
    outcome, process, commas = [], [], 0
    for ch in completion:
        outcome.append(outcome_adv)
        process.append(step_adv[min(commas, len(step_adv) - 1)])
        commas += ch == ","
    return {"outcome": outcome, "process": process}


def credit_reading(group, row: int) -> dict:
    """Exercise 3.1's reading, reference: the positions each credit lowers."""
    text = group.completions[row]
    credit = my_split_credit(text, group.outcome_adv[row], group.step_adv[row])
    return {
        "pushed_down": [i for i, a in enumerate(credit["outcome"]) if a < 0],
        "blamed": [i for i, a in enumerate(credit["process"]) if a < 0],
    }


NEARLY_SETTLED = 1
"""Exercise 3.2: a group is nearly settled when at most this many of its answers differ from the rest."""


def push_shares(rewards) -> dict:
    """Exercise 3.2's reference: the push's share on nearly settled groups.

    A group's push is the sum of its answers' absolute advantages; it is
    nearly settled when exactly one of its answers differs from the rest.
    """
    rewards = torch.as_tensor(rewards, dtype=torch.float32)
    right = rewards.sum(dim=1)
    minority = torch.minimum(right, rewards.shape[1] - right)
    settled = minority == NEARLY_SETTLED
    shares = {}
    for name, advantages in (
        ("centred", adv_lib.group_centered(rewards)),
        ("normalised", adv_lib.group_normalized(rewards)),
    ):
        push = advantages.abs().sum(dim=1)
        shares[name] = float(push[settled].sum() / push.sum())
    return shares


@never_raises
def check_push_shares(answer, rewards=None) -> CheckResult:
    """Exercise 3.2: the share of a real batch's push that lands on nearly settled groups, centred and normalised.

    ``answer`` is a dict with the keys ``"centred"`` and ``"normalised"``;
    ``rewards`` the chapter's batch (``F.rewards_first``, one row per group).
    """
    if answer is None or (isinstance(answer, dict) and all(answer.get(k) is None for k in ("centred", "normalised"))):
        return not_answered("`shares`, a dict with the keys 'centred' and 'normalised'")
    if not isinstance(answer, dict):
        return verdict(False, "`shares` must be a dict with the keys 'centred' and 'normalised'")
    batch = as_batch(rewards) if rewards is not None else None
    if batch is None:
        return verdict(False, "give the chapter's batch, F.rewards_first, after `shares`")
    want = push_shares(batch)
    got = {key: as_number(answer.get(key)) for key in want}
    for key, value in got.items():
        if value is None:
            return verdict(False, f"'{key}' must be a number, the share (between 0 and 1); got {answer.get(key)!r:.40}")
        if not 0 <= value <= 1:
            return verdict(False, f"'{key}' is a share of the batch's push, between 0 and 1; got {value:g}")
    numbers = cast(dict[str, float], got)  # every value checked above: a number
    wrong = [key for key in want if not math.isclose(numbers[key], want[key], abs_tol=5e-4)]
    if not wrong:
        factor = want["normalised"] / want["centred"] if want["centred"] else float("nan")
        return verdict(
            True,
            f"centred, the nearly settled groups get {want['centred']:.0%} of the push; normalised, "
            f"{want['normalised']:.0%}, about {factor:.1f} times as much: dividing by a group's "
            "spread gives a nearly settled group a larger share of the push than centring does",
        )
    for mistake, why in share_mistakes(batch):
        if all(math.isclose(numbers[key], value, abs_tol=5e-4) for key, value in mistake.items()):
            return verdict(False, why)
    return verdict(
        False,
        f"{' and '.join(repr(k) for k in wrong)} differ from the batch's: a group's push is the "
        "sum of its answers' |advantages|; add it up over the nearly settled groups and divide by "
        "the whole batch's",
    )


def _size_slip(index: int) -> Mistake:
    """The Try it's slip number ``index`` of :func:`size_mistakes`, made on both batches."""

    def slipped(first, last) -> dict:
        return {name: size_mistakes(_real(batch))[index][0] for name, batch in (("first", first), ("last", last))}

    return Mistake(slipped, named_by(SIZE_SLIPS[index]))


def _share_slip(index: int) -> Mistake:
    """Exercise 3.2's slip number ``index`` of :func:`share_mistakes`."""
    return Mistake(lambda rewards: share_mistakes(_real(rewards))[index][0], named_by(SHARE_SLIPS[index]))


def _real(rewards) -> torch.Tensor:
    """A chapter's batch of rewards as the checks read it (one row per group), for the mistakes made on it."""
    return cast(torch.Tensor, as_batch(rewards))


def _signal_slip(pair: Callable[[float, float, int], tuple[float, float]]) -> Callable:
    """The Try it on a run answered with ``pair(mean reward, share with a signal, groups)`` for each batch."""

    def slipped(first, last) -> dict:
        right = measure_signal(first, last)
        groups = {"first": len(first), "last": len(last)}
        return {name: pair(right[name][0], right[name][1], groups[name]) for name in right}

    return slipped


def _without_the_end_mark(completion, outcome_adv, step_adv):
    """Exercise 3.1's credit with the end mark left out, so one character short."""
    return my_split_credit(completion.rstrip("#"), outcome_adv, step_adv)


def _outcome_on_the_last_character(completion, outcome_adv, step_adv):
    """Exercise 3.1's credit with the outcome advantage on the last character only, as if the reward credited the
    action that earned it alone."""
    outcome = [0.0] * (len(completion) - 1) + [outcome_adv]
    return dict(my_split_credit(completion, outcome_adv, step_adv), outcome=outcome)


def _comma_opens_the_next_step(completion, outcome_adv, step_adv):
    """Exercise 3.1's credit with each comma given to the step it opens, not the one it closes."""
    last = len(step_adv) - 1
    process = [step_adv[min(completion[: i + 1].count(","), last)] for i in range(len(completion))]
    return dict(my_split_credit(completion, outcome_adv, step_adv), process=process)


def _credit_slip(move: Callable[[int, str], int]) -> Callable:
    """Exercise 3.1's reading with each position moved by ``move(position, prompt)``."""

    def slipped(group, row: int) -> dict:
        right = credit_reading(group, row)
        return {key: [move(i, group.prompt) for i in positions] for key, positions in right.items()}

    return slipped


MISTAKES: dict[str, tuple[Mistake, ...]] = {
    "try-it-advantages": tuple(_size_slip(i) for i in (0, 1, 3, 5)),
    "try-it-signal": (
        Mistake(_signal_slip(lambda mean, share, groups: (share, mean)), "the other way round"),
        Mistake(_signal_slip(lambda mean, share, groups: (100 * mean, 100 * share)), "not as percentages"),
        Mistake(_signal_slip(lambda mean, share, groups: (mean, share * groups)), "that is a count of groups"),
    ),
    "split-credit": (
        Mistake(_without_the_end_mark, "the end mark and commas count"),
        Mistake(_outcome_on_the_last_character, "every generated character gets the same advantage"),
        Mistake(_comma_opens_the_next_step, "belongs to the step it closes"),
    ),
    "credit-reading": (
        Mistake(_credit_slip(lambda i, prompt: i + 1), "counted from 1; count from 0"),
        Mistake(_credit_slip(lambda i, prompt: i + len(prompt)), "count the prompt's"),
    ),
    "push-shares": tuple(_share_slip(i) for i in range(2)),
}
"""Chapter 3's named mistakes, by exercise: each a plausible wrong answer and the words its checker names it with
(the Try it's and Exercise 3.2's come from their checkers' tables, :data:`.batch_slips.SIZE_SLIPS` and
:data:`.batch_slips.SHARE_SLIPS`)."""


def _chapter_facts(seeds: tuple[int, ...]):
    """Chapter 3's facts on ``seeds``, from which its exercises' inputs come as the page passes them."""
    from rlbook import book

    return book.load("gradient", seeds, check=False)


def _batches(seeds: tuple[int, ...]) -> tuple:
    """The rewards of main's first and last batches, as the Try it cells pass them."""
    facts = _chapter_facts(seeds)
    return facts.rewards_first, facts.rewards_last


def _process_inputs(seeds: tuple[int, ...]) -> tuple:
    """Exercise 3.1's second part as the page passes it: the process group and its row."""
    facts = _chapter_facts(seeds)
    return facts.process, facts.process.row


for _exercise in (
    Exercise(
        "try-it-advantages",
        "gradient",
        check_push_size,
        push_size,
        answer="value",
        inputs=_batches,
        answer_name="size",
        call="F.rewards_first, F.rewards_last",
        mistakes=MISTAKES["try-it-advantages"],
    ),
    Exercise(
        "try-it-signal",
        "gradient",
        check_signal,
        measure_signal,
        answer="value",
        inputs=_batches,
        answer_name="signal",
        call="F.rewards_first, F.rewards_last",
        mistakes=MISTAKES["try-it-signal"],
    ),
    Exercise(
        "split-credit",
        "gradient",
        check_split_credit,
        my_split_credit,
        inputs=lambda seeds: (_chapter_facts(seeds).process,),
        mistakes=MISTAKES["split-credit"],
    ),
    Exercise(
        "credit-reading",
        "gradient",
        check_credit_reading,
        credit_reading,
        answer="value",
        inputs=_process_inputs,
        answer_name="reading",
        call="F.process, F.process.row",
        mistakes=MISTAKES["credit-reading"],
    ),
    Exercise(
        "push-shares",
        "gradient",
        check_push_shares,
        push_shares,
        answer="value",
        inputs=lambda seeds: (_chapter_facts(seeds).rewards_first,),
        answer_name="shares",
        call="F.rewards_first",
        mistakes=MISTAKES["push-shares"],
    ),
):
    register(_exercise)

__all__ = [
    "MISTAKES",
    "check_credit_reading",
    "check_push_shares",
    "check_push_size",
    "check_signal",
    "check_split_credit",
    "credit_reading",
    "measure_signal",
    "my_split_credit",
    "push_shares",
    "push_size",
]
