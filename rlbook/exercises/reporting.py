"""Checks for chapter 8's exercises on reporting a run: the run record and a retained-capability test.

- Exercise 8.3: :func:`check_record_review`, a reviewer's four questions
  answered from real run records;
- Exercise 8.4: :func:`check_retained_test`, a retained-capability test run
  on the policy before and after RL, several times.

Each is registered here with its reference solution and named mistakes.
Exercise 8.5 (reward versions) is in :mod:`rlbook.exercises.versioning`,
which reads the chat template and the checkers' seed from here.
:mod:`rlbook.exercises.ch8` re-exports every check, so the chapter calls
``ch8.check_record_review`` and the like. Every check prints and returns a
:class:`~rlbook.exercises.CheckResult`; none raises on a wrong answer.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import cast

import numpy as np
import torch

from rlbook import runs
from rlbook.analysis import run_report
from rlbook.book._shown import SHOWN, shown_seed
from rlbook.book.evaluation import STOP_AFTER
from rlbook.core.policy import Policy, PolicyConfig
from rlbook.core.world import decode, split

from . import CheckResult, as_count, as_number, as_numbers, never_raises, not_a_function, not_answered, verdict
from .registry import Exercise, Mistake, register

TEMPLATE = "U:a+b?|A:"
"""The chat template the policy was trained with, in which every RL prompt is written (exercises 8.1 to 8.5)."""


# ------------------------------------------------------------------ exercise 8.3

REVIEW_KEYS = ("verifier", "finished", "not_trained_on", "aborted_steps")
"""The reviewer's questions of exercise 8.3, by the key of the reader's dict."""


def review(record):
    """Exercise 8.3's reference."""
    verifier = record["verifier"]
    generated = record["rollouts_before_filtering"]
    aborted = record["aborted_updates"]
    return {
        "verifier": f"{verifier['name']}@{verifier['version']}",
        "finished": record["status"] == "completed",
        "not_trained_on": generated - record["rollouts_used"],
        "aborted_steps": sorted(a["step"] for a in aborted),
    }


def record_reviews(seed: int = SHOWN) -> list[tuple[str, dict]]:
    """The records exercise 8.3 is checked on: main, exploit, faults, abort, and main interrupted after a step."""
    records = [(name, runs.load(name, seed).record) for name in ("main", "exploit", "faults", "abort")]
    stopped = run_report.interrupted_copy(records[0][1], STOP_AFTER, "main.partial/state.pt")
    return records + [(f"main interrupted after step {STOP_AFTER}", stopped)]


def _verifier_words(value) -> str:
    """A verifier as the reader named it, in the record's words: "exact 1.0" for "exact@1.0", "Exact 1.0" or the
    class name "ExactVerifier@1.0" (rlbook.core.rewards), whose "Verifier" and CamelCase are spelling."""
    text = re.sub(r"(?<=[a-z])(?=[A-Z])", "-", str(value)).replace("@", " ")
    words = [w for w in text.lower().replace("-verifier", "").split() if w != "verifier"]
    return " ".join(words)


def _review_problem(got, record: dict, name: str) -> str | None:
    """What is wrong with the reader's answers about one record, or None."""
    if not isinstance(got, dict) or any(k not in got for k in REVIEW_KEYS):
        return f"return a dict with the keys {', '.join(REVIEW_KEYS)}"
    want = review(record)
    said = _verifier_words(got["verifier"])
    if said != want["verifier"].replace("@", " "):
        if said == record["verifier"]["name"]:
            return (
                f"on {name}: give the version as well, '{want['verifier']}': two versions of one verifier can "
                "disagree on the same answer"
            )
        return f"on {name}: verifier {got['verifier']!r:.40} is not the one that paid its training rewards"
    if not isinstance(got["finished"], (bool, np.bool_)):
        return f"on {name}: finished must be True or False, got {got['finished']!r:.30}"
    if bool(got["finished"]) != want["finished"]:
        why = (
            " It was not interrupted, yet it stopped early: its own abort rule stopped it, as its status and "
            "steps_completed say"
            if record["status"] == "aborted"
            else ""
        )
        return (
            f"on {name}: finished should be {want['finished']}: compare the steps it completed with the steps "
            f"it planned, or read its status.{why}"
        )
    count = as_count(got["not_trained_on"])
    if count is None:
        return f"on {name}: not_trained_on is a count of rollouts, a whole number, got {got['not_trained_on']!r:.30}"
    if count != want["not_trained_on"]:
        failures = sum(record["failures"]["by_status"].values())
        if count == failures:
            return (
                f"on {name}: {count} counts the rollouts the verifier rejected, but the optimiser trained on "
                "those too (with a low reward). The record counts rollouts twice: before any filter, and used"
            )
        return (
            f"on {name}: {count} rollouts is not it. The record counts rollouts twice, before any filter and "
            "as used; the optimiser never saw the difference"
        )
    steps = as_numbers(got["aborted_steps"]) if not isinstance(got["aborted_steps"], (str, dict)) else None
    if (
        steps is None
        or [int(s) for s in steps] != want["aborted_steps"]
        or not all(float(s).is_integer() for s in steps)
    ):
        moved = sorted(i["step"] for i in record["interventions"])
        if steps is not None and moved and sorted(steps) == sorted(moved + want["aborted_steps"]):
            return (
                f"on {name}: your steps include its interventions; an intervention pauses updates or leaves out "
                "a batch, while an aborted update is a step whose update was skipped. They are separate lists"
            )
        return f"on {name}: aborted_steps should list, in order, the steps whose update was aborted"
    return None


