"""Exercise 8.2's check: compare pre- and post-RL policies under equal inference budgets.

:func:`check_matched_comparison` runs the reader's ``compare(after, before)``
on synthetic evaluations of the test prompts, matched and unmatched, and
checks both the paired interval it returns and that it refuses every
unmatched setting. :mod:`rlbook.exercises.ch8` re-exports it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, cast

import numpy as np

from rlbook.core.evaluate import EvalResult
from rlbook.core.stats import difference_ci
from rlbook.core.world import split

from . import CheckResult, as_numbers, never_raises, not_a_function, not_answered, verdict
from .registry import Exercise, Mistake, register

TEMPLATE = "U:a+b?|A:"
"""The chat template of every synthetic evaluation here."""


def compare(after, before):
    """Exercise 8.2's reference: a paired gain."""
    from rlbook.core.stats import difference_ci

    settings = ("n", "temperature", "token_budget", "decoding", "verifier", "template")
    for key in settings:
        a, b = after.settings[key], before.settings[key]
        if a != b:
            raise ValueError(f"{key} differs: {a!r} vs {b!r}")
    prompts = [t.operands for t in after.tasks]
    if prompts != [t.operands for t in before.tasks]:
        raise ValueError("different prompts")
    gain = difference_ci(after.per_prompt, before.per_prompt, paired=True)
    return tuple(gain)


def _synthetic_result(
    rates: np.ndarray, samples: int, rng: np.random.Generator, tasks: list | None = None, **settings
) -> EvalResult:
    """An EvalResult with ``samples`` Bernoulli(rate) rewards per prompt (test prompts by default) and the settings."""
    n = samples
    tasks = tasks or split("test")
    rewards = (rng.random((len(tasks), n)) < rates[:, None]).astype(float)
    statuses = [["accepted" if r else "incorrect" for r in row] for row in rewards]
    base = {
        "n": n,
        "temperature": 1.0,
        "token_budget": 4,
        "decoding": "sample",
        "seed": 0,
        "verifier": "exact@1.0",
        "policy_version": "synthetic",
        "template": TEMPLATE,
    }
    return EvalResult(tasks, rewards, statuses, [[""] * n for _ in tasks], dict(base, **settings))


def _matched_pairs(seed: int, count: int = 3) -> list[tuple[EvalResult, EvalResult]]:
    """Matched (after, before) evaluations on the test prompts: prompts of very different difficulty, and a gain
    that differs from prompt to prompt, so that paired, unpaired and sample-level intervals all differ."""
    rng = np.random.default_rng(seed)
    pairs = []
    for _ in range(count):
        difficulty = rng.uniform(0.05, 0.9, size=len(split("test")))
        gain = rng.uniform(-0.3, 0.5, size=difficulty.size)
        before = _synthetic_result(difficulty, 32, rng)
        after = _synthetic_result(np.clip(difficulty + gain, 0, 1), 32, rng, policy_version="synthetic-after")
        pairs.append((after, before))
    return pairs


def _as_triple(value) -> tuple[float, float, float] | None:
    triple = as_numbers(value)
    return (
        cast(tuple[float, float, float], tuple(triple))
        if triple is not None and len(triple) == 3 and all(map(math.isfinite, triple))
        else None
    )


def _unmatched(before: EvalResult, rng: np.random.Generator) -> list[tuple[str, EvalResult]]:
    """Evaluations that differ from ``before`` in one way each, which a comparison must refuse."""
    rates = before.per_prompt
    others = [t for t in split("validation") if t not in before.tasks][: len(before.tasks)]
    changes: tuple[tuple[str, Any], ...] = (
        ("temperature", 0.5),
        ("n", 8),
        ("verifier", "exact@2.0"),
        ("token_budget", 8),
        ("decoding", "greedy"),
        ("template", "a+b="),
    )
    cases = [
        (key, _synthetic_result(rates, value if key == "n" else 32, rng, **{key: value})) for key, value in changes
    ]
    if len(others) == len(before.tasks):
        cases.append(("prompts", _synthetic_result(rates, 32, rng, tasks=others)))
    return cases


def _interval_problem(ratio: float) -> str | None:
    """What a 95 % interval's width, as a share of the paired bootstrap's, says about how it was computed."""
    if 0.92 <= ratio <= 1.2:
        return None
    if 0.75 <= ratio < 0.92:
        return (
            f"your intervals are {ratio:.0%} as wide as a paired 95 % interval over prompts: too narrow, as a "
            "90 % interval would be (level=0.95)"
        )
    if ratio < 0.75:
        return (
            f"your intervals are {ratio:.0%} as wide as a paired 95 % interval over prompts: treating every "
            "sample as independent ignores that prompts differ in how much they gain; resample prompts "
            "(one value per prompt: per_prompt)"
        )
    return (
        f"your intervals are {ratio:.0%} as wide as a paired 95 % interval over prompts: resample prompts with "
        "both policies' rates together (difference_ci(..., paired=True)), so their shared difficulty cancels"
    )


