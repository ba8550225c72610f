"""rlbook.exercises.ch1: each reference solution passes, and plausible wrong answers fail with a useful message."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rlbook.exercises import ch1

RECORD = {
    "prompt": "U:1+4?|A:",
    "completion": "5#",
    "token_ids": [5, 20],
    "logprobs": [-0.9, -0.01],
    "termination": "end-of-turn",
    "policy_version": "base@sft",
    "reward": 1.0,
    "status": "accepted",
    "reason": "answer 5 = 1+4",
}


def test_reference_labels_worked_by_hand():
    labels = ch1.rollout_labels(RECORD)
    assert labels == {
        "state": "U:1+4?|A:5",
        "action": "#",
        "trajectory": [("U:1+4?|A:", "5"), ("U:1+4?|A:5", "#")],
        "rewards": [0.0, 1.0],
        "return": 1.0,
        "policy": "base@sft",
    }


def test_reference_labels_pass():
    assert ch1.check_rollout_labels(ch1.rollout_labels(RECORD), RECORD).passed


def test_unfilled_labels_are_not_answered():
    result = ch1.check_rollout_labels(dict.fromkeys(ch1.LABELS), RECORD)
    assert not result.passed and "no answer yet" in result.message


@pytest.mark.parametrize(
    "key, wrong, hint",
    [
        ("state", "5", "includes the prompt"),
        ("state", "U:1+4?|A:5#", "already contains the action"),
        ("action", "5", "steps count from 0"),
        ("action", "7", "single character"),
        ("trajectory", "5#", "pairs each action with the state"),
        ("rewards", 1.0, "one reward per action"),
        ("rewards", [1.0, 1.0], "every earlier reward is 0"),
        ("return", 2.0, "sum of the episode's rewards"),
        ("policy", "transformer", "version recorded"),
    ],
)
def test_wrong_labels_fail_with_a_hint(key, wrong, hint):
    labels = dict(ch1.rollout_labels(RECORD), **{key: wrong})
    result = ch1.check_rollout_labels(labels, RECORD)
    assert not result.passed and result.message.startswith(f"{key}:") and hint in result.message


def test_a_partly_filled_answer_names_the_empty_labels():
    labels = dict(ch1.rollout_labels(RECORD), policy=None)
    result = ch1.check_rollout_labels(labels, RECORD)
    assert not result.passed and "policy: still empty" in result.message


def _reference_advantages(rewards):
    baseline = sum(rewards) / len(rewards)
    return [r - baseline for r in rewards]


def test_reference_advantages_pass():
    assert ch1.check_advantages(_reference_advantages).passed


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (lambda r: list(r), "rewards themselves"),
        (lambda r: ((np.array(r) - np.mean(r)) / (np.std(r) + 1e-12)).tolist(), "standard deviation"),
        (lambda r: [x - max(r) for x in r], "subtract the group's mean reward"),
        # On the first group, [1, 0, 0, 0], the median is 0 and gives the rewards back: the hint must still say median.
        (lambda r: (np.array(r) - np.median(r)).tolist(), "the group's median"),
        (lambda r: (np.mean(r) - np.array(r)).tolist(), "the sign is flipped"),
        (lambda r: _reference_advantages(r)[:-1], "one advantage per reward"),
    ],
)
def test_wrong_advantages_fail_with_a_hint(wrong, hint):
    result = ch1.check_advantages(wrong)
    assert not result.passed and hint in result.message


def test_advantages_stub_and_crash():
    assert "no answer yet" in ch1.check_advantages(lambda r: None).message
    assert "no answer yet" in ch1.check_advantages(None).message
    crash = ch1.check_advantages(lambda r: 1 / 0)
    assert not crash.passed and "ZeroDivisionError" in crash.message


def test_reference_chance_passes():
    assert ch1.check_chance_of_a_right_answer(lambda p, n: 1 - (1 - np.asarray(p, float)) ** n).passed


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (lambda p, n: p * n, "between 0 and 1"),
        (lambda p, n: (1 - p) ** n, "complement"),
        (lambda p, n: p**n, "every sample is right"),
        (lambda p, n: 1 - (1 - p) ** (2 * n), "1 minus it"),
    ],
)
def test_wrong_chance_fails_with_a_hint(wrong, hint):
    result = ch1.check_chance_of_a_right_answer(wrong)
    assert not result.passed and hint in result.message


def test_chance_stub_is_not_answered():
    assert "no answer yet" in ch1.check_chance_of_a_right_answer(lambda p, n: None).message


# ---------------------------------------------------------------- labels: other spellings, types, the record itself


def test_labels_in_other_spellings_pass():
    right = ch1.rollout_labels(RECORD)
    as_lists = dict(right, trajectory=[list(pair) for pair in right["trajectory"]], rewards=tuple(right["rewards"]))
    as_numpy = dict(right, rewards=np.array(right["rewards"]), **{"return": np.float64(1.0)})
    assert ch1.check_rollout_labels(as_lists, RECORD).passed
    assert ch1.check_rollout_labels(as_numpy, RECORD).passed


@pytest.mark.parametrize(
    "key, wrong, hint",
    [
        ("rewards", ["0", "1"], "list of numbers"),
        ("return", "1.0", "a number"),
        ("return", True, "a number"),
        ("state", 5, "a state is text"),
        ("trajectory", [(1, 2), (3, 4)], "(state, action) pairs"),
    ],
)
def test_labels_of_the_wrong_type_fail_with_a_message(key, wrong, hint):
    result = ch1.check_rollout_labels(dict(ch1.rollout_labels(RECORD), **{key: wrong}), RECORD)
    assert not result.passed and hint in result.message


@pytest.mark.parametrize("labels", [[1, 2, 3], "state", 7, ("state",)])
def test_labels_that_are_not_a_dict_get_a_message(labels):
    result = ch1.check_rollout_labels(labels, RECORD)
    assert not result.passed and "must be a dict" in result.message


@pytest.mark.parametrize(
    "record, hint",
    [
        (dict(RECORD, reward=0.0), "exact verifier"),
        (dict(RECORD, completion="6#"), "token ids"),
        (dict(RECORD, prompt="hello"), "not a task"),
        ({"prompt": "U:1+4?|A:", "completion": "5#"}, "fields"),
        (None, "rollout record"),
        (dict(RECORD, completion="5", token_ids=[5], logprobs=[-0.9]), "no action number 1"),
    ],
)
def test_a_fabricated_record_is_refused(record, hint):
    labels = ch1.rollout_labels(RECORD)
    result = ch1.check_rollout_labels(labels, record)
    assert not result.passed and hint in result.message


# ---------------------------------------------------------------- advantages: spellings, wrong answers, types


@pytest.mark.parametrize(
    "right",
    [
        lambda r: (np.array(r) - np.mean(r)).tolist(),
        lambda r: np.asarray(r, dtype=float) - np.mean(r),
        lambda r: tuple(x - sum(r) / len(r) for x in r),
    ],
)
def test_other_spellings_of_advantages_pass(right):
    assert ch1.check_advantages(right).passed


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (lambda r: [str(x - sum(r) / len(r)) for x in r], "not strings"),
        (lambda r: [sum(r) / len(r) - x for x in r], "sign is flipped"),
        (lambda r: "advantages", "list of numbers"),
        (lambda r: [x - sum(r) / (len(r) - 1) for x in r], "subtract the group's mean reward"),
    ],
)
def test_more_wrong_advantages_fail_with_a_hint(wrong, hint):
    result = ch1.check_advantages(wrong)
    assert not result.passed and hint in result.message


@pytest.mark.parametrize("junk", [3, "advantages", [1, 2]])
def test_advantages_junk_is_not_a_function(junk):
    result = ch1.check_advantages(junk)
    assert not result.passed and "must be a function" in result.message


# ---------------------------------------------------------------- chance: spellings, wrong answers, arrays


@pytest.mark.parametrize(
    "right",
    [
        lambda p, n: 1 - np.power(1 - np.asarray(p), n),
        lambda p, n: 1 - (1 - p) ** n,
        lambda p, n: -np.expm1(n * np.log1p(-np.asarray(p, float))),
    ],
)
def test_other_spellings_of_the_chance_pass(right):
    with np.errstate(divide="ignore"):
        assert ch1.check_chance_of_a_right_answer(right).passed


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (lambda p, n: 1 - (1 - p) ** (n - 1), "n - 1 samples"),
        (lambda p, n: 1 - (1 - p) ** n - p**n, "mixed group"),
        (lambda p, n: 1 - p**n, "all are right"),
        (lambda p, n: str(1 - (1 - p) ** n), "return a number"),
    ],
)
def test_classic_chance_mistakes_are_named(wrong, hint):
    result = ch1.check_chance_of_a_right_answer(wrong)
    assert not result.passed and hint in result.message
    assert "every sample is wrong" not in result.message


def test_a_chance_that_fails_on_an_array_is_refused():
    result = ch1.check_chance_of_a_right_answer(lambda p, n: 1 - math.pow(1 - p, n))
    assert not result.passed and "NumPy array" in result.message and "elementwise" in result.message
    scalar_only = ch1.check_chance_of_a_right_answer(lambda p, n: 1 - (1 - float(np.mean(p))) ** n)
    assert not scalar_only.passed and "one chance per rate" in scalar_only.message


@pytest.mark.parametrize("junk", [None, 0.5, "1 - (1 - p) ** n"])
def test_chance_junk_gets_a_message(junk):
    result = ch1.check_chance_of_a_right_answer(junk)
    assert not result.passed and ("no answer yet" in result.message or "must be a function" in result.message)


# ---------------------------------------------------------------- definitions: a pick per term

RIGHT_DEFINITIONS = {"policy": "c", "rollout": "f", "trajectory": "e", "reward": "b", "return": "a"}


@pytest.mark.parametrize(
    "answer",
    [
        RIGHT_DEFINITIONS,
        {k: v.upper() for k, v in RIGHT_DEFINITIONS.items()},
        {k: f"({v})" for k, v in RIGHT_DEFINITIONS.items()},
    ],
)
def test_definitions_in_several_spellings_pass(answer):
    assert ch1.check_definitions(answer).passed


@pytest.mark.parametrize(
    "change, hint",
    [
        ({"return": "d"}, "return: (d) defines the expected return"),
        ({"rollout": "e", "trajectory": "f"}, "rollout: (e) defines the trajectory"),
        ({"reward": "g"}, "reward: (g) defines the advantage"),
        ({"policy": "z"}, "not one of the letters"),
        ({"policy": None}, "policy: still empty"),
    ],
)
def test_mixed_up_definitions_are_named_without_the_right_letter(change, hint):
    result = ch1.check_definitions(dict(RIGHT_DEFINITIONS, **change))
    assert not result.passed and hint in result.message
    assert "right letter" not in result.message


@pytest.mark.parametrize("junk", [None, dict.fromkeys(ch1.TERMS), ["c", "f"], "cfeba", 3])
def test_definitions_junk_gets_a_message(junk):
    result = ch1.check_definitions(junk)
    assert not result.passed and ("no answer yet" in result.message or "must be a dict" in result.message)


def test_every_term_has_exactly_one_definition():
    defined = [term for _, term in ch1.DEFINITIONS.values()]
    assert all(defined.count(t) == 1 for t in ch1.TERMS) and len(defined) == len(ch1.TERMS) + 2


def test_an_answer_equal_to_everything_is_not_a_label():
    class Always:
        def __eq__(self, other):
            return True

        __hash__ = object.__hash__

    labels = dict(ch1.rollout_labels(RECORD), state=Always(), action=Always(), policy=Always())
    result = ch1.check_rollout_labels(labels, RECORD)
    assert not result.passed
