"""Checks for chapter 5's exercises on reporting a run: the run record, retained capability and reward versions.

- Exercise 10: :func:`check_record_fields`, the record's fields grouped by the
  reviewer's question each answers;
- Exercise 15: :func:`check_retained_test`, a retained-capability test run
  on the policy before and after RL;
- Exercise 16: :func:`check_reward_versioning` and :func:`check_versioning_why`,
  the re-scoring result under two versions of the exact verifier and why a
  mixed comparison misleads.

:mod:`rlbook.exercises.ch5` re-exports every name here, so the chapter calls
``ch5.check_record_fields`` and the like. Every check prints and returns a
:class:`~rlbook.exercises.CheckResult`; none raises on a wrong answer.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import torch

from rlbook import record as rec
from rlbook import runs
from rlbook.analysis import selection
from rlbook.core import rewards as rw
from rlbook.core.evaluate import EvalResult
from rlbook.core.policy import Policy, PolicyConfig
from rlbook.core.world import Task, decode

from . import CheckResult, Option, as_count, as_number, check_choice, never_raises, not_a_function, not_answered, verdict

TEMPLATE = "U:a+b?|A:"
"""The chat template the policy was trained with, in which every RL prompt is written (exercises 8, 9, 15, 16)."""


# ------------------------------------------------------------------ exercise 10

RECORD_QUESTIONS: dict[str, str] = {
    "identity": "which run is this, and can it be read and repeated?",
    "setup": "what was trained, on what prompts, sampled how?",
    "reward": "what was the reward, and what did it say?",
    "update": "how did the update use the reward?",
    "outcome": "what came out, and at what cost?",
    "rejected": "what was rejected, failed or interrupted?",
}
"""The questions a reviewer asks of a run record (exercise 10), by the key the reader's dict uses."""

FIELD_QUESTION: dict[str, str] = {
    **dict.fromkeys(("schema_version", "run_name", "run_id", "created", "status", "seed", "threads", "versions"),
                    "identity"),
    **dict.fromkeys(("base_policy", "prompt_template", "prompt_split", "sampling"), "setup"),
    **dict.fromkeys(("verifier", "outcome_labels", "process_labels"), "reward"),
    **dict.fromkeys(("advantage", "update", "reference", "selection_rule"), "update"),
    **dict.fromkeys(("checkpoints", "evaluations", "cost"), "outcome"),
    **dict.fromkeys(("rollouts_before_filtering", "rollouts_used", "failures", "aborted_updates", "interventions",
                     "interrupted"), "rejected"),
}
"""The question each required field of the run record answers (exercise 10's reference grouping)."""

BOOKKEEPING = ("schema_version", "run_id", "created", "threads")
"""Fields the chapter's prose never asks for: welcome in an answer, not required of it."""


def _normalised(name: str) -> str:
    return " ".join(name.strip().lower().replace("-", " ").replace("_", " ").split()).replace(" ", "_")


def _grouped_fields(answer: dict) -> tuple[dict[str, str], list[str]] | str:
    """``{field: question}`` from the reader's ``{question: [fields]}``, and the names that are no field; or a problem."""
    unknown_questions = [k for k in answer if not isinstance(k, str) or k.strip().lower() not in RECORD_QUESTIONS]
    if unknown_questions:
        return (f"{unknown_questions[0]!r} is not one of the questions; use the keys "
                f"{', '.join(RECORD_QUESTIONS)}")
    placed, unknown = {}, []
    for question, names in answer.items():
        if isinstance(names, str) or not isinstance(names, (list, tuple, set)):
            return f"under {question!r} give a list of field names, got {type(names).__name__}"
        for name in names:
            field = _normalised(str(name).split(".")[0])
            if field in FIELD_QUESTION:
                placed[field] = question.strip().lower()
            else:
                unknown.append(str(name))
    return placed, unknown


