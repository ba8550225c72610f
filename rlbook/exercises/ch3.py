"""Checkers for chapter 3's exercises (from reward to gradient), each registered with its reference solution.

- :func:`check_signal`: the Try it on a real run, each batch's mean reward and share of groups with a signal;
- :func:`check_push_size`: the Try it's second part, each batch's mean |advantage|, over all answers and
  over the groups with a signal;
- :func:`check_split_credit` (Exercise 3.1): outcome and per-step credit of a multi-step answer;
- :func:`check_credit_reading` (Exercise 3.1): which characters of the real answer each credit pushes down;
- :func:`check_push_shares` (Exercise 3.2): where group normalisation moves a real batch's push.

Each check runs the reader's answer on fresh inputs or on the chapter's real
ones, compares it with the reference here and returns a
:class:`~rlbook.exercises.CheckResult` whose message says what differs. It
never raises on a wrong answer.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import cast

import torch

from rlbook.analysis.credit import split_credit, token_steps, visible
from rlbook.core import advantages as adv_lib

from . import CheckResult, as_count, as_number, as_numbers, never_raises, not_a_function, not_answered, verdict
from .registry import Exercise, register


def _close(a, b, tol: float = 1e-4) -> bool:
    a, b = torch.as_tensor(a, dtype=torch.float64), torch.as_tensor(b, dtype=torch.float64)
    return a.shape == b.shape and bool(torch.allclose(a, b, atol=tol, rtol=tol))


def _call(fn: Callable, *args):
    """``fn(*args)``, or the exception it raised (reported, never re-raised)."""
    try:
        return fn(*args), None
    except Exception as err:  # noqa: BLE001 - a reader's bug becomes a message
        return None, f"your function raised {type(err).__name__}: {err}"


def measure_signal(first, last) -> dict:
    """The Try it on a run, reference: each batch's mean reward and share
    of groups whose rewards are not all equal."""
    answer = {}
    for name, rewards in (("first", first), ("last", last)):
        r = torch.as_tensor(rewards, dtype=torch.float32)
        mixed = r.max(dim=1).values > r.min(dim=1).values
        answer[name] = (float(r.mean()), float(mixed.float().mean()))
    return answer


def _batch(rewards) -> torch.Tensor | None:
    """A batch of rewards as a (groups, G) tensor, or None when it is not one."""
    try:
        batch = torch.as_tensor([list(map(float, row)) for row in rewards], dtype=torch.float32)
    except (TypeError, ValueError):
        return None
    return batch if batch.dim() == 2 and batch.shape[1] > 1 else None


def _signal_problem(got, want: tuple[float, float], rewards: torch.Tensor) -> str | None:
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
        "first": _batch(first) if first is not None else None,
        "last": _batch(last) if last is not None else None,
    }
    if any(b is None for b in batches.values()):
        return verdict(False, "give the chapter's batches of rewards (F.rewards_first, F.rewards_last) after `signal`")
    want = measure_signal(batches["first"], batches["last"])
    for name in ("first", "last"):
        if answer.get(name) is None:
            return verdict(False, f"'{name}' is still empty: give the {name} batch's (mean reward, share)")
        problem = _signal_problem(answer[name], want[name], cast(torch.Tensor, batches[name]))  # no None: see above
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


def _mean_abs(advantages: torch.Tensor, mixed: torch.Tensor) -> tuple[float, float]:
    """Mean |advantage| over every answer and over the answers of the ``mixed`` groups (0 when there are none)."""
    push = advantages.abs()
    return float(push.mean()), float(push[mixed].mean()) if bool(mixed.any()) else 0.0


def _size_mistakes(rewards: torch.Tensor) -> list[tuple[tuple[float, float], str]]:
    """The pairs a plausible slip gives for one batch, each with what it got wrong (the Try it's messages)."""
    mixed = rewards.max(dim=1).values > rewards.min(dim=1).values
    centred = adv_lib.group_centered(rewards)
    size = rewards.shape[1]
    right = _mean_abs(centred, mixed)
    signed = (float(centred.mean()), float(centred[mixed].mean()) if bool(mixed.any()) else 0.0)
    per_group = "; the question asks for group-centred advantages, each reward minus its group's mean only"
    return [
        (signed, "a group's advantages sum to 0, so their plain mean is 0: average their absolute values, |A|"),
        (
            _mean_abs(adv_lib.group_normalized(rewards), mixed),
            "you divided by the group's standard deviation" + per_group,
        ),
        (
            _mean_abs(adv_lib.group_normalized(rewards, ddof=1), mixed),
            "you divided by the group's (sample) standard deviation" + per_group,
        ),
        (
            _mean_abs(rewards - rewards.mean(), mixed),
            "you subtracted the whole batch's mean reward; subtract each group's own mean",
        ),
        (
            _mean_abs(adv_lib.leave_one_out(rewards), mixed),
            f"those are leave-one-out (RLOO) advantages, {size}/{size - 1} times the centred ones" + per_group,
        ),
        (
            (float((centred**2).mean()), float((centred[mixed] ** 2).mean()) if bool(mixed.any()) else 0.0),
            "you squared the advantages; take their absolute values, |A|",
        ),
        ((right[0], right[0]), "the second number averages over the answers of the groups with a signal only"),
        (
            (right[1], right[0]),
            "the two numbers are the other way round: the pair is (over all answers, over the groups with a signal)",
        ),
    ]


def _size_problem(got, rewards: torch.Tensor, other: torch.Tensor) -> str | None:
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

    want = _mean_abs(adv_lib.group_centered(rewards), mixed)
    if same(want):
        return None
    other_mixed = other.max(dim=1).values > other.min(dim=1).values
    if same(_mean_abs(adv_lib.group_centered(other), other_mixed)):
        return "those are the other batch's numbers: 'first' is F.rewards_first, 'last' F.rewards_last"
    for pair, why in _size_mistakes(rewards):
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
        "first": _batch(first) if first is not None else None,
        "last": _batch(last) if last is not None else None,
    }
    if any(b is None for b in batches.values()):
        return verdict(False, "give the chapter's batches of rewards (F.rewards_first, F.rewards_last) after `size`")
    first_batch, last_batch = cast(torch.Tensor, batches["first"]), cast(torch.Tensor, batches["last"])
    for name, rewards, other in (("first", first_batch, last_batch), ("last", last_batch, first_batch)):
        if answer.get(name) is None:
            return verdict(False, f"'{name}' is still empty: give the {name} batch's pair of mean |A|")
        problem = _size_problem(answer[name], rewards, other)
        if problem:
            return verdict(False, f"{name} batch: {problem}")
    (a0, m0), (a1, m1) = (
        _mean_abs(adv_lib.group_centered(b), b.max(dim=1).values > b.min(dim=1).values)
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


def _process_rows(group) -> tuple[list[str], list[float], list[list[float]]] | None:
    """A real process group's completions, outcome advantages and step advantages, from the facts or the dataclass."""
    try:
        completions = [str(c) for c in group.completions]
        outcome = [float(a) for a in group.outcome_adv]
        steps = [[float(a) for a in row] for row in group.step_adv]
    except (AttributeError, TypeError, ValueError):
        return None
    if not completions or len(outcome) != len(completions) or len(steps) != len(completions):
        return None
    return completions, outcome, steps


def _random_completion(rng: random.Random) -> str:
    """A multi-step-looking answer: digit fields, commas, maybe an end mark, sometimes too many fields."""
    fields = ["".join(rng.choice("0123456789") for _ in range(rng.randint(1, 2))) for _ in range(rng.randint(1, 3))]
    text = ",".join(fields)
    return text + "#" if rng.random() < 0.7 else text


@never_raises
def check_split_credit(fn: Callable | None, group=None) -> CheckResult:
    """Exercise 3.1: ``fn(completion, outcome_adv, step_adv)`` must return per-character outcome and process credit.

    Tested on every rollout of ``group`` (the chapter's real group,
    ``F.process``) when given, then on random answers.
    """
    if fn is None:
        return not_answered("`my_split_credit`")
    if not callable(fn):
        return not_a_function("my_split_credit", fn)
    rows = _process_rows(group) if group is not None else ([], [], [])
    if rows is None:
        return verdict(False, "give the chapter's group, F.process, as the second argument")
    rng = random.Random(3)
    cases = list(zip(*rows))
    cases += [
        (_random_completion(rng), rng.uniform(-1, 1), [rng.uniform(-1, 1), rng.uniform(-1, 1)]) for _ in range(40)
    ]
    for completion, outcome_adv, step_adv in cases:
        got, error = _call(fn, completion, outcome_adv, step_adv)
        if error:
            return verdict(False, error)
        if got is None:
            return not_answered("`my_split_credit` (it returned None)")
        want = split_credit(completion, outcome_adv, step_adv)
        if not isinstance(got, dict) or set(got) != {"outcome", "process"}:
            return verdict(False, "return a dict with the keys 'outcome' and 'process'")
        for key in ("outcome", "process"):
            if as_numbers(got[key]) is None:
                return verdict(
                    False, f"'{key}' must be a list of numbers, one per generated character; got {got[key]!r:.40}"
                )
            if len(got[key]) != len(completion):
                return verdict(
                    False,
                    f"{completion!r} has {len(completion)} generated characters (the end mark and "
                    f"commas count); your '{key}' list has {len(got[key])}",
                )
        got = {key: as_numbers(got[key]) for key in ("outcome", "process")}
        if not _close(got["outcome"], want["outcome"]):
            return verdict(
                False,
                f"{completion!r}: under an outcome reward every generated character gets the same "
                f"advantage, {outcome_adv:+.3f}; you gave {got['outcome']}",
            )
        if not _close(got["process"], want["process"]):
            steps = token_steps(completion, len(step_adv))
            wrong = [i for i, (a, b) in enumerate(zip(got["process"], want["process"])) if abs(a - b) > 1e-4]
            return verdict(
                False,
                f"{completion!r}: process credit differs at character(s) {wrong}. Each character "
                f"takes the advantage of its step; the steps here are {steps} (a comma or end mark "
                f"belongs to the step it closes)",
            )
    return verdict(True, f"outcome and process credit match on {len(cases)} answers")


def my_split_credit(completion, outcome_adv, step_adv):
    """Exercise 3.1's reference: per-character outcome and step credit."""
    outcome, process, commas = [], [], 0
    for ch in completion:
        outcome.append(outcome_adv)
        process.append(step_adv[min(commas, len(step_adv) - 1)])
        commas += ch == ","
    return {"outcome": outcome, "process": process}


def _positions(value) -> set[int] | None:
    """Character positions given as a list, tuple, set or range of whole numbers, or None."""
    if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__iter__"):
        return None
    items = [as_count(x) for x in value]
    return None if None in items else set(cast(list[int], items))


def _misplaced(positions: set[int], want: set[int], text: str, prompt: str) -> str | None:
    """The counting mistake that turns ``want`` into ``positions``: from 1, or with the prompt; else None."""
    if positions == {i + 1 for i in want}:
        return (
            f"those positions are counted from 1; count from 0: the characters of '{visible(text)}' are at positions "
            f"0 to {len(text) - 1}"
        )
    if positions == {i + len(prompt) for i in want}:
        return (
            f"those positions count the prompt's {len(prompt)} characters too; count the answer's own "
            f"characters only, from 0 to {len(text) - 1}"
        )
    if positions == {i + len(prompt) + 1 for i in want}:
        return (
            f"those positions count the prompt and start from 1; count the answer's own characters from 0, "
            f"0 to {len(text) - 1}"
        )
    return None


@never_raises
def check_credit_reading(answer, group=None, row: int | None = None) -> CheckResult:
    """Exercise 3.1's reading: which characters of answer ``row`` of ``group`` each credit pushes down.

    ``answer`` is a dict: ``"pushed_down"`` lists the positions (from 0) of
    the characters that get a negative advantage under the outcome reward,
    ``"blamed"`` those that get one under the step labels; both are
    compared with :func:`rlbook.analysis.credit.split_credit` of that answer.
    """
    if answer is None or (isinstance(answer, dict) and all(answer.get(k) is None for k in ("pushed_down", "blamed"))):
        return not_answered("`reading`, a dict of two lists of character positions (from 0)")
    if not isinstance(answer, dict):
        return verdict(False, "`reading` must be a dict with the keys 'pushed_down' and 'blamed'")
    rows = _process_rows(group) if group is not None else None
    if rows is None or not isinstance(row, int) or isinstance(row, bool) or not 0 <= row < len(rows[0]):
        return verdict(False, "give the chapter's group and chosen answer (F.process, F.process.row) after `reading`")
    completions, outcome, steps = rows
    text, prompt = completions[row], str(getattr(group, "prompt", ""))
    credit = split_credit(text, outcome[row], steps[row])
    want = {key: {i for i, a in enumerate(credit[key]) if a < 0} for key in ("outcome", "process")}
    for name, key in (("pushed_down", "outcome"), ("blamed", "process")):
        positions = _positions(answer.get(name))
        if positions is None:
            return verdict(
                False,
                f"'{name}' must be a list of character positions of '{visible(text)}', whole numbers "
                f"from 0 to {len(text) - 1}",
            )
        if positions == want[key]:
            continue
        misplaced = _misplaced(positions, want[key], text, prompt)
        if misplaced:
            return verdict(False, f"{name}: {misplaced}")
        if key == "outcome":
            return verdict(
                False,
                f"pushed_down: the outcome advantage of '{visible(text)}' is one number, "
                f"{outcome[row]:+.3f}, and every generated character shares it",
            )
        return verdict(
            False,
            f"blamed: under the step labels a character takes its step's advantage, here "
            f"{[round(a, 3) for a in steps[row]]}; a comma or the end mark belongs to the step "
            "it closes",
        )
    blamed = visible("".join(text[i] for i in sorted(want["process"])))
    return verdict(
        True,
        f"the outcome pushes down all {len(want['outcome'])} characters of '{visible(text)}'; the "
        f"step labels put the blame on {len(want['process'])} of them, '{blamed}', and spare the rest",
    )


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


def _share_mistakes(rewards: torch.Tensor) -> list[tuple[dict, str]]:
    """Answers a student reaches by a plausible slip, each with what it got wrong."""
    right = rewards.sum(dim=1)
    minority = torch.minimum(right, rewards.shape[1] - right)
    centred, normed = adv_lib.group_centered(rewards), adv_lib.group_normalized(rewards)

    def share(advantages: torch.Tensor, where: torch.Tensor) -> float:
        push = advantages.abs().sum(dim=1)
        return float(push[where].sum() / push.sum())

    one_right = right == 1
    return [
        (
            {"centred": share(centred, one_right), "normalised": share(normed, one_right)},
            "you kept only the groups with one right answer; a group with one wrong answer is nearly settled too",
        ),
        (
            {"centred": float((minority == 1).float().mean()), "normalised": float((minority == 1).float().mean())},
            "that is the share of groups, not of the push: weight each group by the sum of its |advantages|",
        ),
    ]


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
    batch = _batch(rewards) if rewards is not None else None
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
            "spread pushes hardest where the group barely disagrees",
        )
    for mistake, why in _share_mistakes(batch):
        if all(math.isclose(numbers[key], value, abs_tol=5e-4) for key, value in mistake.items()):
            return verdict(False, why)
    return verdict(
        False,
        f"{' and '.join(repr(k) for k in wrong)} differ from the batch's: a group's push is the "
        "sum of its answers' |advantages|; add it up over the nearly settled groups and divide by "
        "the whole batch's",
    )


def _chapter_facts():
    from rlbook import book

    return book.load("gradient", check=False)


def _process_inputs() -> tuple:
    facts = _chapter_facts()
    return facts.process, facts.process.row


for _exercise in (
    Exercise(
        "try-it-advantages",
        "gradient",
        check_push_size,
        push_size,
        answer="value",
        inputs=lambda: (_chapter_facts().rewards_first, _chapter_facts().rewards_last),
        answer_name="size",
        call="F.rewards_first, F.rewards_last",
    ),
    Exercise(
        "try-it-signal",
        "gradient",
        check_signal,
        measure_signal,
        answer="value",
        inputs=lambda: (_chapter_facts().rewards_first, _chapter_facts().rewards_last),
        answer_name="signal",
        call="F.rewards_first, F.rewards_last",
    ),
    Exercise(
        "split-credit", "gradient", check_split_credit, my_split_credit, inputs=lambda: (_chapter_facts().process,)
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
    ),
    Exercise(
        "push-shares",
        "gradient",
        check_push_shares,
        push_shares,
        answer="value",
        inputs=lambda: (_chapter_facts().rewards_first,),
        answer_name="shares",
        call="F.rewards_first",
    ),
):
    register(_exercise)

__all__ = [
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
