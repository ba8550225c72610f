"""Checkers for chapter 11's exercises (a learned process reward model), each registered with its reference solution.

- :func:`check_process_rule` (Exercise 11.1): the exact process rule for a
  whole worked-world answer, then applied to the last answers of the three
  RL runs, beside the outcome verifier's verdicts.
- :func:`check_step_aggregate` (Exercise 11.2): one score per answer from the
  step scorer's probabilities, the smallest or their product, then applied to
  the same answers, beside the reader's guess of the mean product of
  ``worked``'s answers.

Each checker returns a :class:`~rlbook.exercises.CheckResult` and never
raises on a wrong answer.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import numpy as np
import torch

from rlbook.core import process_model
from rlbook.core.world import WorkedTask

from . import CheckResult, as_number, call, named_by, never_raises, not_a_function, not_answered, verdict
from .registry import Exercise, Mistake, register

TOL = 1e-9
RUNS = ("worked", "process-exact", "prm")
"""The runs whose last answers the checkers read, in the chapter's order."""

# ------------------------------------------------------------------ exercise 11.1: the exact process rule


def _rule_cases() -> list[tuple[str, str]]:
    """Answers that tell the rule from its usual slips: right and wrong, worked and direct, whole and cut short."""
    right = WorkedTask((47, 38), "worked")
    carry_free = WorkedTask((21, 34), "worked")
    return [
        (right.prompt, right.completion),  # every step right
        (right.prompt, "85#"),  # direct and right
        (right.prompt, "84#"),  # direct and wrong
        (right.prompt, "7+8=15,4+3=7;85#"),  # the carry left out of the tens column, a right number
        (right.prompt, "7+8=15,4+3+1=8;84#"),  # right columns, a wrong number
        (right.prompt, "7+8=15;85#"),  # the tens column missing
        (right.prompt, "7+8=15,4+3+1=8,0+0=0;85#"),  # a column too many
        (right.prompt, "7+8=15,4+3+1=8;8"),  # cut off before the end mark
        (carry_free.prompt, carry_free.completion),
        (carry_free.prompt, "1+4=5,2+3+1=6;55#"),  # a carry that is not there
    ]


def _outcome_only(prompt: str, answer: str) -> bool:
    return process_model.step_labels(prompt, answer)[-1]  # the number's label is the outcome verifier's verdict


def _columns_only(prompt: str, answer: str) -> bool:
    labels = process_model.step_labels(prompt, answer)
    return all(labels[:-1]) if len(labels) > 1 else labels[-1]


def _worked_only(prompt: str, answer: str) -> bool:
    return "+" in answer and process_model.process_right(prompt, answer)


def _any_columns(prompt: str, answer: str) -> bool:
    return all(process_model.step_labels(prompt, answer))


RULE_SLIPS: tuple[tuple[Callable[[str, str], bool], str], ...] = (
    (_outcome_only, "your rule reads the number only: that is the outcome verifier, which never looks at a column"),
    (_columns_only, "your rule checks the columns only: a worked answer with right columns can still end wrong"),
    (_worked_only, "your rule refuses every direct answer: a direct answer's one step is its number"),
    (_any_columns, "your rule accepts a worked answer with a column missing or one too many: it needs both columns"),
)
"""Rules a reader may write instead of the exact process rule, each with what the check says of it."""


def _answers(facts: Mapping) -> list[tuple[str, str, str]]:
    """The runs' last answers the page shows: (run, prompt, answer)."""
    return [(run, a["prompt"], a["answer"]) for run in RUNS for a in facts[run]]


@never_raises
def check_process_rule(fn: Callable | None, answers: Mapping | None = None) -> CheckResult:
    """Exercise 11.1: ``fn(prompt, answer)`` must say whether the exact process rule accepts the answer.

    Tried on made-up answers that tell it from its usual slips, then applied
    to ``answers`` (the shown seed's last answers of each RL run), beside
    the outcome verifier's verdicts.
    """
    if fn is None:
        return not_answered("`process_right`")
    if not callable(fn):
        return not_a_function("process_right", fn)
    cases = _rule_cases()
    got = []
    for prompt, answer in cases:
        value, error = call(fn, prompt, answer)
        if error:
            return verdict(False, error)
        if not isinstance(value, bool):
            return verdict(False, f"return True or False, not {value!r} (for {answer!r} to {prompt!r})")
        got.append(value)
    truth = [process_model.process_right(p, a) for p, a in cases]
    if got != truth:
        for wrong, message in RULE_SLIPS:
            if got == [wrong(p, a) for p, a in cases]:
                return verdict(False, message)
        first = next(i for i, (g, t) in enumerate(zip(got, truth)) if g != t)
        prompt, answer = cases[first]
        return verdict(False, f"for {answer!r} to {prompt!r} the rule says {truth[first]}, you said {got[first]}")
    tail = "" if answers is None else _on_runs(fn, answers)
    return verdict(True, f"your rule agrees on {len(cases)} answers{tail}")


def _on_runs(fn: Callable, answers: Mapping) -> str:
    """How many of each run's shown answers the reader's rule accepts, and how many the outcome verifier does."""
    parts = []
    for run in RUNS:
        shown = [(a["prompt"], a["answer"]) for a in answers[run]]
        accepted = sum(bool(fn(p, a)) for p, a in shown)
        right = sum(process_model.step_labels(p, a)[-1] for p, a in shown)
        parts.append(f"{run} {accepted} of {len(shown)} (the outcome verifier: {right})")
    return "; of the last answers shown, your rule accepts " + ", ".join(parts)


