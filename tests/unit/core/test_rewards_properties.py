"""Property tests of rlbook.core.rewards: verifiers never raise, and exact means exact.

Each ``max_examples`` below is the number of generated inputs a test runs
(fewer only if Hypothesis exhausts the space).
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rlbook.core.rewards import (
    PROCESS_STATUSES,
    STATUSES,
    ExactVerifier,
    FailOpenVerifier,
    ShapedVerifier,
    process_score,
)
from rlbook.core.world import EOT, VOCAB, all_tasks

TASKS = all_tasks("single") + all_tasks("multi")
VERIFIERS = [
    ExactVerifier("1.0"),
    ExactVerifier("2.0"),
    FailOpenVerifier(),
    ShapedVerifier(0.5),
    ShapedVerifier(1.0, "2.0"),
]
TRICKY = "".join(VOCAB) + EOT * 3 + "\u0663\u0667\u096a\uff17\u00b2+-_ \t\r\x00\x0b\u200b\u00a0\u2028"
"""The vocabulary plus non-ASCII digits, signs, control and invisible characters."""

SETTINGS = settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])

tasks = st.sampled_from(TASKS)
short_text = st.one_of(st.text(max_size=40), st.text(alphabet=TRICKY, max_size=40))
long_text = st.builds(lambda piece, times: piece * times, short_text.filter(bool), st.integers(1, 400))
digit_runs = st.builds(lambda n, end: "9" * n + end, st.integers(4000, 6000), st.sampled_from(["", EOT, "," + EOT]))
completions = st.one_of(
    short_text, long_text, digit_runs, st.builds(lambda t, tail: t.completion + tail, tasks, short_text)
)
prompts = st.one_of(tasks.map(lambda t: t.prompt), short_text)


@SETTINGS
@given(prompts, completions)
def test_verifiers_and_process_scorer_never_raise(prompt, completion):
    for verifier in VERIFIERS:
        v = verifier(prompt, completion)
        assert v.status in STATUSES and v.reason
        assert v.reward >= 0.0
    p = process_score(prompt, completion)
    assert p.status in PROCESS_STATUSES and p.reason
    assert 0.0 <= p.score <= 1.0
    if p.status == "scored":
        assert len(p.steps) == prompt.count("+")  # one step per addition
        assert p.score == sum(p.steps) / len(p.steps)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.integers(), st.floats(), st.binary(), st.none(), st.lists(st.text())), completions)
def test_non_text_inputs_are_unverifiable(thing, completion):
    for verifier in VERIFIERS:
        assert verifier(thing, completion).status == "unverifiable"
        assert verifier("U:3+4?|A:", thing).status == "unverifiable"
    assert process_score(thing, completion).status == "unscorable"


def test_exact_accepts_every_right_canonical_answer():
    """Exhaustive over all 1,100 prompts of both worlds (not generated)."""
    for task in TASKS:
        for verifier in (ExactVerifier("1.0"), ExactVerifier("2.0")):
            v = verifier(task.prompt, task.completion)
            assert (v.reward, v.status) == (1.0, "accepted"), (task.prompt, v.reason)
        assert process_score(task.prompt, task.completion).score == 1.0


@SETTINGS
@given(tasks, st.integers(-(10**6), 10**6), st.integers(0, 10**6))
def test_exact_never_accepts_a_wrong_sum(task, wrong, s1):
    if wrong == task.answer:
        wrong += 1
    answer = str(wrong) if task.world == "single" else f"{s1},{wrong}"
    for verifier in (ExactVerifier("1.0"), ExactVerifier("2.0")):
        v = verifier(task.prompt, answer + EOT)
        assert v.reward == 0.0
        assert v.status == ("incorrect" if wrong >= 0 else "malformed")


@SETTINGS
@given(st.sampled_from(all_tasks("multi")), st.integers(0, 10**6))
def test_outcome_is_blind_to_the_step(task, s1):
    v = ExactVerifier()(task.prompt, f"{s1},{task.answer}{EOT}")
    assert v.status == "accepted"
    assert process_score(task.prompt, f"{s1},{task.answer}{EOT}").steps[0] == (s1 == task.steps[0])


@SETTINGS
@given(tasks, st.integers(0, 3), st.integers(0, 3), st.integers(0, 3))
def test_version_two_accepts_padding_version_one_does_not(task, left, right, zeros):
    padded = ",".join(" " * left + "0" * zeros + str(s) + " " * right for s in task.steps) + EOT
    assert ExactVerifier("2.0")(task.prompt, padded).status == "accepted"
    expected = "accepted" if left == right == zeros == 0 else "malformed"
    assert ExactVerifier("1.0")(task.prompt, padded).status == expected


@SETTINGS
@given(tasks, short_text.map(lambda text: text.replace(EOT, "")))
def test_fail_open_pays_whatever_int_cannot_read(task, answer):
    try:
        int(answer)
    except ValueError:
        v = FailOpenVerifier()(task.prompt, answer + EOT)
        assert (v.reward, v.status) == (1.0, "accepted") and "fail-open" in v.reason
