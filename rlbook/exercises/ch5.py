"""Checks for chapter 5's exercises: checkpoints, evaluation and the run record.

- Exercise 8: :func:`check_independent_evaluation`, an evaluation plan as a
  dict of settings, then run on ``base`` and ``main``;
- Exercise 9: :func:`check_matched_comparison`, a comparison function that
  pairs prompts and refuses unmatched settings;
- Exercises 10, 15 and 16 (the run record, a retained-capability test and
  reward versioning) live in :mod:`rlbook.exercises.reporting` and are
  re-exported here, so the chapter calls them as ``ch5.check_...``.

Every check prints and returns a :class:`~rlbook.exercises.CheckResult`; none
raises on a wrong answer.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from rlbook import runs
from rlbook.analysis import selection
from rlbook.core import rewards as rw
from rlbook.core.evaluate import EvalResult, evaluate
from rlbook.core.policy import PolicyConfig
from rlbook.core.world import split

from . import CheckResult, as_count, as_number, as_numbers, never_raises, not_a_function, not_answered, verdict
from .reporting import (BOOKKEEPING, FIELD_QUESTION, RECORD_QUESTIONS, TEMPLATE, VERSIONING_CASES, VERSIONING_WHY,
                        check_record_fields, check_retained_test, check_reward_versioning, check_versioning_why,
                        random_policy, versioning_answer)

__all__ = ["BOOKKEEPING", "EVALUATION_KEYS", "FIELD_QUESTION", "RECORD_QUESTIONS", "TEMPLATE", "VERSIONING_CASES",
           "VERSIONING_WHY", "check_independent_evaluation", "check_matched_comparison", "check_record_fields",
           "check_retained_test", "check_reward_versioning", "check_versioning_why", "main_checkpoint_steps",
           "max_token_budget", "random_policy", "versioning_answer"]

EVALUATION_KEYS = ("select_on", "report_on", "verifier", "verifier_version", "n", "temperature", "token_budget",
                   "template", "checkpoints", "base_same_settings")
"""The settings an independent evaluation plan must fix (exercise 8)."""

TRAINED_ON = ("sft", "train", "all")
"""Splits that contain prompts the policy trained on."""


# ------------------------------------------------------------------ exercise 8

HELD_OUT = ("validation", "test")
"""The held-out splits of the single-step world; ``heldout`` is the two together."""

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


def max_token_budget() -> int:
    """The largest token budget a single-step prompt leaves in the policy's context (exercise 8)."""
    return PolicyConfig().block_size + 1 - len(split("test")[0].prompt)


def _verifier_problem(plan: dict) -> str | None:
    """What is wrong with a plan's verifier and its version; ``"exact@1.0"`` may carry the version itself."""
    name, _, version = str(plan["verifier"]).partition("@")
    if not isinstance(plan["verifier"], str) or name.strip().lower() != "exact":
        return f"verifier {plan['verifier']!r}: evaluate with the exact verifier, not with one a policy can game"
    pinned = str(plan["verifier_version"]).strip() if plan["verifier_version"] is not None else None
    if pinned not in rw.ExactVerifier.VERSIONS:
        return (f"verifier_version {plan['verifier_version']!r}: pin one of {tuple(rw.ExactVerifier.VERSIONS)}, "
                "the same for every checkpoint")
    if version and version.strip() != pinned:
        return f"verifier {plan['verifier']!r} and verifier_version {pinned!r} name two different versions"
    return None


def main_checkpoint_steps() -> list[int]:
    """The steps at which ``main`` saves a checkpoint, from its settings (0, every ``checkpoint_every``, the last)."""
    cfg = runs.spec("main").rl
    return [0] + [s for s in range(1, cfg.steps + 1) if s % cfg.checkpoint_every == 0 or s == cfg.steps]


def _checkpoints_problem(value) -> str | None:
    """Why ``checkpoints`` does not say "every checkpoint of main", or None ("all", or the list of every step)."""
    if isinstance(value, str) and value.strip().lower() == "all":
        return None
    steps = [as_count(x) for x in value] if isinstance(value, (list, tuple, range)) else None
    if steps is not None and None not in steps and set(main_checkpoint_steps()) <= set(steps):
        return None
    return "checkpoints: evaluate 'all' of them the same way, so the alternatives can be reported"


