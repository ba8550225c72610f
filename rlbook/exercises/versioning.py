"""Exercise 8.5's checks (chapter 8): two versions of the exact verifier, and what a change of version moves.

- :func:`check_reward_versioning`: the re-scoring result under exact 1.0 and
  2.0 (the samples whose verdict flips, and a gain measured within one version
  or across two), tried on the chapter's evaluations and on
  :data:`VERSIONING_CASES`, written so that the versions disagree;
- :func:`check_changed_advantages`: how many of ``main``'s advantages a change
  of version would have moved.

Each is registered here with its reference solution and named mistakes;
:mod:`rlbook.exercises.ch8` re-exports the checks, so the chapter calls
``ch8.check_reward_versioning`` and the like. Every check prints and returns a
:class:`~rlbook.exercises.CheckResult`; none raises on a wrong answer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import numpy as np

from rlbook import runs
from rlbook.analysis import versions
from rlbook.book._shown import SHOWN, shown_seed
from rlbook.core import rewards as rw
from rlbook.core.evaluate import EvalResult, evaluate
from rlbook.core.world import Task, split

from . import CheckResult, as_count, as_number, never_raises, not_a_function, not_answered, verdict
from .registry import Exercise, Mistake, register
from .reporting import TEMPLATE, seed_inputs


def versioning(before, after):
    """Exercise 8.5's reference."""
    from rlbook.analysis.versions import rescore, version_flips
    from rlbook.core.rewards import ExactVerifier

    v1, v2 = ExactVerifier("1.0"), ExactVerifier("2.0")

    def score(result, verifier):
        return rescore(result, verifier).expected_reward

    flips = version_flips(before, v1, v2)
    flips += version_flips(after, v1, v2)
    return {
        "flipped": flips,
        "gain_same_version": score(after, v1) - score(before, v1),
        "gain_mixed": score(after, v2) - score(before, v1),
        "record_field": "verifier",  # name and version
    }


def _written(rows: list[list[str]], version: str) -> EvalResult:
    """An evaluation of two prompts whose samples are ``rows``, scored by exact 1.0 (exercise 8.5's own cases)."""
    tasks = [Task((3, 4)), Task((2, 5))]
    verifier = rw.ExactVerifier("1.0")
    verdicts = [[verifier(t.prompt, c) for c in row] for t, row in zip(tasks, rows)]
    settings = {
        "n": len(rows[0]),
        "temperature": 1.0,
        "token_budget": 4,
        "decoding": "sample",
        "verifier": "exact@1.0",
        "template": TEMPLATE,
        "policy_version": version,
    }
    return EvalResult(
        tasks,
        np.array([[v.reward for v in row] for row in verdicts]),
        [[v.status for v in row] for row in verdicts],
        rows,
        settings,
    )


VERSIONING_CASES = (
    (
        _written([["7#", "6#", "7#"], ["07#", "1#", "7#"]], "before"),
        _written([["7#", " 7#", "7 #"], ["7#", "7 #", " 07#"]], "after"),
    ),
    (
        _written([["7#", " 7#", "8#"], ["7#", "6#", "5#"]], "before"),
        _written([["7#", "7#", "07#"], ["7#", "7#", "6#"]], "after"),
    ),
)
"""(before, after) pairs written so that exact 1.0 and 2.0 disagree on some samples of each side (exercise 8.5)."""


def _versioning_problem(got, want: dict) -> str | None:
    """What is wrong with one returned versioning dict, or None."""
    keys = ("flipped", "gain_same_version", "gain_mixed", "record_field")
    if not isinstance(got, dict) or any(k not in got for k in keys):
        return f"return a dict with the keys {', '.join(keys)}"
    flipped = as_count(got["flipped"])
    if flipped is None:
        return f"flipped={got['flipped']!r:.30}: a count of samples, a whole number (not a share, not text)"
    if flipped != want["flipped"]:
        return (
            "flipped: count the samples of both evaluations whose reward under ExactVerifier('2.0') differs "
            "from that under ExactVerifier('1.0')"
        )
    for key in ("gain_same_version", "gain_mixed"):
        value = as_number(got[key])
        if value is None or abs(value - want[key]) > 1e-9:
            how = "both under 1.0" if key == "gain_same_version" else "after under 2.0, before under 1.0"
            return f"{key}: expected reward of after minus before, {how}"
    field = str(got["record_field"]).split(".")[0].strip().lower()
    if field != "verifier":
        return f"record_field={got['record_field']!r:.30}: which run-record field names the verifier and its version?"
    return None


