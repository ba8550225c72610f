"""Checkers for chapter 7's exercises (written working), each registered with its reference solution.

- :func:`check_outcome_reward` (Exercise 7.1): an outcome-only reward for
  the worked world, compared with the book's exact verifier on worked and
  direct answers, right and wrong, finished and cut off; then applied to
  the answers the chapter shows.
- :func:`check_gain_split` (Exercise 7.2): a change in accuracy split into
  the switch of style and execution within each style, compared with
  :func:`rlbook.analysis.working.gain_split`; then applied to the ``worked``
  runs of every seed.

Each checker returns a :class:`~rlbook.exercises.CheckResult` and never
raises on a wrong answer.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from typing import cast

from rlbook.analysis.working import Point, gain_split
from rlbook.core import rewards, world
from rlbook.core.world import EOT, SEPARATOR, WorkedTask

from . import CheckResult, as_number, as_numbers, never_raises, not_a_function, not_answered, verdict
from .registry import Exercise, register

# ------------------------------------------------------------------ exercise 7.1: an outcome-only reward


def _variants(task: WorkedTask, rng: random.Random) -> list[tuple[str, str]]:
    """Answers to ``task`` that a policy might write, each with the kind of mistake it tests."""
    right, working = str(task.answer), task.working
    wrong = str(task.answer + rng.choice((-10, -1, 1, 10)))
    bad_working = working.replace("=", "=1", 1)  # a wrong first column, the final number still right
    return [
        (f"{right}{EOT}", "direct"),
        (f"{working}{SEPARATOR}{right}{EOT}", "worked"),
        (f"{bad_working}{SEPARATOR}{right}{EOT}", "wrong working"),
        (f"{working}{SEPARATOR}{wrong}{EOT}", "wrong final"),
        (f"{wrong}{EOT}", "wrong direct"),
        (f"{working}{SEPARATOR}{right}", "no end mark"),
        (f"{right}", "no end mark"),
        (f"{working}{EOT}", "no final number"),
        (f"{right}{EOT}{right}", "after the end mark"),
        (f"0{right}{EOT}", "leading zero"),
        (f" {right}{EOT}", "stray character"),
        (f"{rng.choice('+=')}{right}{EOT}", "stray character"),
        (f"{working.rpartition('=')[0]}={right}{EOT}", "no separator"),
        (f"{working.replace(',', SEPARATOR)}{SEPARATOR}{right}{EOT}", "several separators"),
    ]


def _reward_cases(seed: int, count: int = 12) -> list[tuple[str, str, str, float]]:
    """(prompt, completion, kind, reward) on randomly drawn held-out sums, rewarded by the book's verifier."""
    verify = rewards.get_verifier("exact")
    tasks = random.Random(seed).sample(cast(list[WorkedTask], world.split("heldout", "worked")), count)
    rng = random.Random(seed + 1)
    return [(t.prompt, text, kind, verify(t.prompt, text).reward) for t in tasks for text, kind in _variants(t, rng)]


def _reward_of(value) -> float | None:
    """A reward as a number: a float, an int or a bool (True pays 1); None for anything else, text included."""
    if isinstance(value, bool):
        return float(value)
    number = as_number(value)
    return number if number is not None and math.isfinite(number) else None


DIAGNOSES = {
    "wrong working": "it refused an answer whose working is wrong but whose final number is right: the reward is "
    "outcome-only, so read only the number after the last ';' and never check the columns",
    "worked": "it refused a right worked answer: the answer is the number after the last ';', not the first number",
    "no end mark": "it paid an answer that never wrote the end mark '#': the budget stopped it, so it earns 0",
    "after the end mark": "it paid an answer with text after the end mark: that answer is malformed",
    "no final number": "it paid an answer that never wrote a final number",
    "leading zero": "it paid a final number with a leading zero: the book's verifier (version 1.0) reads digits "
    "with no leading zero",
    "stray character": "it paid an answer with a character before its final number: the final number is the whole "
    "text after the last ';' (or the whole answer), digits only, so ' 85#', '+85#' and '=85#' earn 0",
    "no separator": "it paid working with no ';' whose last number is the sum: without a ';' the whole answer must be "
    "the number, so searching the text for the last number pays answers the verifier calls malformed",
    "several separators": "it refused a right answer whose working holds more than one ';': the answer is the "
    "number after the last ';', not the first",
}


