"""Checkers of chapter 3's Exercise 3.1 (from reward to gradient): credit in a longer trajectory.

- :func:`check_split_credit`: per-character outcome and process credit of a
  multi-step answer, tested on the chapter's real group and on random answers
  against :func:`rlbook.analysis.credit.split_credit`;
- :func:`check_credit_reading`: which characters of the real answer each
  credit pushes down.

Their reference solutions are in :mod:`rlbook.exercises.ch3`, which registers
the exercise and through which the page calls these checkers. Each check
returns a :class:`~rlbook.exercises.CheckResult` whose message says what
differs, and never raises on a wrong answer.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import cast

from rlbook.analysis.credit import split_credit, token_steps, visible

from . import CheckResult, as_count, as_numbers, call, close, never_raises, not_a_function, not_answered, verdict


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
        got, error = call(fn, completion, outcome_adv, step_adv)
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
        if not close(got["outcome"], want["outcome"]):
            return verdict(
                False,
                f"{completion!r}: under an outcome reward every generated character gets the same "
                f"advantage, {outcome_adv:+.3f}; you gave {got['outcome']}",
            )
        if not close(got["process"], want["process"]):
            steps = token_steps(completion, len(step_adv))
            wrong = [i for i, (a, b) in enumerate(zip(got["process"], want["process"])) if abs(a - b) > 1e-4]
            return verdict(
                False,
                f"{completion!r}: process credit differs at character(s) {wrong}. Each character "
                f"takes the advantage of its step; the steps here are {steps} (a comma or end mark "
                f"belongs to the step it closes)",
            )
    return verdict(True, f"outcome and process credit match on {len(cases)} answers")


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
