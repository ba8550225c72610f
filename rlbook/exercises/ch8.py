"""Checks for chapter 8's exercises: checkpoints, evaluation and the run record.

- Exercise 8.1: :func:`check_test_pick_gap`, a prediction, then the
  measurement, of how much higher a checkpoint picked on the test prompts
  scores on them than the one picked on validation, on ``main`` for every
  seed; and
  :func:`check_pick_and_score`, the selection carried out on real checkpoint
  records and on copies with one part changed behind the reader's back;
- Exercise 8.2 (a comparison function that pairs prompts and refuses
  unmatched settings) lives in :mod:`rlbook.exercises.matched`, and
  exercises 8.3 and 8.4 (the run record and a retained-capability test) in
  :mod:`rlbook.exercises.reporting` and Exercise 8.5 (reward versioning) in
  :mod:`rlbook.exercises.versioning`; all are re-exported here, so the
  chapter calls them as ``ch8.check_...``.

Every check prints and returns a :class:`~rlbook.exercises.CheckResult`; none
raises on a wrong answer. Each exercise is registered with its reference
solution at the bottom of its module.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import cast

import numpy as np

from rlbook import runs
from rlbook.analysis import selection
from rlbook.book import phrasing
from rlbook.book._shown import shown_seed
from rlbook.core.stats import mean_with_ci

from . import CheckResult, as_count, as_number, as_numbers, never_raises, not_a_function, not_answered, verdict
from .matched import check_matched_comparison, compare
from .registry import Exercise, Mistake, register
from .reporting import (
    SHOWN,
    TEMPLATE,
    check_record_review,
    check_retained_test,
    my_retained_test,
    record_reviews,
    review,
)
from .versioning import (
    VERSIONING_CASES,
    check_changed_advantages,
    check_reward_versioning,
    count_changed_advantages,
    versioning,
)

__all__ = [
    "MISTAKES",
    "TEMPLATE",
    "VERSIONING_CASES",
    "check_changed_advantages",
    "check_matched_comparison",
    "check_pick_and_score",
    "check_record_review",
    "check_retained_test",
    "check_reward_versioning",
    "check_test_pick_gap",
    "compare",
    "count_changed_advantages",
    "my_retained_test",
    "pick_and_score",
    "pick_gap",
    "record_reviews",
    "review",
    "versioning",
]

# ------------------------------------------------------------------ exercise 8.1: predict, then measure the gap


def _gap_facts(evals: list[dict]) -> dict:
    """What Exercise 8.1's gap is made of on one run's checkpoint records: the test pick (the best test accuracy,
    earliest on ties), the validation picks (every step tied for the best validation accuracy) and the gap each
    of them gives (the test pick's test accuracy minus theirs)."""
    test = {e["step"]: _mean(e, "test") for e in evals}
    validation = {e["step"]: _mean(e, "validation") for e in evals}
    best = max(validation.values())
    winners = [step for step, v in validation.items() if math.isclose(v, best, abs_tol=1e-12)]
    test_pick = max(test, key=lambda step: (test[step], -step))
    return {
        "test_pick": test_pick,
        "validation_pick": winners[0],
        "gaps": [test[test_pick] - test[step] for step in winners],
        "test": test,
        "validation": validation,
    }


def _gap_mistake(evals: list[dict], got: float) -> str:
    """What a wrong gap on ``evals`` seems to have computed, for the message."""
    facts = _gap_facts(evals)
    test, validation = facts["test"], facts["validation"]
    best_test, pick = test[facts["test_pick"]], facts["validation_pick"]

    def picked_on(part: str) -> int:
        return max(evals, key=lambda e: (_mean(e, part), -e["step"]))["step"]

    candidates = (
        (
            -facts["gaps"][0],
            "your gap has the wrong sign: return the test pick's test accuracy minus the validation pick's",
        ),
        (
            best_test - test[evals[-1]["step"]],
            (
                "you compared the test pick with the last checkpoint; compare it with the checkpoint the validation "
                "prompts pick"
            ),
        ),
        (
            validation[pick] - test[pick],
            (
                "you subtracted the validation pick's test accuracy from its own validation accuracy: the two halves of "
                "the held-out prompts are not equally hard, so that difference measures the prompts, not the choice. "
                "Compare two test accuracies"
            ),
        ),
        (
            best_test - validation[pick],
            (
                "you subtracted the best validation accuracy from the best test accuracy; subtract the validation "
                "pick's test accuracy"
            ),
        ),
        (
            best_test - test[picked_on("heldout")],
            "you picked on all the held-out prompts, which include the test ones; pick on validation alone",
        ),
        (best_test - test[picked_on("train")], "you picked on the training reward; pick on the validation prompts"),
        (facts["test_pick"] - pick, "you returned a difference of steps; return a difference of test accuracies"),
    )
    for value, message in candidates:
        if math.isclose(got, value, abs_tol=1e-6):
            return message
    return (
        "take the step with the best test accuracy and the step with the best validation accuracy, and "
        "subtract the second's test accuracy from the first's"
    )


def _gap_of(fn: Callable, evals: list[dict]) -> float | str:
    """``fn(evals)`` on a copy, as a number, or a message saying why it is not one."""
    try:
        returned = fn(copy.deepcopy(evals))
    except Exception as err:  # noqa: BLE001 - the reader's code may raise anything
        return f"pick_gap raised {type(err).__name__}: {err}"
    got = as_number(returned)
    if got is None or not math.isfinite(got):
        return f"return one number, the gap in test accuracy; got {returned!r:.60}"
    return got


def _measured(evals: list[dict], label: str) -> str:
    """One run's gap in words: the two picks, their test accuracies, and the 95 % interval of the second."""
    facts = _gap_facts(evals)
    test, pick = facts["test"], facts["validation_pick"]
    entry = next(e for e in evals if e["step"] == pick)
    interval = mean_with_ci(selection.part_rates(entry, "test"))
    return (
        f"{label}: the step picked on the test prompts, {facts['test_pick']}, scores "
        f"{test[facts['test_pick']]:.3f} on them; the step picked on validation, {pick}, scores {test[pick]:.3f} "
        f"(95 % interval {interval.hi - interval.lo:.2f} wide): a gap of {facts['gaps'][0]:+.3f}"
    )


@never_raises
def check_test_pick_gap(fn: Callable | None, seeds=(SHOWN,), predicted=None) -> CheckResult:
    """Exercise 8.1, first part: ``fn(evals) -> gap``, how much higher the test accuracy of the checkpoint picked on
    the test prompts is than that of the checkpoint picked on validation.

    Run on ``main``'s stored evaluations (``run.evals``) for each of
    ``seeds``, and on a copy of the first seed's in which only the validation
    rates were reversed across checkpoints (so that the validation pick
    moves to the mirror-image step). Ties in validation accuracy may go either way. The likeliest
    mistakes (the wrong sign, the last checkpoint for the validation pick,
    the pick's validation accuracy for its test accuracy) are named. A
    passing gap is printed seed by seed beside ``predicted``, the reader's
    guess (None: no guess).
    """
    if fn is None:
        return not_answered("the function `pick_gap`")
    if not callable(fn):
        return not_a_function("pick_gap", fn)
    guess = as_number(predicted)
    if predicted is not None and (guess is None or not math.isfinite(guess)):
        return verdict(False, f"`predicted_gap` is {predicted!r:.40}: predict a number, the gap in test accuracy")
    if guess is not None and guess < 0:
        return verdict(
            False,
            f"you predict a gap of {guess:g}, but it cannot be negative: the step picked on the test prompts has "
            "the best test accuracy of all, the validation pick's included",
        )
    seeds = [cast(int, as_count(s)) for s in seeds]
    records = {f"main, seed {s}": runs.load("main", s).evals for s in seeds}
    first = _gap_of(fn, next(iter(records.values())))
    if first == f"return one number, the gap in test accuracy; got {None!r}":
        return not_answered("the function `pick_gap`")
    copied = f"a copy of main, seed {seeds[0]}, with its validation scores reversed across checkpoints"
    for label, evals in [*records.items(), (copied, _swapped(records[f"main, seed {seeds[0]}"], "validation"))]:
        got = _gap_of(fn, evals)
        if isinstance(got, str):
            return verdict(False, got)
        if not any(math.isclose(got, gap, abs_tol=1e-6) for gap in _gap_facts(evals)["gaps"]):
            return verdict(False, f"on {label} your gap is {got:+.3f}: {_gap_mistake(evals, got)}")
    gaps = [_gap_facts(evals)["gaps"][0] for evals in records.values()]
    said = "; ".join(_measured(evals, label) for label, evals in records.items())
    guessed = "" if guess is None else f". You predicted {guess:.3f}; the runs measured {phrasing.span(gaps, '.3f')}"
    return verdict(True, f"{said}{guessed}")


def pick_gap(evals):
    """Exercise 8.1's reference: the best test accuracy minus the test accuracy of the best validation step."""
    from rlbook.analysis.selection import part_rates

    def accuracy(entry, part):
        return part_rates(entry, part).mean()

    by_test = max(evals, key=lambda e: accuracy(e, "test"))
    by_validation = max(evals, key=lambda e: accuracy(e, "validation"))
    return accuracy(by_test, "test") - accuracy(by_validation, "test")


# ------------------------------------------------------------------ exercise 8.1: the selection carried out


def pick_and_score(evals):
    """Exercise 8.1's reference: pick on validation."""
    from rlbook.analysis.selection import part_rates

    def validation(entry):
        return part_rates(entry, "validation").mean()

    best = max(evals, key=validation)  # ties: the earliest
    return best["step"], part_rates(best, "test").mean()


def _mean(entry: dict, part: str) -> float:
    return (
        float(selection.part_rates(entry, part).mean())
        if part != "train"
        else float(np.mean(entry["train_per_prompt"]))
    )


def _swapped(evals: list[dict], part: str) -> list[dict]:
    """A copy of ``evals`` in which only ``part``'s rates are reversed across checkpoints (the rest untouched)."""
    doctored = copy.deepcopy(evals)
    if part == "train":
        for entry, source in zip(doctored, reversed(evals)):
            entry["train_per_prompt"] = list(source["train_per_prompt"])
        return doctored
    positions = selection.heldout_positions(part)
    for entry, source in zip(doctored, reversed(evals)):
        rates = list(entry["heldout_per_prompt"])
        for i in positions:
            rates[i] = source["heldout_per_prompt"][i]
        entry["heldout_per_prompt"] = rates
    return doctored


def _call(fn: Callable, evals: list[dict]) -> tuple[int, float] | str:
    """``fn(evals)`` on a copy, as (step, score), or a message saying why it is not one."""
    try:
        returned = fn(copy.deepcopy(evals))
    except Exception as err:  # noqa: BLE001 - the reader's code may raise anything
        return f"pick_and_score raised {type(err).__name__}: {err}"
    pair = as_numbers(returned) if isinstance(returned, (list, tuple)) else None
    if pair is None or len(pair) != 2 or as_count(pair[0]) is None or not math.isfinite(pair[1]):
        return f"return a pair (step, test_accuracy), got {returned!r:.60}"
    return cast(int, as_count(pair[0])), pair[1]  # not None: checked above


def _which_rule(evals: list[dict], step: int) -> str:
    """What a wrong pick seems to have been chosen by, for the message: every rule that picks ``step``, since on
    some runs one step has both the highest training reward and the best test accuracy."""
    rules = [
        words
        for part, words in (
            ("train", "the highest training reward (the signal the optimiser was pushing up)"),
            ("test", "the best test accuracy (chosen on the prompts you report on)"),
            ("heldout", "the best held-out accuracy, which includes the test prompts"),
        )
        if step == max(evals, key=lambda e: _mean(e, part))["step"]
    ]
    if rules:
        return f"step {step} has {' and '.join(rules)}"
    return f"step {step} does not have the best validation accuracy"


def _pick_problem(fn: Callable, evals: list[dict], name: str) -> str | None:
    """What is wrong with the reader's selection on one run's checkpoint records, or None."""
    got = _call(fn, evals)
    if isinstance(got, str):
        return got
    step, score = got
    best = max(_mean(e, "validation") for e in evals)
    winners = [e for e in evals if math.isclose(_mean(e, "validation"), best, abs_tol=1e-12)]
    if step not in [e["step"] for e in winners]:
        return f"on {name}, {_which_rule(evals, step)}. Pick by the validation prompts, which nothing else reads"
    entry = next(e for e in evals if e["step"] == step)
    if math.isclose(score, _mean(entry, "test"), abs_tol=1e-6):
        return None
    if math.isclose(score, _mean(entry, "validation"), abs_tol=1e-6):
        return (
            f"on {name} you report {score:.3f}, the pick's validation accuracy: the best of {len(evals)} tries, "
            "flattered by the choice itself. Report its accuracy on the test prompts"
        )
    if math.isclose(score, _mean(entry, "heldout"), abs_tol=1e-6):
        return (
            f"on {name} you report {score:.3f}, the pick's held-out accuracy, half of which is the validation "
            "prompts that chose it. Report the test prompts alone"
        )
    return f"on {name} you report {score:.3f}; report the mean accuracy of the picked step on the test prompts"


@never_raises
def check_pick_and_score(fn: Callable | None, seed: int = SHOWN) -> CheckResult:
    """Exercise 8.1, second part: ``fn(evals) -> (step, test_accuracy)`` on real and doctored checkpoint records.

    Run on ``main``'s and ``exploit``'s stored evaluations (``run.evals``) for
    ``seed``, then on copies in which only the test rates, only the training
    rewards, or only the validation rates were reversed across checkpoints: the
    pick must follow the validation rates and nothing else, and the number
    reported must be the pick's mean test accuracy. Ties in validation
    accuracy may go either way.
    """
    if fn is None:
        return not_answered("the function `pick_and_score`")
    if not callable(fn):
        return not_a_function("pick_and_score", fn)
    records = {name: runs.load(name, seed).evals for name in ("main", "exploit")}
    if _call(fn, records["main"]) == f"return a pair (step, test_accuracy), got {None!r}":
        return not_answered("the function `pick_and_score`, returning (step, test_accuracy)")
    for name, evals in records.items():
        problem = _pick_problem(fn, evals, name)
        if problem:
            return verdict(False, problem)
        original = _call(fn, evals)[0]
        for part, reading in (
            ("test", ("you chose on the prompts you report on, so the score you report is flattered by the choice")),
            ("train", "your pick follows the training reward, the signal a hacked reward inflates"),
        ):
            moved = _call(fn, _swapped(evals, part))
            if isinstance(moved, str) or moved[0] != original:
                return verdict(
                    False,
                    f"on a copy of {name}'s record where only the {part} scores changed, your "
                    f"pick moved from step {original} to {moved if isinstance(moved, str) else moved[0]}:"
                    f" {reading}",
                )
        problem = _pick_problem(fn, _swapped(evals, "validation"), f"a copy of {name} with other validation scores")
        if problem:
            return verdict(False, problem)
    step, score = cast(tuple[int, float], _call(fn, records["main"]))  # main's pick passed _pick_problem
    return verdict(
        True,
        f"you pick main's step {step} and report {score:.3f} on the test prompts; the pick follows "
        "the validation prompts alone, on main, on exploit and on copies with other scores",
    )


def _picked_by(part: str, report: str = "test") -> Callable:
    """Exercise 8.1's selection picking the step with the best score on ``part`` and reporting its mean accuracy
    on ``report``: validation and test is the reference, any other pair a mistake the check names."""

    def pick(evals):
        best = max(evals, key=lambda e: _mean(e, part))
        return best["step"], _mean(best, report)

    return pick


def _gap_to_the_last(evals):
    """Exercise 8.1's gap measured against the last checkpoint instead of the validation pick."""
    return max(_mean(e, "test") for e in evals) - _mean(evals[-1], "test")


def _gap_to_its_own_validation(evals):
    """Exercise 8.1's gap taken as the validation pick's validation accuracy minus its test accuracy."""
    pick = max(evals, key=lambda e: _mean(e, "validation"))
    return _mean(pick, "validation") - _mean(pick, "test")


MISTAKES: dict[str, tuple[Mistake, ...]] = {
    "test-pick-gap": (
        Mistake(lambda evals: -pick_gap(evals), "your gap has the wrong sign"),
        Mistake(_gap_to_the_last, "you compared the test pick with the last checkpoint"),
        Mistake(_gap_to_its_own_validation, "from its own validation accuracy"),
    ),
    "pick-and-score": (
        Mistake(_picked_by("train"), "training reward"),
        Mistake(_picked_by("test"), "the prompts you report on"),
        Mistake(_picked_by("validation", "validation"), "the pick's validation accuracy"),
        Mistake(_picked_by("validation", "heldout"), "the pick's held-out accuracy"),
    ),
}
"""Exercise 8.1's named mistakes, by exercise: each a plausible wrong answer and the words its checker names it
with (Exercises 8.2 to 8.5 register theirs in :mod:`.matched`, :mod:`.reporting` and :mod:`.versioning`)."""

for _exercise in (
    Exercise(
        "test-pick-gap",
        "evaluation",
        check_test_pick_gap,
        pick_gap,
        inputs=lambda seeds: (seeds,),
        mistakes=MISTAKES["test-pick-gap"],
    ),
    Exercise(
        "pick-and-score",
        "evaluation",
        check_pick_and_score,
        pick_and_score,
        inputs=lambda seeds: (shown_seed(seeds),),
        mistakes=MISTAKES["pick-and-score"],
    ),
):
    register(_exercise)