@never_raises
def check_record_review(fn: Callable | None, seed: int = SHOWN) -> CheckResult:
    """Exercise 8.3: ``fn(record)`` answers a reviewer's four questions from a run record alone.

    The keys of :data:`REVIEW_KEYS`: the verifier that paid the training
    rewards as ``"name@version"`` (``"exact 1.0"`` is read the same), whether
    the run completed every planned step, how many generated rollouts were
    not trained on, and the sorted steps of aborted updates. Run on the
    records of :func:`record_reviews`, which include a run stopped by its abort
    rule and an interrupted one, so reading ``status``, ``steps_completed`` or
    both passes and reading only ``interrupted`` does not.
    """
    if fn is None:
        return not_answered("the function `review`")
    if not callable(fn):
        return not_a_function("review", fn)
    for k, (name, record) in enumerate(record_reviews(seed)):
        try:
            got = fn(copy.deepcopy(record))  # a copy: editing what it is handed cannot change the grading
        except Exception as err:  # noqa: BLE001 - the reader's code may raise anything
            return verdict(False, f"review raised {type(err).__name__}: {err} on the record of {name}")
        if got is None and k == 0:
            return not_answered("the function `review`, returning a dict of four answers")
        problem = _review_problem(got, record, name)
        if problem:
            return verdict(False, problem)
    return verdict(True, "each question answered from the record alone, on completed, aborted and interrupted runs")


# ------------------------------------------------------------------ exercise 8.4

REPEATS = 6
"""How many times exercise 8.4 runs a test on one policy to call it deterministic."""
CHAT_MARK = "|A:"
"""The part of the chat template ``U:a+b?|A:`` that every prompt RL trains on contains (exercise 8.4)."""


def random_policy(seed: int = 0) -> Policy:
    """A randomly initialised policy of the book's size: the floor a capability test must rise above."""
    torch.manual_seed(seed)
    return Policy(PolicyConfig())


def my_retained_test(policy):
    """Exercise 8.4's reference: plain sums, greedy."""
    from rlbook.core.sampling import sample
    from rlbook.core.world import BUDGET, split

    tasks = split("all")
    prompts = [f"{a}+{b}=" for a, b in (t.operands for t in tasks)]
    texts = sample(policy, prompts, budget=BUDGET, greedy=True)
    right = 0
    for text, task in zip(texts.completions(), tasks):
        answer = text.split("\n")[0].replace(" ", "")  # " 7"
        right += answer == str(task.answer)
    return right / len(tasks)


def _score_watching_prompts(test: Callable, policy: Policy) -> tuple[object, bool]:
    """``test(policy)``, and whether any text it fed the policy was in the chat template RL trains on."""
    seen = []

    def watch(module, inputs):
        seen.extend(decode(row) for row in inputs[0].reshape(-1, inputs[0].shape[-1]).tolist())

    handle = policy.tok.register_forward_pre_hook(watch)
    try:
        score = test(policy)
    finally:
        handle.remove()
    return score, any(CHAT_MARK in text for text in seen)


