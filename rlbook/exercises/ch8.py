"""Checks for chapter 8's exercises: checkpoints, evaluation and the run record.

- Exercise 8.1: :func:`check_evaluation_plan`, the decisions of an
  independent evaluation, run on ``base`` and ``main``; and
  :func:`check_pick_and_score`, the selection carried out on real checkpoint
  records and on copies with one part changed behind the reader's back;
- Exercise 8.2 (a comparison function that pairs prompts and refuses
  unmatched settings) lives in :mod:`rlbook.exercises.matched`, and
  exercises 8.3 to 8.5 (the run record, a retained-capability test and
  reward versioning) in :mod:`rlbook.exercises.reporting`; both are
  re-exported here, so the chapter calls them as ``ch8.check_...``.

Every check prints and returns a :class:`~rlbook.exercises.CheckResult`; none
raises on a wrong answer. Each exercise is registered with its reference
solution at the bottom of its module.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Callable
from typing import cast

import numpy as np

from rlbook import runs
from rlbook.analysis import selection
from rlbook.core import rewards as rw
from rlbook.core.evaluate import evaluate
from rlbook.core.world import split

from . import CheckResult, as_count, as_numbers, never_raises, not_a_function, not_answered, verdict
from .matched import check_matched_comparison, compare
from .registry import Exercise, register
from .reporting import (
    SHOWN,
    TEMPLATE,
    VERSIONING_CASES,
    check_changed_advantages,
    check_record_review,
    check_retained_test,
    check_reward_versioning,
    count_changed_advantages,
    my_retained_test,
    record_reviews,
    review,
    versioning,
)

__all__ = [
    "HELD_OUT",
    "PLAN_KEYS",
    "TEMPLATE",
    "VERSIONING_CASES",
    "check_changed_advantages",
    "check_evaluation_plan",
    "check_matched_comparison",
    "check_pick_and_score",
    "check_record_review",
    "check_retained_test",
    "check_reward_versioning",
    "compare",
    "count_changed_advantages",
    "main_checkpoint_steps",
    "my_retained_test",
    "pick_and_score",
    "plan_evaluation",
    "record_reviews",
    "review",
    "versioning",
]

PLAN_KEYS = ("select_on", "report_on", "verifier", "verifier_version", "checkpoints", "base_same_settings")
"""The decisions an independent evaluation plan makes (exercise 8.1); its sampling settings are the record's."""

TRAINED_ON = ("sft", "train", "all")
"""Splits that contain prompts the policy trained on."""

HELD_OUT = ("validation", "test")
"""The held-out splits of the single-step world; ``heldout`` is the two together."""

EVERY = {"all", "every", "each", "everything"}
"""Words a reader uses for "every checkpoint" (exercise 8.1)."""
CHOOSING = {
    "best", "last", "final", "latest", "first", "top", "highest", "lowest", "selected", "chosen", "picked",
    "winning", "except", "but", "only", "not", "no", "without", "other", "some", "few", "half", "most",
}  # fmt: skip
"""Words that pick some checkpoints rather than all: "the best one", "every checkpoint but the last"."""


# ------------------------------------------------------------------ exercise 8.1: the plan


def _splits(value) -> set[str] | None:
    """A plan's ``select_on`` or ``report_on`` as a set of split names: a name, or a list or tuple of names."""
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, (list, tuple, set, frozenset)) or not names or not all(isinstance(n, str) for n in names):
        return None
    found = set()
    for name in names:
        name = name.strip().lower()
        found |= set(HELD_OUT) if name == "heldout" else {name}
    return found


