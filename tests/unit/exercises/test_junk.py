"""Every checker answers random junk with a NOT YET message, never a traceback (a property test over all of them).

Every registered exercise's checker is fed junk as its answer by
tests/runs/test_exercise_registry.py; this file also feeds junk in the other
arguments (a record, prompts), and covers the checkers not yet registered.
The checkers that replay trained runs (chapter 8's gap, selection, record
review and retained test) are fed junk that they refuse
before loading a run; the rest get any junk hypothesis draws.
"""

from __future__ import annotations

import contextlib
import io

import numpy as np
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rlbook.exercises import as_number, ch1, ch2, ch3, ch8, loop_terms

RECORD = {
    "prompt": "U:1+4?|A:",
    "completion": "5#",
    "token_ids": [5, 20],
    "logprobs": [-0.9, -0.01],
    "termination": "end-of-turn",
    "policy_version": "base@sft",
    "reward": 1.0,
}

atoms = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 300),
    st.floats(allow_nan=True),
    st.text(max_size=12),
    st.binary(max_size=4),
    st.just(np.array([1.0, np.nan])),
    st.just(torch.zeros(2, 3)),
    st.just(np.float32(0.5)),
)
junk = st.recursive(
    atoms,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.tuples(inner, inner),
        st.dictionaries(st.one_of(st.text(max_size=8), st.integers()), inner, max_size=4),
    ),
    max_leaves=8,
)
returning_junk = junk.map(lambda value: lambda *args, **kwargs: value)
answers = st.one_of(junk, returning_junk)

CHECKS = [
    lambda a: ch1.check_rollout_labels(a, RECORD),
    lambda a: ch1.check_rollout_labels(dict.fromkeys(loop_terms.LABELS, 1), a),
    ch1.check_advantages,
    ch1.check_chance_of_a_right_answer,
    lambda a: ch1.check_below_half(a, (0.0, 0.3, 0.9), 2, 4),
    # a count no junk list of rates can make true: the check must fail on the junk input, not pass by chance
    lambda a: ch1.check_below_half({2: 10**6, 4: 10**6}, a, 2, 4),
    lambda a: ch1.check_below_half({2: 10**6, 4: 10**6}, (0.0, 0.3, 0.9), a, 4),
    lambda a: ch1.check_pushes(a, [[1, 0], [1, 1]], [[1, 1], [0, 1]]),
    lambda a: ch1.check_pushes({"first": (1, 1, 2), "last": (1, 1, 2)}, a, a),
    lambda a: ch3.check_push_size(a, [[1, 0], [1, 1]], [[1, 1], [0, 1]]),
    lambda a: ch3.check_push_size({"first": (0.25, 0.5), "last": (0.25, 0.5)}, a, a),
    lambda a: ch2.check_process_scorer(a, ["U:3+4+5?|A:"], ["7,12#"]),
    lambda a: ch2.check_process_scorer(ch2.reference_process_score, a, a),
    ch2.check_verifier,
    lambda a: ch2.check_blind_spot(a, ch2.reference_verifier),
    lambda a: ch2.check_blind_spot("6,12#", a),
    lambda a: ch2.check_rule_change(a, ["U:3+4+5?|A:"] * 3, ["7,12#", "6,12#", "6,11#"]),
    lambda a: ch2.check_disagreement_count(a, ["U:3+4+5?|A:"] * 4, ["7,12#", "6,12#", "7,12#3", "7,13#"]),
    lambda a: ch2.check_disagreement_count(1, a, a),
    lambda a: ch2.check_disagreement_pick(a, ["U:3+4+5?|A:"] * 4, ["7,12#", "6,12#", "7,12#", "7,13#"]),
    lambda a: ch2.check_disagreement_pick(1, a, a),
    ch1.check_definitions,
    lambda a: ch8.check_test_pick_gap(ch8.pick_gap, predicted=a if a is not None and as_number(a) is None else "?"),
    ch8.check_matched_comparison,
    lambda a: ch8.check_reward_versioning(a, *ch8.VERSIONING_CASES[0]),
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(answer=answers, which=st.integers(0, len(CHECKS) - 1))
def test_every_checker_answers_junk_with_a_message(answer, which):
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        result = CHECKS[which](answer)
    assert not result.passed and result.message and printed.getvalue().startswith("NOT YET")
    assert "could not read your answer" not in result.message  # each checker names the problem itself


@settings(max_examples=25, deadline=None)
@given(answer=answers)
def test_run_replaying_checkers_refuse_junk_that_is_not_a_function(answer):
    if callable(answer):
        return
    for check in (ch8.check_retained_test, ch8.check_pick_and_score, ch8.check_record_review, ch8.check_test_pick_gap):
        result = check(answer)
        assert not result.passed and ("must be a function" in result.message or "no answer yet" in result.message)