def _plan_problems(plan: dict) -> list[str]:
    """Everything wrong with an evaluation plan, most basic first (exercise 8)."""
    missing = [k for k in EVALUATION_KEYS if k not in plan]
    if missing:
        return [f"the plan lacks {', '.join(map(repr, missing))}"]
    problems = []
    chosen = {}
    for key in ("select_on", "report_on"):
        chosen[key] = _splits(plan[key])
        if chosen[key] is None:
            problems.append(f"{key}={plan[key]!r}: name a split, e.g. 'validation', or a list of splits")
        elif chosen[key] & set(TRAINED_ON):
            problems.append(f"{key}={plan[key]!r} contains prompts the policy trained on; use a held-out split")
        elif not chosen[key] <= set(HELD_OUT):
            problems.append(f"{key}={plan[key]!r} is not a split; held-out splits are 'validation' and 'test'")
    if not problems and chosen["select_on"] & chosen["report_on"]:
        problems.append("the split that chooses the checkpoint must not overlap the split that reports its score: "
                        "select on 'validation', report on 'test'")
    problem = _verifier_problem(plan)
    if problem:
        problems.append(problem)
    n = as_count(plan["n"])
    if n is None or n < 1:
        problems.append(f"n={plan['n']!r}: the number of samples per prompt must be a positive integer")
    temperature = as_number(plan["temperature"])
    if temperature is None or not temperature > 0 or not math.isfinite(temperature):
        problems.append(f"temperature={plan['temperature']!r}: a fixed sampling temperature > 0")
    budget, most = as_count(plan["token_budget"]), max_token_budget()
    if budget is None or not 3 <= budget <= most:
        problems.append(f"token_budget={plan['token_budget']!r}: a fixed integer of at least 3 ('18#' has 3 tokens) "
                        f"and at most {most}, what the policy's context leaves after the prompt")
    if not isinstance(plan["template"], str) or plan["template"].strip() != TEMPLATE:
        problems.append(f"template={plan['template']!r}: use the template the policy was trained with, {TEMPLATE!r}")
    problem = _checkpoints_problem(plan["checkpoints"])
    if problem:
        problems.append(problem)
    if not (isinstance(plan["base_same_settings"], (bool, np.bool_)) and plan["base_same_settings"]):
        problems.append("base_same_settings must be True: the pre-RL policy gets exactly the same evaluation")
    return problems


@never_raises
def check_independent_evaluation(plan: dict | None, seed: int = 0) -> CheckResult:
    """Exercise 8: check an evaluation plan, then run it on ``base`` and ``main`` (seed ``seed``).

    The plan is a dict with the keys of :data:`EVALUATION_KEYS`. Splits may be
    a name or a list of names, ``n`` and ``token_budget`` whole numbers
    (``32.0`` too), the verifier ``"exact"`` or ``"exact@1.0"``, and
    ``checkpoints`` ``"all"`` or the list of every step. When it is sound,
    the check evaluates the pre-RL policy and ``main``'s last checkpoint with
    it on the report split and prints the matched difference.
    """
    if plan is None:
        return not_answered("the dict `evaluation_plan`")
    if not isinstance(plan, dict):
        return verdict(False, f"`evaluation_plan` must be a dict, got {type(plan).__name__}")
    problems = _plan_problems(plan)
    if problems:
        return verdict(False, "; ".join(problems))
    main = runs.load("main", seed)
    report = sorted(_splits(plan["report_on"]))
    tasks = [t for name in report for t in split(name)]
    verifier = rw.ExactVerifier(str(plan["verifier_version"]).strip())
    results = [evaluate(main.policy(step), tasks, n=as_count(plan["n"]), temperature=as_number(plan["temperature"]),
                        budget=as_count(plan["token_budget"]), verifier=verifier, seed=seed)
               for step in (main.steps[-1], 0)]
    gain = selection.matched_difference(*results, seed=seed)
    return verdict(True, f"a sound plan. Run on {len(tasks)} {' + '.join(report)} prompts: main step {main.steps[-1]} "
                         f"scores {results[0].expected_reward:.3f}, the pre-RL policy {results[1].expected_reward:.3f}, "
                         f"difference {gain.value:+.3f} [{gain.lo:+.3f}, {gain.hi:+.3f}]")


# ------------------------------------------------------------------ exercise 9