@never_raises
def check_retained_test(test: Callable | None, seed: int = SHOWN) -> CheckResult:
    """Exercise 8.4: ``test(policy) -> score in [0, 1]``, run on the policy before RL and after ``main``.

    The test must measure a capability RL does not reward: it may not ask
    the policy anything in the chat template ``U:a+b?|A:`` that every RL
    prompt is written in (the check watches the text fed to the policy). It
    must be deterministic: the pre-RL policy is scored :data:`REPEATS` times
    and must get the same score every time, which a test that samples without
    a fixed seed does not (two calls can tie by chance; six almost never do).
    And the pre-RL policy must beat a random-weights policy by at least 0.2.
    """
    if test is None:
        return not_answered("the function `my_retained_test`")
    if not callable(test):
        return not_a_function("my_retained_test", test)
    main = runs.load("main", seed)
    before, after = main.policy(0), main.policy()
    returned, chat = [], False
    for policy in [before] * REPEATS + [after, random_policy(seed)]:
        try:
            score, used = _score_watching_prompts(test, policy)
        except Exception as err:  # noqa: BLE001 - the reader's code may raise anything
            return verdict(False, f"the test raised {type(err).__name__}: {err}")
        returned.append(score)
        chat |= used
    read = [as_number(s) for s in returned]
    if None in read:
        return verdict(False, f"the test returned {returned[read.index(None)]!r:.40}; return a number in [0, 1]")
    scores = cast(list[float], read)  # no None: refused above
    if chat:
        return verdict(
            False,
            f"the test asks the policy in the chat template ({TEMPLATE}), the format every RL "
            "prompt is written in: RL rewards exactly that, so the score measures the reward "
            "again, not a capability kept from before RL. Test something RL never asks for",
        )
    if not all(0.0 <= s <= 1.0 for s in scores):
        return verdict(False, f"scores must lie in [0, 1], got {[round(s, 3) for s in scores]}")
    first = scores[:REPEATS]
    if len(set(first)) > 1:
        return verdict(
            False,
            f"the same policy scored {', '.join(f'{s:.3f}' for s in first)} on {REPEATS} calls: "
            "make the test deterministic (greedy decoding, or sampling with a fixed seed)",
        )
    start, end, floor = first[0], scores[REPEATS], scores[-1]
    if start - floor < 0.2:
        return verdict(
            False,
            f"the pre-RL policy scores {start:.3f} and a random-weights policy {floor:.3f}: "
            "the test does not measure a capability the policy has to retain",
        )
    word = "kept" if end >= start - 0.05 else "lost"
    return verdict(
        True,
        f"before RL {start:.3f} on each of {REPEATS} calls, after main's {main.steps[-1]} steps "
        f"{end:.3f}: the capability was {word}; random weights score {floor:.3f}",
    )


def _review_with(**change: Callable[[dict], object]) -> Callable[[dict], dict]:
    """Exercise 8.3's review with the answers named in ``change`` read otherwise, each by its function of the
    record: a mistake the check names."""

    def wrong(record):
        return dict(review(record), **{key: read(record) for key, read in change.items()})

    return wrong


def _asked_in_the_chat_template(policy) -> float:
    """Exercise 8.4 answered with the policy's greedy accuracy on the held-out sums, asked as RL asks them."""
    from rlbook.core.sampling import sample

    tasks = split("heldout")
    texts = sample(policy, [t.prompt for t in tasks], budget=4, greedy=True).completions()
    return float(np.mean([text == t.completion for text, t in zip(texts, tasks)]))


def _sampled_without_a_seed(policy) -> float:
    """Exercise 8.4's plain sums, sampled at temperature 1 with no fixed seed: a test that is not deterministic."""
    from rlbook.core.sampling import sample

    tasks = split("all")
    prompts = [f"{a}+{b}=" for a, b in (t.operands for t in tasks)]
    texts = sample(policy, prompts, budget=4, temperature=1.0).completions()
    return float(np.mean([text.split("\n")[0].replace(" ", "") == str(t.answer) for text, t in zip(texts, tasks)]))


MISTAKES: dict[str, tuple[Mistake, ...]] = {
    "record-review": (
        Mistake(_review_with(finished=lambda r: r["interrupted"] is None), "its own abort rule stopped it"),
        Mistake(_review_with(verifier=lambda r: r["verifier"]["name"]), "give the version as well"),
        Mistake(
            _review_with(not_trained_on=lambda r: sum(r["failures"]["by_status"].values())), "trained on those too"
        ),
        Mistake(
            _review_with(
                aborted_steps=lambda r: sorted(
                    [a["step"] for a in r["aborted_updates"]] + [i["step"] for i in r["interventions"]]
                )
            ),
            "They are separate lists",
        ),
    ),
    "retained-test": (
        Mistake(_asked_in_the_chat_template, "the test asks the policy in the chat template"),
        Mistake(_sampled_without_a_seed, "make the test deterministic"),
    ),
}
"""Exercises 8.3 and 8.4's named mistakes, by exercise: each a plausible wrong answer and the words its checker
names it with (Exercise 8.5's are in :mod:`.versioning`)."""


def seed_inputs(seeds: tuple[int, ...]) -> tuple[int]:
    """The checkers' seed as chapter 8's page has it with its facts on ``seeds``: the seed it follows (the inputs
    of Exercises 8.3 to 8.5)."""
    return (shown_seed(seeds),)


for _exercise in (
    Exercise(
        "record-review",
        "evaluation",
        check_record_review,
        review,
        inputs=seed_inputs,
        mistakes=MISTAKES["record-review"],
    ),
    Exercise(
        "retained-test",
        "evaluation",
        check_retained_test,
        my_retained_test,
        inputs=seed_inputs,
        mistakes=MISTAKES["retained-test"],
    ),
):
    register(_exercise)
