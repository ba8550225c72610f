"""Every registered exercise: its reference solution passes its own check, and its checker answers junk kindly.

The registry (rlbook.exercises.registry) is the one list of the book's
exercises; these tests iterate it, so a new exercise is covered by
registering it. Some inputs are built from the book's runs, hence tests/runs.
"""

from __future__ import annotations

import contextlib
import functools
import io

import numpy as np
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rlbook.book._available import available
from rlbook.exercises.registry import all_exercises

EXERCISES = all_exercises()
# An exercise whose chapter's facts need a missing extra (the TRL appendix's without the trl extra) is left out, as
# the build leaves out its page.
NAMES = sorted(name for name, exercise in EXERCISES.items() if available(exercise.chapter))

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
answers = st.one_of(junk, junk.map(lambda value: lambda *args, **kwargs: value))


@functools.cache
def inputs(name: str) -> tuple:
    return EXERCISES[name].book_inputs()


def test_every_reference_solution_passes_its_own_check():
    failed = {
        name: EXERCISES[name].run_reference(*inputs(name)).message
        for name in NAMES
        if not EXERCISES[name].run_reference(*inputs(name)).passed
    }
    assert not failed, failed


def test_every_named_mistake_is_refused_with_its_words():
    missed = {}
    for name in NAMES:
        exercise = EXERCISES[name]
        for mistake in exercise.mistakes:
            result = exercise.answer_with(mistake.wrong, *inputs(name))
            if result.passed or mistake.says not in result.message:
                missed[f"{name}: {mistake.says}"] = result.message
    assert not missed, missed


def test_most_exercises_name_their_mistakes():
    named = [name for name in NAMES if EXERCISES[name].mistakes]
    assert len(named) >= len(NAMES) * 3 // 4, sorted(set(NAMES) - set(named))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(answer=answers, which=st.sampled_from(NAMES))
def test_every_checker_answers_junk_with_a_message(answer, which):
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        result = EXERCISES[which].check(answer, *inputs(which))
    assert not result.passed and result.message and printed.getvalue().startswith("NOT YET")
    assert "could not read your answer" not in result.message  # each checker names the problem itself