@never_raises
def check_outcome_reward(fn: Callable | None, shown: Mapping | None = None, seed: int = 0) -> CheckResult:
    """Exercise 7.1: ``fn(prompt, completion) -> 1.0 or 0.0``, the worked world's outcome-only reward.

    Compared with the exact verifier on fourteen kinds of answer to held-out sums
    drawn with ``seed``; the likeliest mistake (checking the working, reading
    the first number, paying an unfinished answer) is named. A passing
    reward is then applied to ``shown``, the answers chapter 7 shows before
    and after RL (its facts' ``samples``), when given.
    """
    if fn is None:
        return not_answered("`reward`")
    if not callable(fn):
        return not_a_function("reward", fn)
    wrong_kinds = []
    for prompt, text, kind, want in _reward_cases(seed):
        try:
            returned = fn(prompt, text)
        except Exception as err:  # noqa: BLE001 - report the reader's error, never raise it
            return verdict(False, f"`reward({prompt!r}, {text!r})` raised {type(err).__name__}: {err}")
        if returned is None:
            return not_answered("`reward`")
        got = _reward_of(returned)
        if got is None:
            return verdict(
                False, f"`reward({prompt!r}, {text!r})` returned {returned!r:.40}; return a number, 1.0 or 0.0"
            )
        if got != want:
            wrong_kinds.append((kind, prompt, text, got, want))
    if wrong_kinds:
        kind, prompt, text, got, want = wrong_kinds[0]
        why = DIAGNOSES.get(kind, "compare it with the rules of the exercise")
        return verdict(False, f"`reward({prompt!r}, {text!r})` gave {got:g}, the verifier {want:g}: {why}")
    tail = "" if shown is None else _paid(fn, shown)
    return verdict(True, f"your reward agrees with the verifier on {len(_reward_cases(seed))} answers{tail}")


def _paid(fn: Callable, shown: Mapping) -> str:
    """How many of the shown answers, before and after RL, ``fn`` pays."""
    counts = []
    for when in ("before", "after"):
        answers = shown[when]
        paid = sum(a["count"] for a in answers if _reward_of(fn(shown["prompt"], a["text"])) == 1.0)
        counts.append(f"{paid} of {sum(a['count'] for a in answers)} {when} RL")
    return f"; on {shown['prompt']} it pays {counts[0]} and {counts[1]}"


def reward(prompt, completion):
    """Exercise 7.1's reference: read the sum from the prompt and only the final number from the answer."""
    a, b = (int(x) for x in prompt.strip("#=").split("+"))
    answer, mark, after = completion.partition("#")
    if not mark or after:
        return 0.0  # cut off by the budget, or text after the end mark
    final = answer.rpartition(";")[2]  # the working before the last ';' is never read
    if not final.isdigit() or (final.startswith("0") and final != "0"):
        return 0.0
    return 1.0 if int(final) == a + b else 0.0


# ------------------------------------------------------------------ exercise 7.2: where the gain came from


def _point(share: float, worked: float | None, direct: float | None) -> Point:
    """A checkpoint measurement with the given share of worked answers and each style's accuracy."""
    accuracy = share * (worked or 0.0) + (1 - share) * (direct or 0.0)
    return Point(0, accuracy, share, 0.0, worked, direct, 0.0, 0.0, share, 1)


def _as_reader(p: Point) -> dict:
    """What the reader's function is handed: the share, and each style's accuracy (0.0 where none was written)."""
    return {"share": p.share, "worked": p.accuracy_worked or 0.0, "direct": p.accuracy_direct or 0.0}


def _split_cases(seed: int, count: int = 30) -> list[tuple[Point, Point]]:
    """(before, after) pairs: both styles written before; after, sometimes only worked answers."""
    rng = random.Random(seed)
    cases = [
        (_point(0.5, 0.7, 0.4), _point(1.0, 0.9, None)),
        (_point(0.2, 0.6, 0.5), _point(0.2, 0.8, 0.5)),
        (_point(0.6, 0.8, 0.3), _point(0.9, 0.8, 0.3)),
    ]
    for _ in range(count):
        after = rng.choice((1.0, round(rng.uniform(0.05, 0.95), 3)))
        cases.append(
            (
                _point(round(rng.uniform(0.05, 0.95), 3), rng.random(), rng.random()),
                _point(after, rng.random(), None if after == 1.0 else rng.random()),
            )
        )
    return cases


