"""Checkers for chapter 1's exercises (the RL loop), each registered with its reference solution.

- :func:`check_definitions` and :func:`check_rollout_labels` (Exercise 1.1):
  the RL terms defined, then mapped onto the pieces of a real rollout record.
- :func:`check_advantages` (Exercise 1.2): advantages from rewards with a
  group-mean baseline, tested against :func:`rlbook.core.advantages.group_centered`.
- :func:`check_chance_of_a_right_answer` (Exercise 1.3): the chance that ``n``
  samples contain at least one right answer, tested against
  :func:`rlbook.core.stats.prob_any_success`.

Each checker tests the reader's answer on fresh inputs, returns a
:class:`~rlbook.exercises.CheckResult` and never raises on a wrong answer.
"""

from __future__ import annotations

import math
import random
from typing import cast

import numpy as np

from rlbook.core import rewards as rw
from rlbook.core.advantages import group_centered
from rlbook.core.stats import prob_any_success
from rlbook.core.world import VOCAB, decode, parse_prompt

from . import CheckResult, as_number, as_numbers, never_raises, not_a_function, not_answered, verdict
from .registry import Exercise, register

LABELS = ("state", "action", "trajectory", "rewards", "return", "policy")
"""The keys Exercise 1.1 asks for."""


def rollout_labels(record: dict, step: int = 1) -> dict:
    """The reference labelling of a rollout record (Exercise 1.1's solution).

    ``state``: the prompt plus the characters written before action ``step``;
    ``action``: the character written at ``step``; ``trajectory``: the list of
    (state, action) pairs of the whole episode; ``rewards``: one reward per
    action, 0 until the last, which carries the verifier's reward;
    ``return``: their sum; ``policy``: the version of the policy that sampled it.
    """
    prompt, text = record["prompt"], record["completion"]
    states = [prompt + text[:t] for t in range(len(text))]
    rewards = [0.0] * (len(text) - 1) + [float(record["reward"])]
    return {
        "state": states[step],
        "action": text[step],
        "trajectory": list(zip(states, text)),
        "rewards": rewards,
        "return": sum(rewards),
        "policy": record["policy_version"],
    }


def _same_pairs(given, expected) -> bool:
    if not isinstance(given, (list, tuple)) or len(given) != len(expected):
        return False
    return all(
        isinstance(pair, (list, tuple))
        and len(pair) == 2
        and all(type(x) is str for x in pair)
        and tuple(pair) == tuple(want)
        for pair, want in zip(given, expected)
    )


def _equal(given, expected) -> bool:
    """``given == expected`` for an answer of the expected type only: an object whose ``__eq__`` says yes to
    everything is not a label."""
    return type(given) is type(expected) and given == expected


def _label_problem(key: str, given, expected, record: dict, step: int) -> str | None:
    """What is wrong with one label, or None when it is right."""
    text = record["completion"]
    if key == "state":
        if _equal(given, expected):
            return None
        if not isinstance(given, str):
            return f"a state is text (a str), got {type(given).__name__}"
        if given == text[:step]:
            return "a state includes the prompt: it is everything the policy reads, prompt and characters so far"
        if given == expected + text[step]:
            return "that state already contains the action chosen in it; take the text *before* the action"
        return f"the state before action {step} is the prompt followed by the {step} character(s) written before it"
    if key == "action":
        if _equal(given, expected):
            return None
        if given == text[step - 1]:
            return f"that is action {step - 1}: steps count from 0, so action {step} is the next character"
        return f"the action at step {step} is the single character the policy wrote there (steps count from 0)"
    if key == "trajectory":
        if _same_pairs(given, expected):
            return None
        if given in (text, list(text)):
            return "those are the actions alone; a trajectory pairs each action with the state it was taken in"
        return f"give the list of (state, action) pairs of text, one per written character ({len(text)} in all)"
    if key == "rewards":
        values = as_numbers(given)
        if values is not None and len(values) == len(expected) and np.allclose(values, expected):
            return None
        if as_number(given) is not None or (values is not None and len(values) == 1):
            return f"give one reward per action ({len(text)} actions); only the last one is non-zero"
        if values is None:
            return "give a list of numbers, one reward per action (not text, not True/False)"
        return "the verifier pays once, after the last action: every earlier reward is 0"
    if key == "return":
        value = as_number(given)
        if value is not None and math.isclose(value, expected):
            return None
        if value is None:
            return f"the return is a number, got {type(given).__name__}"
        return "the return is the sum of the episode's rewards, here just the final reward"
    if _equal(given, expected):
        return None
    return "name the policy by the version recorded with the rollout (the field that says which policy sampled it)"