@never_raises
def check_reward_versioning(fn: Callable | None, before: EvalResult, after: EvalResult) -> CheckResult:
    """Exercise 8.5, first part: ``fn(before, after)`` must return the re-scoring result under exact 1.0 and 2.0.

    The returned dict has ``flipped`` (samples of both evaluations whose
    reward differs between the versions), ``gain_same_version`` (after minus
    before, both under 1.0), ``gain_mixed`` (after under 2.0 minus before
    under 1.0) and ``record_field`` (the run-record field that pins the
    version). It is run on the chapter's ``before`` and ``after`` and on
    :data:`VERSIONING_CASES`, where the versions disagree on both sides, both
    ways round: on the chapter's evaluations few samples change verdict, if
    any, so only these cases tell a right function from a wrong one.
    """
    if fn is None:
        return not_answered("the function `versioning`")
    if isinstance(fn, dict):
        return verdict(
            False,
            "write `versioning(before, after)` as a function returning the dict, so that it can be "
            "tried on evaluations where the two versions disagree",
        )
    if not callable(fn):
        return not_a_function("versioning", fn)
    if not isinstance(before, EvalResult) or not isinstance(after, EvalResult):
        return verdict(False, "give the chapter's before_eval and after_eval (two EvalResults) as the last arguments")
    cases = [("the chapter's evaluations", before, after)]
    cases += [(f"constructed case {i + 1}", b, a) for i, (b, a) in enumerate(VERSIONING_CASES)]
    cases += [(f"constructed case {i + 1} the other way round", a, b) for i, (b, a) in enumerate(VERSIONING_CASES)]
    for name, b, a in cases:
        try:
            got = fn(b, a)
        except Exception as err:  # noqa: BLE001 - the reader's code may raise anything
            return verdict(False, f"versioning raised {type(err).__name__}: {err} on {name}")
        problem = _versioning_problem(got, versioning(b, a))
        if problem:
            return verdict(False, f"on {name}: {problem}")
    return verdict(
        True,
        f"right on the chapter's evaluations and on {len(cases) - 1} constructed ones, where a "
        "mixed comparison credits RL with what the lenient version accepts and the strict one refused",
    )


def count_changed_advantages(seed):
    """Exercise 8.5's reference count."""
    from rlbook import runs
    from rlbook.analysis.audit import from_stored
    from rlbook.core.rewards import ExactVerifier

    main = runs.load("main", seed)
    v1, v2 = ExactVerifier("1.0"), ExactVerifier("2.0")
    changed = 0
    for stored in main.rollouts:
        batch = from_stored(stored)
        size = batch.group_size
        old = batch.rescored(v1).rewards.reshape(-1, size)
        new = batch.rescored(v2).rewards.reshape(-1, size)
        moved = (old != new).any(axis=1)  # its baseline moved
        changed += int(moved.sum()) * size
    return changed


def _changed(main, seed: int):
    """What exact 2.0 would have changed in main's training: from the chapter's facts when they cover ``seed``."""
    from rlbook import book

    if seed in book.SEEDS:
        return book.load("evaluation", check=False).by_seed[seed].versions.changed
    return versions.changed_advantages(main, rw.ExactVerifier("1.0"), rw.ExactVerifier("2.0"))