def _split_problem(fn: Callable, cases: list[tuple[Point, Point]], got: list[tuple[float, float]]) -> str | None:
    """None when every split matches; else the likeliest mistake, named."""
    want = [gain_split(b, a) for b, a in cases]
    if all(
        math.isclose(g[0], w.switch, abs_tol=1e-9) and math.isclose(g[1], w.execution, abs_tol=1e-9)
        for g, w in zip(got, want)
    ):
        return None
    if all(
        math.isclose(g[1], w.switch, abs_tol=1e-9) and math.isclose(g[0], w.execution, abs_tol=1e-9)
        for g, w in zip(got, want)
    ):
        return "the two parts are swapped: return (switch, execution)"
    if not all(math.isclose(g[0] + g[1], w.total, abs_tol=1e-9) for g, w in zip(got, want)):
        b, a = next(
            (b, a) for (b, a), g, w in zip(cases, got, want) if not math.isclose(g[0] + g[1], w.total, abs_tol=1e-9)
        )
        return (
            f"for before {_as_reader(b)} and after {_as_reader(a)} your parts add up to a change of "
            f"{sum(fn(_as_reader(b), _as_reader(a))):+.4f}, not {a.accuracy - b.accuracy:+.4f}: the two parts "
            "must add up to the change in accuracy"
        )
    return (
        "your parts add up to the change, but split it another way: weight the change in shares by the "
        "accuracies before, and the change in accuracies by the shares after"
    )


@never_raises
def check_gain_split(fn: Callable | None, real: Sequence | None = None, seed: int = 0) -> CheckResult:
    """Exercise 7.2: ``fn(before, after) -> (switch, execution)``, a change in accuracy split in two.

    ``before`` and ``after`` are dicts with ``share`` (of worked answers) and
    each style's accuracy, ``worked`` and ``direct`` (0.0 for a style not
    written). Compared with :func:`rlbook.analysis.working.gain_split` on
    cases drawn with ``seed``; swapped parts and parts that do not add up are
    named. A passing split is then applied to ``real``, the (before, after)
    dicts of ``worked`` on each seed, when given.
    """
    if fn is None:
        return not_answered("`split_gain`")
    if not callable(fn):
        return not_a_function("split_gain", fn)
    cases = _split_cases(seed)
    got = []
    for before, after in cases:
        try:
            returned = fn(_as_reader(before), _as_reader(after))
        except Exception as err:  # noqa: BLE001 - report the reader's error, never raise it
            return verdict(False, f"`split_gain` raised {type(err).__name__} for before {_as_reader(before)}: {err}")
        if returned is None:
            return not_answered("`split_gain`")
        pair = as_numbers(returned)
        if pair is None or len(pair) != 2 or not all(math.isfinite(x) for x in pair):
            return verdict(False, f"`split_gain` returned {returned!r:.60}; return two numbers, (switch, execution)")
        got.append((pair[0], pair[1]))
    problem = _split_problem(fn, cases, got)
    if problem:
        return verdict(False, problem)
    tail = ""
    if real:
        # a split that passed the cases above returns two numbers
        parts = cast(list[list[float]], [as_numbers(fn(dict(b), dict(a))) for b, a in real])
        tail = "; on worked, seed by seed, " + ", ".join(
            f"{p[0]:+.2f} from the switch and {p[1]:+.2f} from execution" for p in parts
        )
    return verdict(True, f"your split matches on {len(cases)} cases{tail}")


def split_gain(before, after):
    """Exercise 7.2's reference: accuracy is the sum over styles of share times accuracy, so its change splits
    into the change of shares (at the accuracies before) and the change of accuracies (at the shares after)."""
    switch = execution = 0.0
    for style in ("worked", "direct"):
        share_before = before["share"] if style == "worked" else 1 - before["share"]
        share_after = after["share"] if style == "worked" else 1 - after["share"]
        switch += (share_after - share_before) * before[style]
        execution += share_after * (after[style] - before[style])
    return switch, execution


def _worked_runs():
    """The (before, after) dicts of ``worked`` on every seed, as chapter 7's facts hold them."""
    from rlbook import book

    return book.load("working", check=False).exercise.split


def _shown_samples():
    """The answers chapter 7 shows, before and after RL."""
    from rlbook import book

    return book.load("working", check=False).samples


register(Exercise("outcome-reward", "working", check_outcome_reward, reward, inputs=lambda: (_shown_samples(),)))
register(Exercise("gain-split", "working", check_gain_split, split_gain, inputs=lambda: (_worked_runs(),)))
