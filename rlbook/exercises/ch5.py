"""Checks for chapter 5's exercises: checkpoints, evaluation and the run record.

- Exercise 8: :func:`check_independent_evaluation`, an evaluation plan as a
  dict of settings, then run on ``base`` and ``main``;
- Exercise 9: :func:`check_matched_comparison`, a comparison function that
  pairs prompts and refuses unmatched settings;
- Exercise 10: :func:`check_record_fields`, the fields of a run record;
- Exercise 15: :func:`check_retained_test`, a retained-capability test run
  on the policy before and after RL;
- Exercise 16: :func:`check_reward_versioning`, the re-scoring result under
  two versions of the exact verifier.

Every check prints and returns a :class:`~rlbook.exercises.CheckResult`; none
raises on a wrong answer.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np
import torch

from rlbook import record as rec
from rlbook import runs
from rlbook.analysis import selection
from rlbook.core import rewards as rw
from rlbook.core.evaluate import EvalResult, evaluate
from rlbook.core.policy import Policy, PolicyConfig
from rlbook.core.world import split
from rlbook.record.display import missing_fields

from . import CheckResult, not_answered, verdict

EVALUATION_KEYS = ("select_on", "report_on", "verifier", "verifier_version", "n", "temperature", "token_budget",
                   "template", "checkpoints", "base_same_settings")
"""The settings an independent evaluation plan must fix (exercise 8)."""

TRAINED_ON = ("sft", "train", "all")
"""Splits that contain prompts the policy trained on."""


# ------------------------------------------------------------------ exercise 8

def _plan_problems(plan: dict) -> list[str]:
    """Everything wrong with an evaluation plan, most basic first (exercise 8)."""
    missing = [k for k in EVALUATION_KEYS if k not in plan]
    if missing:
        return [f"the plan lacks {', '.join(map(repr, missing))}"]
    problems = []
    for key in ("select_on", "report_on"):
        if plan[key] in TRAINED_ON:
            problems.append(f"{key}={plan[key]!r} contains prompts the policy trained on; use a held-out split")
        elif plan[key] not in ("validation", "test", "heldout"):
            problems.append(f"{key}={plan[key]!r} is not a split; held-out splits are 'validation' and 'test'")
    if not problems and (plan["select_on"] == plan["report_on"] or "heldout" in (plan["select_on"], plan["report_on"])):
        problems.append("the split that chooses the checkpoint must not overlap the split that reports its score: "
                        "select on 'validation', report on 'test'")
    if plan["verifier"] != "exact":
        problems.append(f"verifier {plan['verifier']!r}: evaluate with the exact verifier, not with one a policy can game")
    elif plan["verifier_version"] not in rw.ExactVerifier.VERSIONS:
        problems.append(f"verifier_version {plan['verifier_version']!r}: pin one of "
                        f"{tuple(rw.ExactVerifier.VERSIONS)}, the same for every checkpoint")
    if not isinstance(plan["n"], int) or isinstance(plan["n"], bool) or plan["n"] < 1:
        problems.append(f"n={plan['n']!r}: the number of samples per prompt must be a positive integer")
    if not isinstance(plan["temperature"], (int, float)) or not plan["temperature"] > 0:
        problems.append(f"temperature={plan['temperature']!r}: a fixed sampling temperature > 0")
    if not isinstance(plan["token_budget"], int) or plan["token_budget"] < 3:
        problems.append(f"token_budget={plan['token_budget']!r}: a fixed integer of at least 3 ('18#' has 3 tokens)")
    if plan["template"] != "U:a+b?|A:":
        problems.append(f"template={plan['template']!r}: use the template the policy was trained with, 'U:a+b?|A:'")
    if plan["checkpoints"] != "all":
        problems.append("checkpoints: evaluate 'all' of them the same way, so the alternatives can be reported")
    if plan["base_same_settings"] is not True:
        problems.append("base_same_settings must be True: the pre-RL policy gets exactly the same evaluation")
    return problems


def check_independent_evaluation(plan: dict | None, seed: int = 0) -> CheckResult:
    """Exercise 8: check an evaluation plan, then run it on ``base`` and ``main`` (seed ``seed``).

    The plan is a dict with the keys of :data:`EVALUATION_KEYS`. When it is
    sound, the check evaluates the pre-RL policy and ``main``'s last
    checkpoint with it on the report split and prints the matched difference.
    """
    if plan is None:
        return not_answered("the dict `evaluation_plan`")
    if not isinstance(plan, dict):
        return verdict(False, f"`evaluation_plan` must be a dict, got {type(plan).__name__}")
    problems = _plan_problems(plan)
    if problems:
        return verdict(False, "; ".join(problems))
    main = runs.load("main", seed)
    tasks = split(plan["report_on"])
    verifier = rw.ExactVerifier(plan["verifier_version"])
    results = [evaluate(main.policy(step), tasks, n=plan["n"], temperature=float(plan["temperature"]),
                        budget=plan["token_budget"], verifier=verifier, seed=seed) for step in (main.steps[-1], 0)]
    gain = selection.matched_difference(*results, seed=seed)
    return verdict(True, f"a sound plan. Run on {len(tasks)} {plan['report_on']} prompts: main step {main.steps[-1]} "
                         f"scores {results[0].expected_reward:.3f}, the pre-RL policy {results[1].expected_reward:.3f}, "
                         f"difference {gain.value:+.3f} [{gain.lo:+.3f}, {gain.hi:+.3f}]")


# ------------------------------------------------------------------ exercise 9

def _synthetic_result(rates: np.ndarray, samples: int, rng: np.random.Generator, **settings) -> EvalResult:
    """An EvalResult with ``samples`` Bernoulli(rate) rewards per test prompt and the given settings."""
    n = samples
    tasks = split("test")
    rewards = (rng.random((len(tasks), n)) < rates[:, None]).astype(float)
    statuses = [["accepted" if r else "incorrect" for r in row] for row in rewards]
    base = {"n": n, "temperature": 1.0, "token_budget": 4, "decoding": "sample", "seed": 0,
            "verifier": "exact@1.0", "policy_version": "synthetic", "template": "U:a+b?|A:"}
    return EvalResult(tasks, rewards, statuses, [[""] * n for _ in tasks], dict(base, **settings))


def _as_triple(value) -> tuple[float, float, float] | None:
    try:
        triple = tuple(float(x) for x in value)
    except (TypeError, ValueError):
        return None
    return triple if len(triple) == 3 and all(math.isfinite(x) for x in triple) else None


def check_matched_comparison(compare: Callable | None, seed: int = 9) -> CheckResult:
    """Exercise 9: ``compare(after, before)`` must return (difference, lo, hi) paired over prompts,
    and raise ValueError when the two evaluations were not made under the same settings.

    Tested on synthetic evaluations drawn with ``seed``: prompts of very
    different difficulty, which both policies share, so that a paired
    interval is much narrower than an unpaired one.
    """
    if compare is None:
        return not_answered("the function `compare`")
    rng = np.random.default_rng(seed)
    difficulty = rng.uniform(0.05, 0.9, size=len(split("test")))
    before = _synthetic_result(difficulty, 32, rng)
    after = _synthetic_result(np.clip(difficulty + 0.1, 0, 1), 32, rng, policy_version="synthetic-after")
    try:
        got = _as_triple(compare(after, before))
    except Exception as err:  # noqa: BLE001 - the reader's code may raise anything
        return verdict(False, f"compare raised {type(err).__name__}: {err} on two matched evaluations")
    if got is None:
        return verdict(False, "compare must return three numbers: (difference, lo, hi)")
    want = selection.matched_difference(after, before)
    if abs(got[0] - want.value) > 1e-9:
        return verdict(False, f"difference {got[0]:.4f}, expected {want.value:.4f}: mean reward of `after` minus "
                              "mean reward of `before`")
    width, want_width = got[2] - got[1], want.hi - want.lo
    if not got[1] <= got[0] <= got[2] or abs(width - want_width) > 0.35 * want_width:
        return verdict(False, f"interval [{got[1]:.3f}, {got[2]:.3f}], expected about [{want.lo:.3f}, {want.hi:.3f}]: "
                              "resample prompts with both policies' rates together (difference_ci(..., paired=True))")
    for key, value in (("temperature", 0.5), ("n", 8), ("verifier", "exact@2.0"), ("token_budget", 8)):
        other = _synthetic_result(difficulty, value if key == "n" else 32, rng, **{key: value})
        try:
            compare(other, before)
        except ValueError:
            continue
        except Exception as err:  # noqa: BLE001
            return verdict(False, f"with different {key}, compare raised {type(err).__name__}; raise ValueError instead")
        return verdict(False, f"compare accepted two evaluations with different {key} ({value!r} vs "
                              f"{before.settings[key]!r}); it must raise ValueError: that gap is not the policy's doing")
    return verdict(True, f"paired difference {got[0]:+.3f} [{got[1]:+.3f}, {got[2]:+.3f}], and unmatched "
                         "temperature, sample count, verifier and token budget are all refused")


# ------------------------------------------------------------------ exercise 10

def check_record_fields(answer) -> CheckResult:
    """Exercise 10: a list of the run record's field names (or a whole record, which is then validated)."""
    if answer is None:
        return not_answered("the list `my_fields`")
    if isinstance(answer, dict):
        try:
            rec.validate(answer)
        except rec.RecordError as err:
            return verdict(False, f"the record does not validate: {err}")
        return verdict(True, "the record validates: every required field is present and well formed")
    if isinstance(answer, str) or not hasattr(answer, "__iter__"):
        return verdict(False, "give a list of field names, e.g. ['run_name', 'seed', ...]")
    missing = missing_fields(str(name) for name in answer)
    if missing:
        hints = "; ".join(f"{name} ({rec.RUN_RECORD_FIELDS[name]})" for name in missing[:4])
        more = f" and {len(missing) - 4} more" if len(missing) > 4 else ""
        return verdict(False, f"{len(missing)} of {len(rec.RUN_RECORD_FIELDS)} fields missing: {hints}{more}")
    return verdict(True, f"all {len(rec.RUN_RECORD_FIELDS)} fields of the run record are there")


