"""rlbook.exercises.ch1, its checkers in loop_terms and loop_groups: each reference solution passes, and plausible
wrong answers fail with a useful message."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rlbook.exercises import ch1, loop_terms

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
    result = ch1.check_rollout_labels(dict.fromkeys(loop_terms.LABELS), RECORD)
    assert not result.passed and "no answer yet" in result.message


@pytest.mark.parametrize(
    "key, wrong, hint",
    [
        ("state", "5", "includes the prompt"),
        ("action", "5", "steps count from 0"),
        ("action", "7", "single character"),
        ("rewards", [1.0, 1.0], "every earlier reward is 0"),
        ("return", 2.0, "sum of the episode's rewards"),
        ("policy", "transformer", "version recorded"),
    ],
)
def test_wrong_labels_fail_with_a_hint(key, wrong, hint):
    labels = dict(ch1.rollout_labels(RECORD), **{key: wrong})
    result = ch1.check_rollout_labels(labels, RECORD)
    assert not result.passed and result.message.startswith(f"{key}:") and hint in result.message


REPEATED = {
    "prompt": "U:5+6?|A:",
    "completion": "11#",
    "token_ids": [1, 1, 20],
    "logprobs": [-0.2, -0.3, -0.01],
    "termination": "end-of-turn",
    "policy_version": "base@sft",
    "reward": 1.0,
    "status": "accepted",
    "reason": "answer 11 = 5+6",
}
"""A record whose actions 0 and 1 are the same character, so that counting from 1 gets the action right by luck."""


def test_counting_actions_from_1_is_named():
    labels = dict(ch1.rollout_labels(RECORD), state=RECORD["prompt"], action="5")
    result = ch1.check_rollout_labels(labels, RECORD)
    assert not result.passed
    assert "state: that is the state before action 0: you counted from 1" in result.message
    assert "action: that is action 0: you counted from 1" in result.message


def test_counting_from_1_is_named_when_actions_0_and_1_are_the_same():
    labels = dict(ch1.rollout_labels(REPEATED), state=REPEATED["prompt"], action="1")
    result = ch1.check_rollout_labels(labels, REPEATED)
    assert not result.passed and "you counted from 1" in result.message
    assert "matches only because actions 0 and 1 are both '1'" in result.message
    assert ch1.check_rollout_labels(ch1.rollout_labels(REPEATED), REPEATED).passed


@pytest.mark.parametrize("mistake", ch1.MISTAKES["rollout-labels"])
@pytest.mark.parametrize("record", [RECORD, REPEATED])
def test_the_registered_label_mistakes_are_named(mistake, record):
    result = ch1.check_rollout_labels(mistake.wrong(record), record)
    assert not result.passed and mistake.says in result.message


def test_a_partly_filled_answer_names_the_empty_labels():
    labels = dict(ch1.rollout_labels(RECORD), policy=None)
    result = ch1.check_rollout_labels(labels, RECORD)
    assert not result.passed and "policy: still empty" in result.message


def _reference_advantages(rewards):
    baseline = sum(rewards) / len(rewards)
    return [r - baseline for r in rewards]


def test_reference_advantages_pass():
    assert ch1.check_advantages(_reference_advantages).passed


# ch1.MISTAKES["advantages"] holds the median baseline: on the first group, [1, 0, 0, 0], the median is 0 and gives
# the rewards back, and the hint must still say median.
@pytest.mark.parametrize(
    "wrong, hint",
    [
        *((m.wrong, m.says) for m in ch1.MISTAKES["advantages"]),
        (lambda r: ((np.array(r) - np.mean(r)) / (np.std(r) + 1e-12)).tolist(), "standard deviation"),
        (lambda r: [x - max(r) for x in r], "subtract the group's mean reward"),
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
        (lambda p, n: 1 - (1 - p) ** (2 * n), "1 minus it"),
        (lambda p, n: str(1 - (1 - p) ** n), "return a number"),
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


# ---------------------------------------------------------------- advantages on a batch: what the update pushes
# FIRST: [1, 1, 0, 0] pushes 2 up and 2 down, [1, 0, 0, 0] 1 up and 3 down, the two all-equal groups none.
FIRST = [[1, 1, 0, 0], [1, 1, 1, 1], [0, 0, 0, 0], [1, 0, 0, 0]]
LAST = [[1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 0], [0, 0, 0, 0]]
PUSHES = {"first": (3, 5, 8), "last": (3, 1, 12)}


def test_pushes_reference_on_batches_worked_by_hand():
    assert ch1.count_pushes(FIRST, LAST) == PUSHES


def test_pushes_reference_passes_and_reports_the_run():
    result = ch1.check_pushes(ch1.count_pushes(FIRST, LAST), FIRST, LAST)
    assert result.passed
    assert "3 answers pushed up, 5 pushed down, 8 left alone (2 groups" in result.message
    assert "Of the last batch's 11 right answers (reward 1), 3 were pushed up" in result.message


def test_pushes_in_other_spellings_pass():
    answer = {"first": np.array([3, 5, 8]), "last": [3.0, np.int64(1), 12]}
    assert ch1.check_pushes(answer, np.array(FIRST, dtype=float), tuple(map(tuple, LAST))).passed


@pytest.mark.parametrize(
    "first, hint",
    [
        ((7, 9, 0), "those are the right and the wrong answers"),
        ((5, 3, 8), "the other way round"),
        ((3, 5, 2), "'left alone' counts answers, not groups"),
        ((8, 3, 5), "right but in another order"),
        ((3, 5, 7), "add up to 15, but the batch has 16 answers (4 groups of 4)"),
        ((3, 1, 12), "the other batch's counts"),
        ((3 / 16, 5 / 16, 8 / 16), "those are shares"),
        ((3.5, 5, 8), "give whole numbers"),
        ((4, 4, 8), "pushed up and pushed down differ"),
        ((3, 5), "give three counts"),
        (None, "'first' is still empty"),
    ],
)
def test_pushes_mistakes_are_named(first, hint):
    result = ch1.check_pushes({"first": first, "last": PUSHES["last"]}, FIRST, LAST)
    assert not result.passed and result.message.startswith(("first batch:", "'first'")) and hint in result.message


@pytest.mark.parametrize("mistake", ch1.MISTAKES["advantages-on-a-batch"])
def test_the_registered_pushes_mistakes_are_named(mistake):
    result = ch1.check_pushes(mistake.wrong(FIRST, LAST), FIRST, LAST)
    assert not result.passed and mistake.says in result.message


@pytest.mark.parametrize(
    "answer, hint",
    [({"first": None, "last": None}, "no answer yet"), ([3, 5, 8], "must be a dict"), ("pushes", "must be a dict")],
)
def test_pushes_unanswered_or_not_a_dict(answer, hint):
    assert hint in ch1.check_pushes(answer, FIRST, LAST).message


@pytest.mark.parametrize("batch", ["batch", [[1, 0], [1]], [[1.0]], [], [[float("nan"), 1.0]], None])
def test_pushes_need_real_batches(batch):
    assert "F.rewards_first" in ch1.check_pushes(PUSHES, batch, LAST).message


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


@pytest.mark.parametrize("mistake", ch1.MISTAKES["chance-of-a-right-answer"])
def test_each_classic_chance_mistake_is_named_for_what_it_computes(mistake):
    result = ch1.check_chance_of_a_right_answer(mistake.wrong)
    assert not result.passed and mistake.says in result.message
    others = [m.says for m in ch1.MISTAKES["chance-of-a-right-answer"] if m is not mistake]
    assert not any(says in result.message for says in others)


def test_a_chance_that_fails_on_an_array_is_refused():
    result = ch1.check_chance_of_a_right_answer(lambda p, n: 1 - math.pow(1 - p, n))
    assert not result.passed and "NumPy array" in result.message and "elementwise" in result.message
    scalar_only = ch1.check_chance_of_a_right_answer(lambda p, n: 1 - (1 - float(np.mean(p))) ** n)
    assert not scalar_only.passed and "one chance per rate" in scalar_only.message


@pytest.mark.parametrize("junk", [None, 0.5, "1 - (1 - p) ** n"])
def test_chance_junk_gets_a_message(junk):
    result = ch1.check_chance_of_a_right_answer(junk)
    assert not result.passed and ("no answer yet" in result.message or "must be a function" in result.message)


# ---------------------------------------------------------------- chance: the held-out sums below one half

# With groups of 2, the chance 1 - (1 - p)^2 of these rates is below 0.5 on 3 sums and above on 4; with groups of 4
# below on 2 and above on 5; the rate p itself is below 0.5 on 5 sums. So each mistake gives its own count, except
# that with groups of 4 counting above one half and counting p below one half both give 5.
RATES = (0.0, 0.1, 0.2, 0.3, 0.45, 0.6, 0.9)


def test_the_reference_count_below_half_passes_and_agrees_with_the_rates():
    assert ch1.count_below_half(RATES, 2, 4) == {2: 3, 4: 2}
    result = ch1.check_below_half({2: 3, 4: 2}, RATES, 2, 4)
    assert result.passed and "groups of 2: 3 of 7 sums; groups of 4: 2 of 7 sums" in result.message


@pytest.mark.parametrize(
    "answer", [{2: 3, 4: 2}, {"2": 3.0, "4": np.int64(2)}, (3, 2), [np.float32(3.0), 2], {4: 2, 2: 3, "note": 0}]
)
def test_right_counts_below_half_pass_in_every_spelling(answer):
    assert ch1.check_below_half(answer, RATES, 2, 4).passed


@pytest.mark.parametrize(
    "answer, hint",
    [
        ({2: 4, 4: 2}, "for groups of 2, 4 is not right; it is what you get by counting the sums whose chance"),
        ({2: 5, 4: 2}, "by counting the sums whose own rate p is below one half"),
        ({2: 2, 4: 3}, "using groups of 4 instead of 2"),
        ({2: 3, 4: 1}, "for groups of 4, 1 is not right. Compute"),
        ({2: 3, 4: 8}, "is not a count of the 7 held-out sums"),
        ({2: 0.43, 4: 2}, "a count, not a share"),
        ({2: "3", 4: 2}, "whole number of sums"),
        ({2: 3}, "it has no key 4"),
        ({2: 3, 4: None}, "no answer yet"),
        ({2: None, 4: None}, "no answer yet"),
        (None, "no answer yet"),
        (3, "must be a dict with one count per group size"),
        ((3, 2, 0), "must be a dict with one count per group size"),
    ],
)
def test_wrong_counts_below_half_are_told_their_mistake(answer, hint):
    result = ch1.check_below_half(answer, RATES, 2, 4)
    assert not result.passed and hint in result.message


@pytest.mark.parametrize("mistake", ch1.MISTAKES["below-half"])
def test_the_registered_below_half_mistakes_are_named(mistake):
    result = ch1.check_below_half(mistake.wrong(RATES, 2, 4), RATES, 2, 4)
    assert not result.passed and mistake.says in result.message


def test_a_count_that_two_mistakes_give_names_both():
    message = ch1.check_below_half({2: 3, 4: 5}, RATES, 2, 4).message
    assert "above one half, not below or by counting the sums whose own rate p is below one half" in message


@pytest.mark.parametrize(
    "rates, sizes",
    [("rates", (2, 4)), ((0.1, 1.5), (2, 4)), ((), (2, 4)), (RATES, (2, "four")), (RATES, (0,)), (RATES, ())],
)
def test_below_half_with_inputs_that_are_not_the_chapters_gets_a_message(rates, sizes):
    result = ch1.check_below_half({2: 2, 4: 1}, rates, *sizes)
    assert not result.passed and "the chapter's rates and group sizes" in result.message


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
    "answer, hint",
    [
        *((m.wrong(), m.says) for m in ch1.MISTAKES["definitions"]),
        (dict(RIGHT_DEFINITIONS, policy="z"), "not one of the letters"),
        (dict(RIGHT_DEFINITIONS, policy=None), "policy: still empty"),
    ],
)
def test_mixed_up_definitions_are_named_without_the_right_letter(answer, hint):
    result = ch1.check_definitions(answer)
    assert not result.passed and hint in result.message
    assert "right letter" not in result.message


@pytest.mark.parametrize("junk", [None, dict.fromkeys(loop_terms.TERMS), ["c", "f"], "cfeba", 3])
def test_definitions_junk_gets_a_message(junk):
    result = ch1.check_definitions(junk)
    assert not result.passed and ("no answer yet" in result.message or "must be a dict" in result.message)


def test_every_term_has_exactly_one_definition():
    defined = [term for _, term in loop_terms.DEFINITIONS.values()]
    assert all(defined.count(t) == 1 for t in loop_terms.TERMS) and len(defined) == len(loop_terms.TERMS) + 2


def test_an_answer_equal_to_everything_is_not_a_label():
    class Always:
        def __eq__(self, other):
            return True

        __hash__ = object.__hash__

    labels = dict(ch1.rollout_labels(RECORD), state=Always(), action=Always(), policy=Always())
    result = ch1.check_rollout_labels(labels, RECORD)
    assert not result.passed