def process_right(prompt, answer):
    """Exercise 11.1's reference: every step right, and both columns written when there is working."""
    a, b = (int(x) for x in prompt.strip("#=").split("+"))
    carry = int(a % 10 + b % 10 >= 10)
    units = f"{a % 10}+{b % 10}={a % 10 + b % 10}"
    tens = f"{a // 10}+{b // 10}" + (f"+{carry}" if carry else "") + f"={a // 10 + b // 10 + carry}"
    number = str(a + b) + "#"
    if ";" not in answer:
        return answer == number
    working, _, tail = answer.rpartition(";")
    return working.split(",") == [units, tens] and tail == number


# ------------------------------------------------------------------ exercise 11.2: one score from the steps


def _aggregate_cases() -> list[tuple[list[float], str]]:
    """Step probabilities of made-up answers, one step to four, and the aggregate asked for."""
    steps = [[0.9], [0.9, 0.5, 0.8], [0.2, 0.99, 0.99], [0.7, 0.7, 0.7, 0.7]]
    return [(s, how) for s in steps for how in process_model.AGGREGATES]


def _score(steps: list[float], how: str) -> float:
    """The truth: :func:`rlbook.core.process_model.answer_score` of one answer."""
    return float(process_model.answer_score(np.array(steps), torch.zeros(len(steps), dtype=torch.long), 1, how)[0])


AGGREGATE_SLIPS: tuple[tuple[Callable[[list[float], str], float], str], ...] = (
    (lambda s, how: s[-1], "you read the last step only: that is a judge of the outcome, not of the process"),
    (lambda s, how: sum(s) / len(s), "you averaged the steps: one wrong step among right ones barely moves a mean"),
    (
        lambda s, how: max(s) if how == "min" else math.prod(s),
        "your min takes the largest step: an answer is as good as its weakest step",
    ),
    (
        lambda s, how: min(s) if how == "min" else sum(math.log(p) for p in s),
        "your product is a sum of logarithms: take the product itself, a probability",
    ),
)
"""Scores a reader may compute instead, each with what the check says of it."""


@never_raises
def check_step_aggregate(fn: Callable | None, answers: Mapping | None = None, predicted=None) -> CheckResult:
    """Exercise 11.2: ``fn(steps, how)`` must turn an answer's step probabilities into one score, the smallest
    (``how="min"``) or their product (``"product"``).

    Tried on made-up answers, then applied to the scorer's probabilities of
    ``answers`` (those of Exercise 11.1), beside the reader's ``predicted``
    mean product of ``worked``'s answers.
    """
    if fn is None:
        return not_answered("`answer_score`")
    if not callable(fn):
        return not_a_function("answer_score", fn)
    cases = _aggregate_cases()
    got = []
    for steps, how in cases:
        value, error = call(fn, list(steps), how)
        if error:
            return verdict(False, error)
        try:
            got.append(float(value))
        except (TypeError, ValueError):
            return verdict(False, f"return one number per answer, not {value!r}")
    for wrong, message in AGGREGATE_SLIPS:
        if all(abs(g - wrong(s, h)) < TOL for g, (s, h) in zip(got, cases)):
            return verdict(False, message)
    for g, (steps, how) in zip(got, cases):
        if abs(g - _score(steps, how)) > TOL:
            return verdict(False, f"for steps {steps} and {how!r} expected {_score(steps, how):.4f}, got {g:.4f}")
    tail = "" if answers is None else _scored(fn, answers, predicted)
    return verdict(True, f"your scores match on {len(cases)} answers{tail}")


def _scored(fn: Callable, answers: Mapping, predicted) -> str:
    """The reader's mean smallest-step and product scores of each run's shown answers, beside the guess."""
    means = {
        run: [
            sum(float(fn(list(a["steps"]), how)) for a in answers[run]) / len(answers[run])
            for how in ("min", "product")
        ]
        for run in RUNS
    }
    said = "; the scorer's mean scores of the last answers shown, smallest step and product: " + ", ".join(
        f"{run} {low:.2f} and {product:.2f}" for run, (low, product) in means.items()
    )
    guess = as_number(predicted)
    if guess is not None:
        said += f". You predicted {guess:g} for worked's mean product"
    return said


def answer_score(steps, how):
    """Exercise 11.2's reference: the smallest step probability, or their product."""
    if how == "min":
        return min(steps)
    return math.prod(steps)


# ------------------------------------------------------------------ registration


def _facts(seeds: tuple[int, ...]):
    """The shown seed's last answers of each RL run, with the scorer's step probabilities (the page's cells hand
    them to the checkers)."""
    from rlbook import book

    return book.load("process", seeds, check=False).exercise


MISTAKES: dict[str, tuple[Mistake, ...]] = {
    "process-rule": tuple(Mistake(wrong, named_by(message)) for wrong, message in RULE_SLIPS),
    "step-aggregate": tuple(Mistake(wrong, named_by(message)) for wrong, message in AGGREGATE_SLIPS),
}
"""Chapter 11's named mistakes, by exercise, from its checkers' tables."""

register(
    Exercise(
        "process-rule",
        "process",
        check_process_rule,
        process_right,
        inputs=lambda seeds: (_facts(seeds),),
        mistakes=MISTAKES["process-rule"],
    )
)
register(
    Exercise(
        "step-aggregate",
        "process",
        check_step_aggregate,
        answer_score,
        inputs=lambda seeds: (_facts(seeds),),
        mistakes=MISTAKES["step-aggregate"],
    )
)

__all__ = ["MISTAKES", "answer_score", "check_process_rule", "check_step_aggregate", "process_right"]