@never_raises
def check_changed_advantages(count, seed: int = SHOWN) -> CheckResult:
    """Exercise 8.5, second part: how many of ``main``'s training rollouts would have had another advantage.

    The truth is computed by :func:`rlbook.analysis.versions.changed_advantages`,
    which turns both versions' rewards into advantages with ``main``'s own
    method and compares them. A count of changed rewards, or of groups, is
    told what it counts instead.
    """
    if count is None:
        return not_answered("`changed_advantages`, a count of rollouts")
    got = as_count(count)
    if got is None:
        return verdict(False, f"give a whole number of rollouts, got {count!r:.40}")
    main = runs.load("main", seed)
    truth = _changed(main, seed)
    if got == truth["advantages"]:
        return verdict(
            True,
            f"{got:,} advantages would have changed, from {truth['flipped']} changed rewards: each "
            "one moved the baseline of its whole group",
        )
    if got == truth["flipped"]:
        return verdict(
            False,
            f"{got} is the number of rollouts whose reward would change. Under a group-mean "
            "baseline each such change also moves its group's mean, and with it the advantage of "
            "every other answer in the group",
        )
    if got == truth["groups"]:
        return verdict(
            False,
            f"{got} counts groups; the question asks for rollouts, and each group holds "
            f"{main.record['sampling']['group_size']} of them",
        )
    return verdict(
        False,
        f"{got:,} is not it: judge each step's rollouts with both versions, find the groups in "
        "which any reward changed, and count the rollouts whose advantage that changes",
    )


def _versioning_with(**change: Callable[[EvalResult, EvalResult, dict], object]) -> Callable[..., dict]:
    """Exercise 8.5's re-scoring result with the entries named in ``change`` computed otherwise, each by its
    function of (before, after, the right result): a mistake the check names."""

    def wrong(before, after):
        right = versioning(before, after)
        return dict(right, **{key: compute(before, after, right) for key, compute in change.items()})

    return wrong


def _changed_rewards(seed):
    """Exercise 8.5's count taken as the rollouts whose reward changes, not those whose advantage does."""
    from rlbook.analysis.audit import from_stored

    v1, v2 = rw.ExactVerifier("1.0"), rw.ExactVerifier("2.0")
    batches = [from_stored(stored) for stored in runs.load("main", seed).rollouts]
    return sum(int((b.rescored(v1).rewards != b.rescored(v2).rewards).sum()) for b in batches)


MISTAKES: dict[str, tuple[Mistake, ...]] = {
    "reward-versioning": (
        Mistake(
            _versioning_with(
                flipped=lambda b, a, right: versions.version_flips(a, rw.ExactVerifier("1.0"), rw.ExactVerifier("2.0"))
            ),
            "flipped: count the samples of both evaluations",
        ),
        Mistake(
            _versioning_with(gain_mixed=lambda b, a, right: right["gain_same_version"]),
            "gain_mixed: expected reward of after minus before",
        ),
        Mistake(
            _versioning_with(record_field=lambda b, a, right: "policy_version"),
            "which run-record field names the verifier and its version",
        ),
    ),
    "changed-advantages": (Mistake(_changed_rewards, "the number of rollouts whose reward would change"),),
}
"""Exercise 8.5's named mistakes, by exercise: each a plausible wrong answer and the words its checker names it
with."""


def _chapter_evaluations(seeds: tuple[int, ...]) -> tuple[EvalResult, EvalResult]:
    """The chapter's before_eval and after_eval with its facts on ``seeds``: main before RL and at its chosen
    checkpoint, on the test prompts, for the seed the page follows."""
    from rlbook import book

    shown = shown_seed(seeds)
    main = runs.load("main", shown)
    selected = book.load("evaluation", seeds, check=False).by_seed[shown].selected
    return cast(
        tuple[EvalResult, EvalResult],
        tuple(
            evaluate(main.policy(step), split("test"), n=main.record["evaluations"][0]["n"], seed=shown)
            for step in (0, selected)
        ),
    )


for _exercise in (
    Exercise(
        "reward-versioning",
        "evaluation",
        check_reward_versioning,
        versioning,
        inputs=_chapter_evaluations,
        mistakes=MISTAKES["reward-versioning"],
    ),
    Exercise(
        "changed-advantages",
        "evaluation",
        check_changed_advantages,
        count_changed_advantages,
        answer="value",
        inputs=seed_inputs,
        answer_name="changed_advantages",
        call="seed=F.shown",
        mistakes=MISTAKES["changed-advantages"],
    ),
):
    register(_exercise)
