"""Exercise 1.1's checkers and reference answers (chapter 1, the RL loop): the RL terms, then a real rollout.

- :func:`check_definitions`, the first half: each term (policy, rollout,
  trajectory, reward, return) matched with the letter of its definition in
  :data:`DEFINITIONS`; the reference answer is :func:`fill_definitions`.
- :func:`check_rollout_labels`, the second half: state, action, trajectory,
  rewards, return and policy read off a real rollout record, graded against
  the reference labelling, :func:`rollout_labels`.

:mod:`rlbook.exercises.ch1` registers both exercises, and the page calls these
checkers through it (``ch1.check_rollout_labels``). Each checker returns a
:class:`~rlbook.exercises.CheckResult` and never raises on a wrong answer.
"""

from __future__ import annotations

import math

import numpy as np

from rlbook.core import rewards as rw
from rlbook.core.world import VOCAB, decode, parse_prompt

from . import CheckResult, as_number, as_numbers, never_raises, not_answered, verdict

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
        if given == record["prompt"] + text[: step - 1]:
            return (
                f"that is the state before action {step - 1}: you counted from 1, but actions count from 0, so"
                f" action {step} is character number {step + 1} of the completion and its state ends with the"
                f" {step} character(s) written before it"
            )
        return f"the state before action {step} is the prompt followed by the {step} character(s) written before it"
    if key == "action":
        if _equal(given, expected):
            return None
        if given == text[step - 1]:
            return (
                f"that is action {step - 1}: you counted from 1, but steps count from 0, so action {step} is"
                f" character number {step + 1} of the completion"
            )
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


def _lucky_action(labels: dict, record: dict, step: int) -> list[str]:
    """A note when the state was counted from 1 and the action is right only because it repeats the one before."""
    text = record["completion"]
    counted_from_one = _equal(labels.get("state"), record["prompt"] + text[: step - 1])
    if counted_from_one and text[step - 1] == text[step] and _equal(labels.get("action"), text[step]):
        note = (
            f"action: it matches only because actions {step - 1} and {step} are both {text[step]!r};"
            f" counted from 0, action {step} is character number {step + 1}"
        )
        return [note]
    return []


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
        return verdict(False, "; ".join(problems + _lucky_action(labels, record, step)))
    return verdict(True, f"all {len(LABELS)} labels match the rollout {record['prompt']}{record['completion']}")