def _record_problem(record, step: int) -> str | None:
    """Why ``record`` is not a real rollout record of the book's sampler, or None when it is one.

    The check grades against the record, so it verifies it: the prompt is a
    task, the token ids spell the completion, there is one log-probability
    per action, and the reward is the exact verifier's.
    """
    fields = ("prompt", "completion", "token_ids", "logprobs", "policy_version", "reward")
    if not isinstance(record, dict) or any(k not in record for k in fields):
        return f"`record` must be the chapter's rollout record, a dict with the fields {', '.join(fields)}"
    prompt, text = record["prompt"], record["completion"]
    if not isinstance(prompt, str) or not isinstance(text, str) or parse_prompt(prompt) is None:
        return "`record` must be the chapter's rollout record: its prompt is not a task"
    if not isinstance(step, int) or isinstance(step, bool) or not 0 < step < len(text):
        return f"the rollout has {len(text)} actions, so there is no action number {step!r} after the first"
    ids = record["token_ids"]
    if (
        not isinstance(ids, (list, tuple))
        or not all(isinstance(i, int) and 0 <= i < len(VOCAB) for i in ids)
        or decode(ids) != text
        or len(record["logprobs"]) != len(text)
    ):
        return "`record` is not a rollout as the sampler records it: its token ids do not spell its completion"
    if as_number(record["reward"]) != rw.get_verifier("exact")(prompt, text).reward:
        return "`record` is not a rollout as the book records it: its reward is not the exact verifier's"
    return None


@never_raises
def check_rollout_labels(labels: dict | None, record: dict, step: int = 1) -> CheckResult:
    """Exercise 1.1: check the reader's mapping of RL terms onto a real rollout record."""
    if labels is None or (isinstance(labels, dict) and all(labels.get(k) is None for k in LABELS)):
        return not_answered("the dict `labels`")
    if not isinstance(labels, dict):
        return verdict(False, f"`labels` must be a dict with the keys {', '.join(LABELS)}, got {type(labels).__name__}")
    problem = _record_problem(record, step)
    if problem:
        return verdict(False, problem)
    missing = [k for k in LABELS if labels.get(k) is None]
    expected = rollout_labels(record, step)
    problems = [
        f"{k}: {p}"
        for k in LABELS
        if k not in missing
        if (p := _label_problem(k, labels[k], expected[k], record, step))
    ]
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


# Mistakes a reader's advantages can make, each as what it returns for a group, and what to tell them.
ADVANTAGE_MISTAKES = (
    (lambda r: r, "these are the rewards themselves: subtract the baseline (the group's mean reward)"),
    (lambda r: r - np.median(r), "you subtracted the group's median; the baseline here is its mean reward"),
    (lambda r: r.mean() - r, "the sign is flipped: an advantage is the reward minus the baseline, not the reverse"),
    (
        lambda r: (r - r.mean()) / (r.std() or 1.0),
        "you divided by the standard deviation: the exercise asks for the mean baseline only",
    ),
)


def _advantage_hint(answers: list[tuple[list[float], list[float], list[float]]]) -> str:
    """Which of :data:`ADVANTAGE_MISTAKES` explains every group's answer; judged on all groups at once, since on
    one group two mistakes can agree (a 0/1 group whose median is 0 gives its rewards back)."""
    for mistake, hint in ADVANTAGE_MISTAKES:
        if all(np.allclose(got, mistake(np.array(rewards)), atol=1e-6) for rewards, got, _ in answers):
            return hint
    return "subtract the group's mean reward from each reward"


@never_raises
def check_advantages(fn, seed: int = 0) -> CheckResult:
    """Exercise 1.2: ``fn(rewards) -> advantages`` for one group, against a group-mean baseline."""
    if fn is None or (callable(fn) and _returns_none(fn, [1.0, 0.0])):
        return not_answered("the function `advantages_from_rewards`")
    if not callable(fn):
        return not_a_function("advantages_from_rewards", fn)
    answers, problem = [], None
    for rewards in _fresh_groups(seed):
        expected = group_centered(rewards).tolist()
        try:
            returned = fn(list(rewards))
        except Exception as err:  # noqa: BLE001 - report any failure of the reader's code
            problem = f"calling it on {rewards} raised {type(err).__name__}: {err}"
            break
        got = as_numbers(returned)
        if got is None:
            problem = (
                f"for {rewards} it returned {returned!r:.80}; return a list of numbers (floats, not strings), "
                "one advantage per reward"
            )
            break
        if len(got) != len(expected):
            problem = f"for {rewards} it returned {len(got)} numbers; give one advantage per reward"
            break
        answers.append((rewards, got, expected))
    wrong = [(r, g, e) for r, g, e in answers if not np.allclose(g, e, atol=1e-6)]
    if wrong:  # a wrong value on an earlier group says more than a crash on a later one
        rewards, got, expected = wrong[0]
        return verdict(
            False,
            f"for rewards {rewards} expected {np.round(expected, 4).tolist()}, "
            f"got {np.round(got, 4).tolist()}: {_advantage_hint(answers)}",
        )
    if problem:
        return verdict(False, problem)
    return verdict(
        True,
        f"matches group_centered on {len(_fresh_groups(seed))} groups, "
        "including all-equal groups whose advantages are all 0",
    )