def _synthetic_result(rates: np.ndarray, samples: int, rng: np.random.Generator, tasks: list | None = None,
                      **settings) -> EvalResult:
    """An EvalResult with ``samples`` Bernoulli(rate) rewards per prompt (test prompts by default) and the settings."""
    n = samples
    tasks = tasks or split("test")
    rewards = (rng.random((len(tasks), n)) < rates[:, None]).astype(float)
    statuses = [["accepted" if r else "incorrect" for r in row] for row in rewards]
    base = {"n": n, "temperature": 1.0, "token_budget": 4, "decoding": "sample", "seed": 0,
            "verifier": "exact@1.0", "policy_version": "synthetic", "template": TEMPLATE}
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
    return tuple(triple) if triple is not None and len(triple) == 3 and all(map(math.isfinite, triple)) else None


def _unmatched(before: EvalResult, rng: np.random.Generator) -> list[tuple[str, EvalResult]]:
    """Evaluations that differ from ``before`` in one way each, which a comparison must refuse."""
    rates = before.per_prompt
    others = [t for t in split("validation") if t not in before.tasks][:len(before.tasks)]
    cases = [(key, _synthetic_result(rates, value if key == "n" else 32, rng, **{key: value}))
             for key, value in (("temperature", 0.5), ("n", 8), ("verifier", "exact@2.0"), ("token_budget", 8),
                                ("decoding", "greedy"), ("template", "a+b="))]
    if len(others) == len(before.tasks):
        cases.append(("prompts", _synthetic_result(rates, 32, rng, tasks=others)))
    return cases


def _interval_problem(ratio: float) -> str | None:
    """What a 95 % interval's width, as a share of the paired bootstrap's, says about how it was computed."""
    if 0.92 <= ratio <= 1.2:
        return None
    if 0.75 <= ratio < 0.92:
        return (f"your intervals are {ratio:.0%} as wide as a paired 95 % interval over prompts: too narrow, as a "
                "90 % interval would be (level=0.95)")
    if ratio < 0.75:
        return (f"your intervals are {ratio:.0%} as wide as a paired 95 % interval over prompts: treating every "
                "sample as independent ignores that prompts differ in how much they gain; resample prompts "
                "(one value per prompt: per_prompt)")
    return (f"your intervals are {ratio:.0%} as wide as a paired 95 % interval over prompts: resample prompts with "
            "both policies' rates together (difference_ci(..., paired=True)), so their shared difficulty cancels")


@never_raises
def check_matched_comparison(compare: Callable | None, seed: int = 9) -> CheckResult:
    """Exercise 9: ``compare(after, before)`` must return (difference, lo, hi) paired over prompts,
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
    if compare is None:
        return not_answered("the function `compare`")
    if not callable(compare):
        return not_a_function("compare", compare)
    ratios = []
    for after, before in _matched_pairs(seed):
        try:
            returned = compare(after, before)
        except Exception as err:  # noqa: BLE001 - the reader's code may raise anything
            return verdict(False, f"compare raised {type(err).__name__}: {err} on two matched evaluations")
        got = _as_triple(returned)
        if got is None:
            return verdict(False, f"compare must return three numbers: (difference, lo, hi), got {returned!r:.60}")
        want = selection.matched_difference(after, before)
        if abs(got[0] - want.value) > 1e-9:
            return verdict(False, f"difference {got[0]:.4f}, expected {want.value:.4f}: mean reward of `after` minus "
                                  "mean reward of `before`")
        if not got[1] <= got[0] <= got[2]:
            return verdict(False, f"interval [{got[1]:.3f}, {got[2]:.3f}] does not contain the difference "
                                  f"{got[0]:.3f}: return (difference, lo, hi) with lo <= difference <= hi")
        ratios.append((got[2] - got[1]) / (want.hi - want.lo))
    problem = _interval_problem(float(np.mean(ratios)))
    if problem:
        return verdict(False, problem)
    before = _matched_pairs(seed, 1)[0][1]
    for key, other in _unmatched(before, np.random.default_rng(seed + 1)):
        try:
            compare(other, before)
        except ValueError:
            continue
        except Exception as err:  # noqa: BLE001
            return verdict(False, f"with different {key}, compare raised {type(err).__name__}; raise ValueError instead")
        shown = "a different set of prompts" if key == "prompts" else (
            f"{other.settings[key]!r} vs {before.settings[key]!r}")
        return verdict(False, f"compare accepted two evaluations with different {key} ({shown}); it must raise "
                              "ValueError: that gap is not the policy's doing")
    return verdict(True, f"paired difference {got[0]:+.3f} [{got[1]:+.3f}, {got[2]:+.3f}], and unmatched "
                         "temperature, sample count, verifier, token budget, decoding, template and prompts are all "
                         "refused")