def _verifier_problem(plan: dict) -> str | None:
    """What is wrong with a plan's verifier and its version; ``"exact@1.0"`` may carry the version itself."""
    name, _, version = str(plan["verifier"]).partition("@")
    if not isinstance(plan["verifier"], str) or name.strip().lower() != "exact":
        return f"verifier {plan['verifier']!r}: evaluate with the exact verifier, not with one a policy can game"
    pinned = str(plan["verifier_version"]).strip() if plan["verifier_version"] is not None else None
    if pinned not in rw.ExactVerifier.VERSIONS:
        return (
            f"verifier_version {plan['verifier_version']!r}: pin one of {tuple(rw.ExactVerifier.VERSIONS)}, "
            "the same for every checkpoint"
        )
    if version and version.strip() != pinned:
        return f"verifier {plan['verifier']!r} and verifier_version {pinned!r} name two different versions"
    return None


def main_checkpoint_steps() -> list[int]:
    """The steps at which ``main`` saves a checkpoint, from its settings (0, every ``checkpoint_every``, the last)."""
    cfg = runs.spec("main").rl_config()
    return [0] + [s for s in range(1, cfg.steps + 1) if s % cfg.checkpoint_every == 0 or s == cfg.steps]


def _says_every(text: str) -> bool:
    """Whether ``text`` says "every checkpoint" in a reader's words ("all", "each one", "every checkpoint of
    main"): a word for every, and no word that picks some of them (:data:`CHOOSING`)."""
    words = set(re.findall(r"[a-z]+", text.lower()))
    return bool(words & EVERY) and not words & CHOOSING


def _picks_some(text: str) -> bool:
    """Whether ``text`` names checkpoints by a choice ("the best", "the last one")."""
    return bool(set(re.findall(r"[a-z]+", text.lower())) & CHOOSING)


def _checkpoints_problem(value) -> str | None:
    """Why ``checkpoints`` does not say "every checkpoint of main", or None when it does."""
    if value is True or (isinstance(value, str) and _says_every(value)):
        return None
    if isinstance(value, (list, tuple, range, set)):
        steps = [as_count(x) for x in value]
        if None in steps:
            return "checkpoints: list the steps as whole numbers, or write 'all'"
        left_out = [s for s in main_checkpoint_steps() if s not in steps]
        if not left_out:
            return None
        return (
            f"checkpoints: your list leaves out step(s) {', '.join(map(str, left_out))}. Evaluate every "
            "checkpoint the same way, so that the alternatives a rule passes over can be reported"
        )
    if isinstance(value, str) and _picks_some(value):
        return (
            f"checkpoints={value!r}: which checkpoint is {value.strip()!r} is itself decided by the evaluation, "
            "so every checkpoint must be evaluated first; write 'all'"
        )
    if isinstance(value, str) and value.strip():
        return f"checkpoints={value!r}: say which ones, every checkpoint ('all') or a list of steps"
    return "checkpoints: which checkpoints get the evaluation? Every one of them ('all')"


def _split_problems(plan: dict) -> list[str]:
    problems, chosen = [], {}
    for key in ("select_on", "report_on"):
        chosen[key] = found = _splits(plan[key])
        if found is None:
            problems.append(f"{key}={plan[key]!r}: name a split, e.g. 'validation', or a list of splits")
        elif found & set(TRAINED_ON):
            problems.append(f"{key}={plan[key]!r} contains prompts the policy trained on; use a held-out split")
        elif not found <= set(HELD_OUT):
            problems.append(f"{key}={plan[key]!r} is not a split; the held-out splits are 'validation' and 'test'")
    # no problems: neither split is None
    if not problems and cast(set[str], chosen["select_on"]) & cast(set[str], chosen["report_on"]):
        problems.append(
            "the split that chooses the checkpoint must not overlap the split that reports its score: "
            "a score on the prompts that chose the pick is flattered by the choice"
        )
    return problems