@never_raises
def check_matched_comparison(fn: Callable | None, seed: int = 9) -> CheckResult:
    """Exercise 8.2: ``fn(after, before)`` must return (difference, lo, hi) paired over prompts,
    and raise ValueError when the two evaluations were not made on the same prompts with the same settings.

    Tested on synthetic evaluations drawn with ``seed``: prompts of very
    different difficulty, which both policies share, and a gain that varies
    from prompt to prompt. The interval's width, averaged over three
    matched pairs, must be within 0.92 to 1.2 times that of the paired 95 %
    bootstrap (a bootstrap with another seed, or a normal approximation of
    the paired differences, is inside; a 90 % interval, an unpaired one and
    one over samples are outside). Unmatched temperature, sample count,
    verifier, token budget, decoding, template and prompts must each raise.
    """
    if fn is None:
        return not_answered("the function `compare`")
    if not callable(fn):
        return not_a_function("compare", fn)
    ratios = []
    for after, before in _matched_pairs(seed):
        try:
            returned = fn(after, before)
        except Exception as err:  # noqa: BLE001 - the reader's code may raise anything
            return verdict(False, f"compare raised {type(err).__name__}: {err} on two matched evaluations")
        got = _as_triple(returned)
        if got is None:
            return verdict(False, f"compare must return three numbers: (difference, lo, hi), got {returned!r:.60}")
        want = difference_ci(after.per_prompt, before.per_prompt, paired=True)
        if abs(got[0] - want.value) > 1e-9:
            return verdict(
                False,
                f"difference {got[0]:.4f}, expected {want.value:.4f}: mean reward of `after` minus "
                "mean reward of `before`",
            )
        if not got[1] <= got[0] <= got[2]:
            return verdict(
                False,
                f"interval [{got[1]:.3f}, {got[2]:.3f}] does not contain the difference "
                f"{got[0]:.3f}: return (difference, lo, hi) with lo <= difference <= hi",
            )
        ratios.append((got[2] - got[1]) / (want.hi - want.lo))
    problem = _interval_problem(float(np.mean(ratios)))
    if problem:
        return verdict(False, problem)
    before = _matched_pairs(seed, 1)[0][1]
    for key, other in _unmatched(before, np.random.default_rng(seed + 1)):
        try:
            fn(other, before)
        except ValueError:
            continue
        except Exception as err:  # noqa: BLE001
            return verdict(
                False, f"with different {key}, compare raised {type(err).__name__}; raise ValueError instead"
            )
        shown = (
            "a different set of prompts"
            if key == "prompts"
            else (f"{other.settings[key]!r} vs {before.settings[key]!r}")
        )
        return verdict(
            False,
            f"compare accepted two evaluations with different {key} ({shown}); it must raise "
            "ValueError: that gap is not the policy's doing",
        )
    assert got is not None  # the loop above ran on three pairs and returned on a None
    return verdict(
        True,
        f"paired difference {got[0]:+.3f} [{got[1]:+.3f}, {got[2]:+.3f}], and unmatched "
        "temperature, sample count, verifier, token budget, decoding, template and prompts are all "
        "refused",
    )


def _checked_then(interval: Callable[[EvalResult, EvalResult], tuple]) -> Callable:
    """Exercise 8.2 refusing unmatched evaluations as the reference does, then returning ``interval(after,
    before)``: a mistake in the interval the check names."""

    def comparison(after, before):
        compare(after, before)  # raises ValueError on unmatched settings or prompts
        return tuple(interval(after, before))

    return comparison


MISTAKES = (
    Mistake(
        lambda after, before: tuple(difference_ci(after.per_prompt, before.per_prompt, paired=True)),
        "accepted two evaluations with different temperature",
    ),
    Mistake(
        _checked_then(lambda after, before: difference_ci(after.per_prompt, before.per_prompt, paired=False)),
        "resample prompts with both policies' rates together",
    ),
    Mistake(
        _checked_then(lambda after, before: difference_ci(after.per_prompt, before.per_prompt, paired=True, level=0.9)),
        "as a 90 % interval would be",
    ),
    Mistake(
        _checked_then(lambda after, before: difference_ci(after.rewards.ravel(), before.rewards.ravel())),
        "treating every sample as independent",
    ),
)
"""Exercise 8.2's named mistakes: no check of the settings, and an unpaired, a 90 % and a per-sample interval."""

register(Exercise("matched-comparison", "evaluation", check_matched_comparison, compare, mistakes=MISTAKES))