CHANCE_MISTAKES = (
    (lambda p, n: (1 - p) ** n, "that is the chance that every sample is wrong; you want its complement"),
    (lambda p, n: p**n, "that is the chance that every sample is right; 'at least one' is 1 minus 'none'"),
    (lambda p, n: 1 - (1 - p) ** (n - 1), "that counts n - 1 samples: every one of the n samples may be right"),
    (
        lambda p, n: 1 - (1 - p) ** n - p**n,
        "that is the chance of a mixed group (some right, some wrong); a group of right answers only counts too",
    ),
    (lambda p, n: 1 - (1 - p) ** (n + 1), "that counts n + 1 samples; there are n"),
    (lambda p, n: 1 - p**n, "that is 1 minus the chance that all are right; take 1 minus the chance that none is"),
)
"""Formulas students write instead of 1 - (1 - p)^n, each with what it computes (Exercise 1.3's messages)."""


def _chance_cases(seed: int) -> list[tuple[float, int]]:
    rng = random.Random(seed)
    cases = [(0.0, 32), (1.0, 1), (0.5, 1), (0.1, 16), (0.02, 32), (0.3, 2)]
    return cases + [(round(rng.uniform(0.01, 0.99), 3), rng.choice([2, 3, 4, 8, 16, 32, 64])) for _ in range(20)]


def _diagnose_chance(got: list[float], cases: list[tuple[float, int]]) -> str:
    """The mistake whose formula gives every value the reader's function gave, else a general hint."""
    if any(not 0 <= g <= 1 for g in got):
        return "a probability lies between 0 and 1 (adding up p once per sample, for one, can exceed 1)"
    for formula, hint in CHANCE_MISTAKES:
        if np.allclose(got, [formula(p, n) for p, n in cases], atol=1e-9, rtol=1e-6):
            return hint
    return "compute the chance that no sample is right, then take 1 minus it"


@never_raises
def check_chance_of_a_right_answer(fn, seed: int = 0) -> CheckResult:
    """Exercise 1.3: ``fn(p, n)`` = probability that ``n`` samples of success rate ``p`` contain a right one.

    Tested on scalar rates and on a NumPy array of rates (the exercise applies
    it to every prompt's rate at once), against :func:`prob_any_success`.
    """
    if fn is None or (callable(fn) and _returns_none(fn, 0.5, 1)):
        return not_answered("the function `chance_of_a_right_answer`")
    if not callable(fn):
        return not_a_function("chance_of_a_right_answer", fn)
    cases = _chance_cases(seed)
    got = []
    for p, n in cases:
        try:
            value = fn(p, n)
        except Exception as err:  # noqa: BLE001 - report any failure of the reader's code
            return verdict(False, f"calling it with p={p}, n={n} raised {type(err).__name__}: {err}")
        number = as_number(value)
        if number is None:
            return verdict(False, f"for p={p}, n={n} it returned {value!r:.60}; return a number (a float)")
        got.append(number)
    expected = cast(list[float], [prob_any_success(p, n) for p, n in cases])  # a float p gives a float
    if not np.allclose(got, expected, atol=1e-9, rtol=1e-6):
        i = next(i for i, (g, e) in enumerate(zip(got, expected)) if not math.isclose(g, e, abs_tol=1e-9, rel_tol=1e-6))
        return verdict(
            False,
            f"for p={cases[i][0]}, n={cases[i][1]} expected {expected[i]:.6f}, got {got[i]:.6f}: "
            f"{_diagnose_chance(got, cases)}",
        )
    rates = np.array([p for p, _ in cases[:8]])
    try:
        values = fn(rates, 16)
        array = np.asarray(values, dtype=float) if not isinstance(values, str) else None
    except Exception as err:  # noqa: BLE001 - report any failure of the reader's code
        return verdict(
            False,
            f"it works for one p, but calling it with a NumPy array of {len(rates)} rates raised "
            f"{type(err).__name__}: {err}; use operations that work elementwise (**, not math.pow)",
        )
    if array is None or array.shape != rates.shape or not np.allclose(array, prob_any_success(rates, 16)):
        return verdict(
            False,
            f"it works for one p, but given an array of {len(rates)} rates it must return one "
            "chance per rate, elementwise",
        )
    return verdict(
        True,
        f"matches 1 - (1 - p)^n on {len(cases)} cases, including p = 0 (never) and p = 1 (always), "
        "and on an array of rates",
    )


