"""Checkers for chapter 1's exercises (the RL loop).

- :func:`check_rollout_labels` (exercise 1): the RL terms mapped onto the
  pieces of a real rollout record.
- :func:`check_advantages` (exercise 3): advantages from rewards with a
  group-mean baseline, tested against :func:`rlbook.core.advantages.group_centered`.
- :func:`check_chance_of_a_right_answer` (exercise 7): the chance that ``n``
  samples contain at least one right answer, tested against
  :func:`rlbook.core.stats.prob_any_success`.

Each checker tests the reader's answer on fresh inputs, returns a
:class:`~rlbook.exercises.CheckResult` and never raises on a wrong answer.
"""
from __future__ import annotations

import math
import random

import numpy as np

from rlbook.core.advantages import group_centered
from rlbook.core.stats import prob_any_success

from . import CheckResult, not_answered, verdict

LABELS = ("state", "action", "trajectory", "rewards", "return", "policy")
"""The keys exercise 1 asks for."""


def rollout_labels(record: dict, step: int = 1) -> dict:
    """The reference labelling of a rollout record (exercise 1's solution).

    ``state``: the prompt plus the characters written before action ``step``;
    ``action``: the character written at ``step``; ``trajectory``: the list of
    (state, action) pairs of the whole episode; ``rewards``: one reward per
    action, 0 until the last, which carries the verifier's reward;
    ``return``: their sum; ``policy``: the version of the policy that sampled it.
    """
    prompt, text = record["prompt"], record["completion"]
    states = [prompt + text[:t] for t in range(len(text))]
    rewards = [0.0] * (len(text) - 1) + [float(record["reward"])]
    return {"state": states[step], "action": text[step], "trajectory": list(zip(states, text)),
            "rewards": rewards, "return": sum(rewards), "policy": record["policy_version"]}


def _same_pairs(given, expected) -> bool:
    try:
        return [(str(s), str(a)) for s, a in given] == [(str(s), str(a)) for s, a in expected]
    except (TypeError, ValueError):
        return False


def _label_problem(key: str, given, expected, record: dict, step: int) -> str | None:
    """What is wrong with one label, or None when it is right."""
    text = record["completion"]
    if key == "state":
        if given == expected:
            return None
        if given == text[:step]:
            return "a state includes the prompt: it is everything the policy reads, prompt and characters so far"
        if given == expected + text[step]:
            return "that state already contains the action chosen in it; take the text *before* the action"
        return f"the state before action {step} is the prompt followed by the {step} character(s) written before it"
    if key == "action":
        if given == expected:
            return None
        return f"the action at step {step} is the single character the policy wrote there (steps count from 0)"
    if key == "trajectory":
        if _same_pairs(given, expected):
            return None
        if given in (text, list(text)):
            return "those are the actions alone; a trajectory pairs each action with the state it was taken in"
        return f"give the list of (state, action) pairs, one per written character ({len(text)} in all)"
    if key == "rewards":
        if isinstance(given, (list, tuple)) and len(given) == len(expected) and np.allclose(given, expected):
            return None
        if isinstance(given, (int, float)) or (isinstance(given, (list, tuple)) and len(given) == 1):
            return f"give one reward per action ({len(text)} actions); only the last one is non-zero"
        return "the verifier pays once, after the last action: every earlier reward is 0"
    if key == "return":
        if isinstance(given, (int, float)) and math.isclose(given, expected):
            return None
        return "the return is the sum of the episode's rewards, here just the final reward"
    if given == expected:
        return None
    return "name the policy by the version recorded with the rollout (the field that says which policy sampled it)"


def check_rollout_labels(labels: dict | None, record: dict, step: int = 1) -> CheckResult:
    """Exercise 1: check the reader's mapping of RL terms onto a real rollout record."""
    if labels is None or all(labels.get(k) is None for k in LABELS):
        return not_answered("the dict `labels`")
    missing = [k for k in LABELS if labels.get(k) is None]
    expected = rollout_labels(record, step)
    problems = [f"{k}: {p}" for k in LABELS if k not in missing
                if (p := _label_problem(k, labels[k], expected[k], record, step))]
    problems += [f"{k}: still empty" for k in missing]
    if problems:
        return verdict(False, "; ".join(problems))
    return verdict(True, f"all {len(LABELS)} labels match the rollout {record['prompt']}{record['completion']}")