def _plan_problems(plan: dict) -> list[str]:
    """Everything wrong with an evaluation plan, most basic first (exercise 8.1)."""
    missing = [k for k in PLAN_KEYS if k not in plan]
    if missing:
        return [f"the plan lacks {', '.join(map(repr, missing))}"]
    problems = _split_problems(plan)
    problem = _verifier_problem(plan)
    if problem:
        problems.append(problem)
    problem = _checkpoints_problem(plan["checkpoints"])
    if problem:
        problems.append(problem)
    if not (isinstance(plan["base_same_settings"], (bool, np.bool_)) and plan["base_same_settings"]):
        problems.append(
            "base_same_settings must be True: the pre-RL policy gets exactly the same evaluation, or the "
            "gain mixes a change of policy with a change of evaluation"
        )
    return problems


@never_raises
def check_evaluation_plan(plan: dict | None, seed: int = SHOWN) -> CheckResult:
    """Exercise 8.1, first part: check an evaluation plan's decisions, then run it on ``base`` and ``main``.

    The plan is a dict with the keys of :data:`PLAN_KEYS`. Splits may be a
    name or a list of names, the verifier ``"exact"`` or ``"exact@1.0"``, and
    ``checkpoints`` any reader's word for every checkpoint (``"all"``,
    ``"every"``, ``"every checkpoint"``, ``True``) or the list of every step.
    When it is sound, the check evaluates the pre-RL policy and ``main``'s
    last checkpoint on the report split with the sampling settings of
    ``main``'s record, and prints the matched difference.
    """
    if plan is None or (isinstance(plan, dict) and plan and all(v is None for v in plan.values())):
        return not_answered("the dict `evaluation_plan`")
    if not isinstance(plan, dict):
        return verdict(False, f"`evaluation_plan` must be a dict, got {type(plan).__name__}")
    problems = _plan_problems(plan)
    if problems:
        return verdict(False, "; ".join(problems))
    main = runs.load("main", seed)
    settings = main.record["evaluations"][0]
    report = sorted(cast(set[str], _splits(plan["report_on"])))  # a sound plan names its splits
    tasks = [t for name in report for t in split(name)]
    verifier = rw.ExactVerifier(str(plan["verifier_version"]).strip())
    results = [
        evaluate(
            main.policy(step),
            tasks,
            n=settings["n"],
            temperature=settings["temperature"],
            budget=settings["token_budget"],
            verifier=verifier,
            seed=seed,
        )
        for step in (main.steps[-1], 0)
    ]
    gain = selection.matched_difference(results[0], results[1], seed=seed)
    return verdict(
        True,
        f"a sound plan. Run on {len(tasks)} {' + '.join(report)} prompts with the record's settings "
        f"({settings['n']} samples at T = {settings['temperature']:g}): main step {main.steps[-1]} "
        f"scores {results[0].expected_reward:.3f}, the pre-RL policy {results[1].expected_reward:.3f}, "
        f"difference {gain.value:+.3f} [{gain.lo:+.3f}, {gain.hi:+.3f}]",
    )


def plan_evaluation() -> dict:
    """Exercise 8.1's reference plan."""
    return {
        "select_on": "validation",  # chooses
        "report_on": "test",  # read by no decision
        "verifier": "exact",  # not one a run can game
        "verifier_version": "1.0",  # pinned
        "checkpoints": "all",  # publish the alternatives
        "base_same_settings": True,  # the baseline alike
    }


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
    """What a wrong pick seems to have been chosen by, for the message."""
    for part, words in (
        ("train", "the highest training reward: the signal the optimiser was pushing up"),
        ("test", "the best test accuracy: it was chosen on the prompts you report on"),
        ("heldout", "the best held-out accuracy, which includes the test prompts"),
    ):
        if step == max(evals, key=lambda e: _mean(e, part))["step"]:
            return f"step {step} has {words}"
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


for _exercise in (
    Exercise(
        "evaluation-plan",
        "evaluation",
        check_evaluation_plan,
        plan_evaluation,
        answer="value",
        answer_name="evaluation_plan",
    ),
    Exercise("pick-and-score", "evaluation", check_pick_and_score, pick_and_score),
):
    register(_exercise)