DEFINITIONS: dict[str, tuple[str, str]] = {
    "a": ("the sum of an episode's rewards", "return"),
    "b": ("the number the verifier pays after an action: 1 after the last action of a right answer, else 0", "reward"),
    "c": ("the model's distribution over the next character, given the text so far", "policy"),
    "d": ("the chance that a sampled answer is right", "expected return"),
    "e": ("what an episode leaves behind: the states it passed through and the action taken in each", "trajectory"),
    "f": ("one episode sampled from the policy, from the prompt to the end mark or the budget", "rollout"),
    "g": ("a reward minus the mean reward of its prompt's group", "advantage"),
}
"""Exercise 1.1's definitions, by letter: the text shown and the term it defines (two are decoys)."""

TERMS = ("policy", "rollout", "trajectory", "reward", "return")
"""The terms Exercise 1.1 asks the reader to define, by picking a letter of :data:`DEFINITIONS` for each."""


def definitions_table() -> str:
    """The definitions to choose from, one ``(letter) text`` line each (Exercise 1.1)."""
    return "\n".join(f"({k}) {text}" for k, (text, _) in DEFINITIONS.items())


@never_raises
def check_definitions(answer: dict | None) -> CheckResult:
    """Exercise 1.1, first half: ``answer`` maps each of :data:`TERMS` to the letter of its definition.

    A wrong letter is told which term that definition belongs to, so the
    reader sees which two ideas were mixed up; the right letter is not given.
    """
    if answer is None or (isinstance(answer, dict) and all(answer.get(t) is None for t in TERMS)):
        return verdict(
            False,
            "no answer yet: give each term in `definitions` the letter of its definition, "
            "and run the cell again:\n" + definitions_table(),
        )
    if not isinstance(answer, dict):
        return verdict(False, f"`definitions` must be a dict from each of {', '.join(TERMS)} to a letter")
    problems = []
    for term in TERMS:
        given = answer.get(term)
        letter = given.strip().strip("()").lower() if isinstance(given, str) else None
        if given is None:
            problems.append(f"{term}: still empty")
        elif letter not in DEFINITIONS:
            problems.append(f"{term}: {given!r:.20} is not one of the letters {', '.join(DEFINITIONS)}")
        elif DEFINITIONS[letter][1] != term:
            problems.append(f"{term}: ({letter}) defines the {DEFINITIONS[letter][1]}, not the {term}")
    if problems:
        return verdict(False, "; ".join(problems))
    return verdict(
        True,
        "each term matches its definition; of the two left over, (d) is the expected return and "
        "(g) the advantage, both built from these",
    )


def fill_definitions() -> dict:
    """Exercise 1.1's reference answer, first half: the letter of each term's definition."""
    return {"policy": "c", "rollout": "f", "trajectory": "e", "reward": "b", "return": "a"}


def advantages_from_rewards(rewards):
    """Exercise 1.2's reference solution: each reward minus the group's mean reward."""
    baseline = sum(rewards) / len(rewards)
    return [r - baseline for r in rewards]


def chance_of_a_right_answer(p, n):
    """Exercise 1.3's reference solution: 1 minus the chance that all ``n`` samples are wrong."""
    return 1 - (1 - np.asarray(p, dtype=float)) ** n


def shown_record() -> dict:
    """The rollout chapter 1 prints for Exercise 1.1: the shown base policy's, on the workshop's uncertain sum."""
    from rlbook import book
    from rlbook.analysis.workshop import rollout_record
    from rlbook.runs import load

    facts = book.load("loop", check=False)
    policy = load("base", facts.shown).policy(step=1)
    task = parse_prompt(facts.unsure_prompt)
    assert task is not None  # the chapter's own prompt
    return rollout_record(policy, task, seed=facts.shown)


for _exercise in (
    Exercise("definitions", "loop", check_definitions, fill_definitions, answer="value", answer_name="definitions"),
    Exercise(
        "rollout-labels",
        "loop",
        check_rollout_labels,
        rollout_labels,
        answer="value",
        inputs=lambda: (shown_record(),),
        answer_name="labels",
        call="record",
    ),
    Exercise("advantages", "loop", check_advantages, advantages_from_rewards),
    Exercise("chance-of-a-right-answer", "loop", check_chance_of_a_right_answer, chance_of_a_right_answer),
):
    register(_exercise)