@never_raises
def check_record_fields(answer) -> CheckResult:
    """Exercise 10: the run record's fields, grouped by the reviewer's question each answers.

    ``answer`` is a dict from the keys of :data:`RECORD_QUESTIONS` to lists
    of field names. Every required field but the :data:`BOOKKEEPING` ones must
    be listed, each under its question (:data:`FIELD_QUESTION`). A missing
    field is described by what it holds and the question it answers, not by
    its name; a name that is no field of the record, or a field under the
    wrong question, is named. A plain list, such as the keys of a record
    copied out, is asked to be grouped.
    """
    if answer is None:
        return not_answered("the dict `my_fields`")
    if not isinstance(answer, dict):
        return verdict(False, "group the fields by the question each answers: a dict from the questions "
                              f"({', '.join(RECORD_QUESTIONS)}) to lists of field names")
    grouped = _grouped_fields(answer)
    if isinstance(grouped, str):
        return verdict(False, grouped)
    placed, unknown = grouped
    if unknown:
        return verdict(False, f"{', '.join(map(repr, unknown[:4]))}: not a top-level field of the run record "
                              "(names are compared ignoring case, spaces and hyphens)")
    misplaced = [f for f, q in placed.items() if q != FIELD_QUESTION[f]]
    if misplaced:
        field = misplaced[0]
        return verdict(False, f"{field!r} is under {placed[field]!r}, but what it holds ({rec.RUN_RECORD_FIELDS[field]}) "
                              f"answers another question; {len(misplaced)} field(s) are under the wrong question")
    missing = [f for f in FIELD_QUESTION if f not in placed and f not in BOOKKEEPING]
    if missing:
        by_question = {}
        for field in missing:
            by_question.setdefault(FIELD_QUESTION[field], []).append(field)
        hints = "; ".join(f"{q} ({RECORD_QUESTIONS[q]}) lacks {len(fs)}: one holding {rec.RUN_RECORD_FIELDS[fs[0]]}"
                          for q, fs in by_question.items())
        return verdict(False, f"{len(missing)} field(s) missing. {hints}")
    extra = [f for f in BOOKKEEPING if f not in placed]
    note = f" ({', '.join(extra)} would complete the identity)" if extra else ""
    return verdict(True, f"all {len(FIELD_QUESTION) - len(extra)} fields, each under the question it answers{note}")


# ------------------------------------------------------------------ exercise 15

def random_policy(seed: int = 0) -> Policy:
    """A randomly initialised policy of the book's size: the floor a capability test must rise above."""
    torch.manual_seed(seed)
    return Policy(PolicyConfig())


CHAT_MARK = "|A:"
"""The part of the chat template ``U:a+b?|A:`` that every prompt RL trains on contains (exercise 15)."""


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
def check_retained_test(test: Callable | None, seed: int = 0) -> CheckResult:
    """Exercise 15: ``test(policy) -> score in [0, 1]``, run on the policy before RL and after ``main``.

    The test must measure a capability RL does not reward: it may not ask
    the policy anything in the chat template ``U:a+b?|A:`` that every RL
    prompt is written in (the check watches the text fed to the policy), so
    greedy accuracy on held-out chat prompts or an end-of-turn rate do not
    qualify. It must be deterministic (the same policy gets the same score
    twice), and it must measure something the pre-RL policy can do: the
    pre-RL policy must beat a random-weights policy by at least 0.2.
    """
    if test is None:
        return not_answered("the function `my_retained_test`")
    if not callable(test):
        return not_a_function("my_retained_test", test)
    main = runs.load("main", seed)
    before, after = main.policy(0), main.policy()
    returned, chat = [], False
    for policy in (before, before, after, random_policy(seed)):
        try:
            score, used = _score_watching_prompts(test, policy)
        except Exception as err:  # noqa: BLE001 - the reader's code may raise anything
            return verdict(False, f"the test raised {type(err).__name__}: {err}")
        returned.append(score)
        chat |= used
    scores = [as_number(s) for s in returned]
    if None in scores:
        return verdict(False, f"the test returned {returned[scores.index(None)]!r:.40}; return a number in [0, 1]")
    if chat:
        return verdict(False, f"the test asks the policy in the chat template ({TEMPLATE}), the format every RL "
                              "prompt is written in: RL rewards exactly that, so the score measures the reward "
                              "again, not a capability kept from before RL. Test something RL never asks for")
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


def _written(rows: list[list[str]], version: str) -> EvalResult:
    """An evaluation of two prompts whose samples are ``rows``, scored by exact 1.0 (exercise 16's own cases)."""
    tasks = [Task((3, 4)), Task((2, 5))]
    verifier = rw.ExactVerifier("1.0")
    verdicts = [[verifier(t.prompt, c) for c in row] for t, row in zip(tasks, rows)]
    settings = {"n": len(rows[0]), "temperature": 1.0, "token_budget": 4, "decoding": "sample",
                "verifier": "exact@1.0", "template": TEMPLATE, "policy_version": version}
    return EvalResult(tasks, np.array([[v.reward for v in row] for row in verdicts]),
                      [[v.status for v in row] for row in verdicts], rows, settings)


VERSIONING_CASES = (
    (_written([["7#", "6#", "7#"], ["07#", "1#", "7#"]], "before"),
     _written([["7#", " 7#", "7 #"], ["7#", "7 #", " 07#"]], "after")),
    (_written([["7#", " 7#", "8#"], ["7#", "6#", "5#"]], "before"),
     _written([["7#", "7#", "07#"], ["7#", "7#", "6#"]], "after")),
)
"""(before, after) pairs written so that exact 1.0 and 2.0 disagree on some samples of each side (exercise 16)."""