def _returns_none(fn, *args) -> bool:
    """True when the reader's function still returns None (the unfilled stub)."""
    try:
        return fn(*args) is None
    except Exception:  # noqa: BLE001 - a raising function is reported by the check itself
        return False


def _fresh_groups(seed: int) -> list[list[float]]:
    rng = random.Random(seed)
    groups = [[1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0], [0.0] * 8, [0.5]]
    for _ in range(20):
        size = rng.choice([2, 3, 4, 8, 16])
        values = [0.0, 1.0] if rng.random() < 0.6 else [0.0, 0.25, 0.5, 1.0, 2.0]
        groups.append([rng.choice(values) for _ in range(size)])
    return groups


def check_advantages(fn, seed: int = 0) -> CheckResult:
    """Exercise 3: ``fn(rewards) -> advantages`` for one group, against a group-mean baseline."""
    if fn is None or _returns_none(fn, [1.0, 0.0]):
        return not_answered("the function `advantages_from_rewards`")
    for rewards in _fresh_groups(seed):
        expected = group_centered(rewards).tolist()
        try:
            got = [float(x) for x in fn(list(rewards))]
        except Exception as err:  # noqa: BLE001 - report any failure of the reader's code
            return verdict(False, f"calling it on {rewards} raised {type(err).__name__}: {err}")
        if len(got) != len(expected):
            return verdict(False, f"for {rewards} it returned {len(got)} numbers; give one advantage per reward")
        if not np.allclose(got, expected, atol=1e-6):
            hint = "subtract the group's mean reward from each reward"
            if np.allclose(got, rewards):
                hint = "these are the rewards themselves: subtract the baseline (the group's mean reward)"
            elif len(set(rewards)) > 1 and np.allclose(np.array(got) * np.std(rewards), expected, atol=1e-6):
                hint = "you divided by the standard deviation: the exercise asks for the mean baseline only"
            return verdict(False, f"for rewards {rewards} expected {np.round(expected, 4).tolist()}, "
                                  f"got {np.round(got, 4).tolist()}: {hint}")
    return verdict(True, f"matches group_centered on {len(_fresh_groups(seed))} groups, "
                         "including all-equal groups whose advantages are all 0")


def check_chance_of_a_right_answer(fn, seed: int = 0) -> CheckResult:
    """Exercise 7: ``fn(p, n)`` = probability that ``n`` samples of success rate ``p`` contain a right one."""
    if fn is None or _returns_none(fn, 0.5, 1):
        return not_answered("the function `chance_of_a_right_answer`")
    rng = random.Random(seed)
    cases = [(0.0, 32), (1.0, 1), (0.5, 1), (0.1, 16), (0.02, 32)]
    cases += [(round(rng.random(), 3), rng.choice([1, 2, 4, 8, 16, 32, 64])) for _ in range(20)]
    for p, n in cases:
        expected = prob_any_success(p, n)
        try:
            got = float(fn(p, n))
        except Exception as err:  # noqa: BLE001 - report any failure of the reader's code
            return verdict(False, f"calling it with p={p}, n={n} raised {type(err).__name__}: {err}")
        if not math.isclose(got, expected, abs_tol=1e-9, rel_tol=1e-6):
            if not 0 <= got <= 1:
                hint = "a probability lies between 0 and 1 (adding up p once per sample, for one, can exceed 1)"
            elif math.isclose(got, (1 - p) ** n, abs_tol=1e-9):
                hint = "that is the chance that every sample is wrong; you want its complement"
            elif math.isclose(got, p ** n, abs_tol=1e-9):
                hint = "that is the chance that every sample is right; 'at least one' is 1 minus 'none'"
            else:
                hint = "compute the chance that no sample is right, then take 1 minus it"
            return verdict(False, f"for p={p}, n={n} expected {expected:.6f}, got {got:.6f}: {hint}")
    return verdict(True, f"matches 1 - (1 - p)^n on {len(cases)} cases, including p = 0 (never) and p = 1 (always)")