# ------------------------------------------------------------------ exercise 15

def random_policy(seed: int = 0) -> Policy:
    """A randomly initialised policy of the book's size: the floor a capability test must rise above."""
    torch.manual_seed(seed)
    return Policy(PolicyConfig())


def check_retained_test(test: Callable | None, seed: int = 0) -> CheckResult:
    """Exercise 15: ``test(policy) -> score in [0, 1]``, run on the policy before RL and after ``main``.

    The test must be deterministic (the same policy gets the same score
    twice), and it must measure something the pre-RL policy can do: the
    pre-RL policy must beat a random-weights policy by at least 0.2.
    """
    if test is None:
        return not_answered("the function `my_retained_test`")
    main = runs.load("main", seed)
    before, after = main.policy(0), main.policy()
    try:
        scores = [test(before), test(before), test(after), test(random_policy(seed))]
        scores = [float(s) for s in scores]
    except Exception as err:  # noqa: BLE001 - the reader's code may raise anything
        return verdict(False, f"the test raised {type(err).__name__}: {err}")
    if not all(0.0 <= s <= 1.0 for s in scores):
        return verdict(False, f"scores must lie in [0, 1], got {[round(s, 3) for s in scores]}")
    if scores[0] != scores[1]:
        return verdict(False, f"the same policy scored {scores[0]:.3f} and then {scores[1]:.3f}: make the test "
                              "deterministic (greedy decoding, or a fixed sampling seed)")
    if scores[0] - scores[3] < 0.2:
        return verdict(False, f"the pre-RL policy scores {scores[0]:.3f} and a random-weights policy {scores[3]:.3f}: "
                              "the test does not measure a capability the policy has to retain")
    change = scores[2] - scores[0]
    word = "kept" if change >= -0.05 else "lost"
    return verdict(True, f"before RL {scores[0]:.3f}, after main's {main.steps[-1]} steps {scores[2]:.3f} "
                         f"({change:+.3f}): the capability was {word}; random weights score {scores[3]:.3f}")