def _versioning_problem(got, want: dict) -> str | None:
    """What is wrong with one returned versioning dict, or None."""
    keys = ("flipped", "gain_same_version", "gain_mixed", "record_field")
    if not isinstance(got, dict) or any(k not in got for k in keys):
        return f"return a dict with the keys {', '.join(keys)}"
    flipped = as_count(got["flipped"])
    if flipped is None:
        return f"flipped={got['flipped']!r}: a count of samples, a whole number (not a share, not text)"
    if flipped != want["flipped"]:
        return ("flipped: count the samples of both evaluations whose reward under ExactVerifier('2.0') differs "
                "from that under ExactVerifier('1.0')")
    for key in ("gain_same_version", "gain_mixed"):
        value = as_number(got[key])
        if value is None or abs(value - want[key]) > 1e-9:
            how = "both under 1.0" if key == "gain_same_version" else "after under 2.0, before under 1.0"
            return f"{key}: expected reward of after minus before, {how}"
    field = str(got["record_field"]).split(".")[0].strip().lower()
    if field != "verifier":
        return (f"record_field={got['record_field']!r}: which run-record field names the verifier and its version?")
    return None


@never_raises
def check_reward_versioning(answer: Callable | None, before: EvalResult, after: EvalResult) -> CheckResult:
    """Exercise 16: ``answer(before, after)`` must return the re-scoring result under exact 1.0 and 2.0.

    The returned dict has ``flipped`` (samples of both evaluations whose
    reward differs between the versions), ``gain_same_version`` (after minus
    before, both under 1.0), ``gain_mixed`` (after under 2.0 minus before
    under 1.0) and ``record_field`` (the run-record field that pins the
    version). It is run on the chapter's ``before`` and ``after`` and on
    :data:`VERSIONING_CASES`, where the versions disagree on both sides, both
    ways round: on the chapter's evaluations few samples or none change
    verdict, so only these cases tell a right function from a wrong one.
    """
    if answer is None:
        return not_answered("the function `versioning`")
    if isinstance(answer, dict):
        return verdict(False, "write `versioning(before, after)` as a function returning the dict, so that it can be "
                              "tried on evaluations where the two versions disagree")
    if not callable(answer):
        return not_a_function("versioning", answer)
    if not isinstance(before, EvalResult) or not isinstance(after, EvalResult):
        return verdict(False, "give the chapter's before_eval and after_eval (two EvalResults) as the last arguments")
    cases = [("the chapter's evaluations", before, after)]
    cases += [(f"constructed case {i + 1}", b, a) for i, (b, a) in enumerate(VERSIONING_CASES)]
    cases += [(f"constructed case {i + 1} the other way round", a, b) for i, (b, a) in enumerate(VERSIONING_CASES)]
    for name, b, a in cases:
        try:
            got = answer(b, a)
        except Exception as err:  # noqa: BLE001 - the reader's code may raise anything
            return verdict(False, f"versioning raised {type(err).__name__}: {err} on {name}")
        problem = _versioning_problem(got, versioning_answer(b, a))
        if problem:
            return verdict(False, f"on {name}: {problem}")
    want = versioning_answer(before, after)
    inflation = want["gain_mixed"] - want["gain_same_version"]
    return verdict(True, f"right on the chapter's evaluations and on {len(cases) - 1} constructed ones. Here "
                         f"{want['flipped']} samples change reward between the versions, and mixing them moves the "
                         f"gain by {inflation:+.4f}; in the constructed cases a mixed comparison credits RL with "
                         "a change of verifier")


VERSIONING_WHY = {
    "a": Option("The mixed gain is measured on different prompts from the same-version gain.", False,
                "both gains use the same prompts and the same samples; only the rule that scores them changes"),
    "b": Option("2.0 is the newer rule, so only the mixed gain is up to date.", False,
                "a newer rule may be the better one, but then both evaluations are re-scored under it; mixing "
                "versions measures the change of rule as well"),
    "c": Option("The two differ by sampling noise only, which a larger n would remove.", False,
                "the same samples are scored twice, so no sampling noise separates the two gains: the difference "
                "is the rule's"),
    "d": Option("The mixed gain credits the policy with what the lenient rule accepts and the strict one refused: "
                "part of it is the verifier's change, not training.", True,
                "right: a comparison must hold the verifier and its version fixed, which is why the record pins it"),
}
"""Exercise 16's closing question as stated options: why a same-version gain and a mixed one must not be compared."""


@never_raises
def check_versioning_why(choice: str | None) -> CheckResult:
    """Exercise 16, last part: why the two gains must not be compared, a pick among :data:`VERSIONING_WHY`."""
    return check_choice(choice, VERSIONING_WHY, "why_not_compare")