# ------------------------------------------------------------------ exercise 16

def versioning_answer(before: EvalResult, after: EvalResult) -> dict:
    """The reference answer to exercise 16 for two evaluations scored under exact 1.0."""
    v1, v2 = rw.ExactVerifier("1.0"), rw.ExactVerifier("2.0")
    same = selection.rescore(after, v1).expected_reward - selection.rescore(before, v1).expected_reward
    mixed = selection.rescore(after, v2).expected_reward - selection.rescore(before, v1).expected_reward
    flipped = selection.version_flips(before, v1, v2) + selection.version_flips(after, v1, v2)
    return {"flipped": flipped, "gain_same_version": same, "gain_mixed": mixed, "record_field": "verifier"}


def check_reward_versioning(answer: dict | None, before: EvalResult, after: EvalResult) -> CheckResult:
    """Exercise 16: the re-scoring result for ``before`` and ``after`` under exact 1.0 and 2.0.

    ``answer`` has ``flipped`` (samples of both evaluations whose reward
    differs between the versions), ``gain_same_version`` (after minus before,
    both under 1.0), ``gain_mixed`` (after under 2.0 minus before under 1.0)
    and ``record_field`` (the run-record field that pins the version).
    """
    if answer is None:
        return not_answered("the dict `versioning`")
    keys = ("flipped", "gain_same_version", "gain_mixed", "record_field")
    if not isinstance(answer, dict) or any(k not in answer for k in keys):
        return verdict(False, f"`versioning` must be a dict with keys {', '.join(keys)}")
    want = versioning_answer(before, after)
    if answer["flipped"] != want["flipped"]:
        return verdict(False, f"flipped={answer['flipped']!r}: count the samples of both evaluations whose reward "
                              "under ExactVerifier('2.0') differs from that under ExactVerifier('1.0')")
    for key in ("gain_same_version", "gain_mixed"):
        try:
            off = abs(float(answer[key]) - want[key]) > 1e-9
        except (TypeError, ValueError):
            off = True
        if off:
            how = "both under 1.0" if key == "gain_same_version" else "after under 2.0, before under 1.0"
            return verdict(False, f"{key}={answer[key]!r}: expected reward of after minus before, {how}")
    field = str(answer["record_field"]).split(".")[0].strip().lower()
    if field != "verifier":
        return verdict(False, f"record_field={answer['record_field']!r}: which run-record field names the verifier "
                              "and its version?")
    inflation = want["gain_mixed"] - want["gain_same_version"]
    if want["flipped"] == 0:
        return verdict(True, "no sample of these two evaluations changes reward between the versions, so mixing them "
                             "happens to move nothing here; only re-scoring the same samples could tell you that")
    return verdict(True, f"{want['flipped']} samples change reward between the versions; mixing them moves the gain "
                         f"by {inflation:+.4f}, a change of verifier that a report would otherwise credit to RL")
