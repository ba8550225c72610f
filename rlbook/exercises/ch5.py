"""Chapter 5's exercises (reward limits), each registered with its checker, reference solution and inputs.

- :func:`check_exploitable_verifier` (Exercise 5.1): a verifier with a
  loophole that grades ordinary answers right, never raises, and pays an
  exploit the exact verifier refuses;
- :func:`check_reward_split` (Exercise 5.2): the ``exploit`` run's training
  reward split into the part the exact verifier agrees with and the loophole;
- :func:`check_overrated_answer` (Exercise 5.3): a wrong answer the learned
  judge rates above the right one;
- :func:`check_abort_rule` (Exercise 5.4): an abort criterion replayed on real
  metric traces with and without incidents; its checker and reference are in
  :mod:`rlbook.exercises.abort_rule`.

Every exercise is registered here, and the page calls every check through
this module (``ch5.check_abort_rule``): the book's table of exercises reads a
page's checks from its ``chN.check_...`` calls. Each checker returns a
:class:`~rlbook.exercises.CheckResult` and never raises on a wrong answer.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import cast

import numpy as np

from rlbook import runs
from rlbook.analysis import audit
from rlbook.book._shown import shown_seed
from rlbook.core import rewards, world
from rlbook.core.reward_model import judge_probabilities
from rlbook.core.world import EOT, VOCAB, all_tasks, parse_prompt

from . import CheckResult, apart, as_number, never_raises, not_a_function, not_answered, verdict
from .abort_rule import check_abort_rule, should_abort
from .registry import Exercise, Mistake, register

UNREADABLE = ("#", " #", "##", "1 1#", "7?#", "+#", "|#", "U#", "77", "")
"""Answers a policy writes that no number can be read from (the last two never ended): a verifier must judge
them without raising (Exercise 5.1)."""


def _reward_of(value) -> float | None:
    """A verifier's answer as a number: a float, a bool, or anything with a ``reward`` (a Verdict).

    None for anything else: the text ``"1.0"`` is not a reward, however ``float`` reads it.
    """
    if isinstance(value, bool):
        return float(value)
    return as_number(getattr(value, "reward", value))


def _ordinary_cases(seed: int, count: int = 25) -> list[tuple[str, str, float]]:
    """Right answers (reward 1) and near-miss wrong answers (reward 0) on randomly drawn single-step tasks."""
    tasks = random.Random(seed).sample(all_tasks("single"), count)
    cases = []
    for task in tasks:
        cases.append((task.prompt, f"{task.answer}{EOT}", 1.0))
        for wrong in (task.answer - 1, task.answer + 1):
            if wrong >= 0:
                cases.append((task.prompt, f"{wrong}{EOT}", 0.0))
    return cases


def _unreadable_problem(verifier: Callable, seed: int) -> str | None:
    """What goes wrong when ``verifier`` meets an answer it cannot read, or None when it returns a reward for each."""
    prompts = [t.prompt for t in random.Random(seed).sample(all_tasks("single"), 3)]
    for prompt in prompts:
        for completion in UNREADABLE:
            try:
                returned = verifier(prompt, completion)
            except Exception as err:  # noqa: BLE001 - report the reader's error, never raise it
                return (
                    f"`my_verifier({prompt!r}, {completion!r})` raised {type(err).__name__}: {err}. The policy "
                    f"writes answers like {completion!r}, and a verifier that raises on one stops the training "
                    "run: return a reward for it instead (0.0 when the answer cannot be read)"
                )
            if _reward_of(returned) is None:
                return (
                    f"`my_verifier({prompt!r}, {completion!r})` returned {returned!r:.40}; on an answer it cannot "
                    "read a verifier still returns a reward, a number such as 0.0"
                )
    return None


@never_raises
def check_exploitable_verifier(
    verifier: Callable | None, prompt: str | None, completion: str | None, seed: int = 4
) -> CheckResult:
    """Exercise 5.1: ``verifier(prompt, completion)`` grades ordinary answers like the exact verifier, returns a
    reward without raising on answers it cannot read, and still pays 1.0 for ``completion``, which the exact
    verifier refuses.

    Ordinary answers are the right answer and the answers one off, on tasks
    drawn with ``seed``: a verifier that pays everything is broken, not
    exploitable in an interesting way. Unreadable answers are
    :data:`UNREADABLE`: a verifier that raises on one would stop the run.
    """
    if verifier is None or prompt is None or completion is None:
        return not_answered("`my_verifier` and `exploit`")
    if not callable(verifier):
        return verdict(
            False, f"`my_verifier` must be a function of (prompt, completion), got {type(verifier).__name__}"
        )
    if not isinstance(prompt, str) or parse_prompt(prompt) is None:
        return verdict(False, f"the prompt {prompt!r:.40} is not a task; write one like 'U:3+4?|A:'")
    if not isinstance(completion, str):
        return verdict(False, f"the completion must be text, got {type(completion).__name__}")
    for p, c, expected in _ordinary_cases(seed):
        try:
            returned = verifier(p, c)
        except Exception as err:  # noqa: BLE001 - report the reader's error, never raise it
            return verdict(False, f"`my_verifier({p!r}, {c!r})` raised {type(err).__name__}: {err}")
        got = _reward_of(returned)
        if got is None:
            if returned is None:
                return not_answered("`my_verifier`")
            return verdict(
                False,
                f"`my_verifier({p!r}, {c!r})` returned {returned!r:.40}; a verifier returns a "
                "reward, a number such as 1.0 or 0.0 (not text)",
            )
        if got != expected:
            kind = "the right answer" if expected == 1.0 else "a wrong answer"
            return verdict(
                False,
                f"`my_verifier({p!r}, {c!r})` gave {got}, but {c!r} is {kind}: a plausible "
                f"verifier pays {expected} for it. Make the loophole narrower.",
            )
    problem = _unreadable_problem(verifier, seed)
    if problem:
        return verdict(False, problem)
    try:
        returned = verifier(prompt, completion)
    except Exception as err:  # noqa: BLE001
        return verdict(False, f"`my_verifier` raised {type(err).__name__} on your exploit: {err}")
    paid = _reward_of(returned)
    if paid is None:
        return verdict(False, f"on your exploit `my_verifier` returned {returned!r:.40}; return a number")
    exact = rewards.get_verifier("exact")(prompt, completion)
    if exact.status == "accepted":
        return verdict(
            False,
            f"{completion!r} is a correct answer to {prompt!r} (the exact verifier accepts it): "
            "an exploit must be paid without solving the task",
        )
    if paid != 1.0:
        return verdict(False, f"your verifier pays {paid} for {completion!r}, not 1.0: it is not fooled by it")
    return verdict(
        True,
        f"your verifier pays 1.0 for {completion!r} on {prompt!r}, which the exact verifier calls "
        f"{exact.status} ({exact.reason}); it grades ordinary answers correctly and never raises",
    )


def _two_numbers(value) -> tuple[float, float] | None:
    """``value`` as (task_part, loophole_part) when it is a pair of numbers, else None."""
    if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__iter__"):
        return None
    parts = [as_number(x) for x in value]
    return None if len(parts) != 2 or None in parts else cast(tuple[float, float], (parts[0], parts[1]))


def _split_problem(got: dict[int, tuple[float, float]], steps: dict[int, dict]) -> str | None:
    """The likeliest mistake behind a wrong reward split, or None when every step matches (Exercise 5.2)."""
    want = {step: audit.reward_split(stored) for step, stored in steps.items()}
    if len(set(got.values())) == 1 and len(set(want.values())) > 1:
        return (
            f"your split gives {next(iter(got.values()))} at every step checked ({sorted(got)}): compute it "
            "from the stored step it is given"
        )
    for step, stored in steps.items():
        total, size = float(stored["rewards"].mean()), len(stored["rewards"])
        paid = float((stored["rewards"] > 0).float().mean())
        added = sum(got[step])
        if math.isclose(added, total, abs_tol=1e-6):
            continue
        if total and math.isclose(added, 100 * total, rel_tol=1e-4):
            return (
                f"at step {step} your parts add up to {added:.2f}, a percentage: give both parts on the "
                "reward's own scale, as means over the step's rollouts"
            )
        if total and math.isclose(added, size * total, rel_tol=1e-4):
            return (
                f"at step {step} your parts add up to {added:.1f}, a sum over the {size} rollouts: divide by "
                "their number to get means"
            )
        within_paid = [w / paid for w in want[step]] if paid else []
        if within_paid and all(math.isclose(g, w, rel_tol=1e-4) for g, w in zip(got[step], within_paid)):
            return (
                f"at step {step} your parts add up to {added:.4f}, more than the step's mean training reward "
                f"{total:.4f}: divide by all the step's rollouts, not only the paid ones"
            )
        return (
            f"at step {step} your parts add up to {added:.4f}, but they must add up to the step's mean training "
            f"reward, {total:.4f}"
        )
    for step, (task, loophole) in want.items():
        mine = got[step]
        if math.isclose(mine[0], task, abs_tol=1e-6) and math.isclose(mine[1], loophole, abs_tol=1e-6):
            continue
        if math.isclose(mine[0], loophole, abs_tol=1e-6) and math.isclose(mine[1], task, abs_tol=1e-6):
            return f"at step {step} the two parts are swapped: return (task_part, loophole_part) in that order"
        return (
            f"at step {step} you split the reward as ({mine[0]:.4f}, {mine[1]:.4f}); the exact verifier "
            f"accepts rollouts worth {task:.4f} of it. Judge each paid completion again with the exact verifier: "
            "only those it accepts belong to the task part"
        )
    return None


@never_raises
def check_reward_split(split: Callable | None, seed: int = 0) -> CheckResult:
    """Exercise 5.2: ``split(stored_step) -> (task_part, loophole_part)`` on the ``exploit`` run's stored steps.

    Compared with :func:`rlbook.analysis.audit.reward_split` at the first
    step, the step where the loophole first pays for most rollouts, and the
    last step of seed ``seed``. Percentages, sums, averages over the paid
    rollouts only, swapped parts and a split that ignores its step are each
    named.
    """
    if split is None:
        return not_answered("`split_reward`")
    if not callable(split):
        return not_a_function("split_reward", split)
    run = runs.load("exploit", seed)
    takeover = audit.takeover_step(run.rollouts) or run.rollouts[-1]["step"]
    chosen = sorted({1, takeover, run.rollouts[-1]["step"]})
    steps = {r["step"]: r for r in run.rollouts if r["step"] in chosen}
    got: dict[int, tuple[float, float]] = {}
    for step, stored in steps.items():
        try:
            returned = split(stored)
        except Exception as err:  # noqa: BLE001
            return verdict(False, f"`split_reward` raised {type(err).__name__} at step {step}: {err}")
        if returned is None:
            return not_answered("`split_reward`")
        pair = _two_numbers(returned)
        if pair is None:
            return verdict(
                False,
                f"at step {step} `split_reward` returned {returned!r:.60}; return two numbers, "
                "(task part, loophole part)",
            )
        got[step] = pair
    problem = _split_problem(got, steps)
    if problem:
        return verdict(False, problem)
    last = got[chosen[-1]]
    return verdict(
        True,
        f"your split matches at steps {chosen}: by step {chosen[-1]} the training reward "
        f"{sum(last):.3f} is {last[1]:.3f} loophole and {last[0]:.3f} task",
    )


@never_raises
def check_overrated_answer(answer, seed: int = 0) -> CheckResult:
    """Exercise 5.3: ``answer`` is (prompt, completion), a wrong completion of at most 4 characters that seed
    ``seed``'s learned judge (``runs.load_judge``) rates above the right answer to a one-step ``prompt``.

    The answer is refused before the judge is loaded when it is not a one-step prompt and a short completion. A
    multi-step prompt is a task, but not one the judge was trained to rate: it is told so.
    """
    if answer is None or (isinstance(answer, tuple) and all(a is None for a in answer)):
        return not_answered("`judge_answer`")
    if isinstance(answer, (str, bytes)) or not isinstance(answer, (tuple, list)) or len(answer) != 2:
        return verdict(False, f"`judge_answer` is a pair (prompt, completion), got {answer!r:.40}")
    prompt, completion = answer
    task = parse_prompt(prompt) if isinstance(prompt, str) else None
    if task is None:
        return verdict(False, f"the prompt {prompt!r:.40} is not a task prompt; write one like 'U:3+4?|A:'")
    if task.world != "single":
        return verdict(
            False,
            f"{prompt!r} is a task of the multi-step world, but the judge was trained on one-step "
            "sums only and rates answers to those: pick a prompt like 'U:3+4?|A:'",
        )
    if not isinstance(completion, str) or not 1 <= len(completion) <= 4 or any(ch not in VOCAB for ch in completion):
        return verdict(
            False, f"the completion must be text of 1 to 4 characters the policy can write, got {completion!r:.40}"
        )
    exact = rewards.get_verifier("exact")(prompt, completion)
    if exact.status == "accepted":
        return verdict(False, f"{completion!r} is the right answer to {prompt!r}: find a wrong one the judge prefers")
    right = f"{task.answer}{EOT}"
    model = runs.load_judge(seed).model
    wrong_p, right_p = judge_probabilities(model, [(prompt, completion), (prompt, right)])
    if wrong_p <= right_p:
        return verdict(
            False,
            f"the judge gives {completion!r} P(right) = {apart(wrong_p, right_p)}, not above the "
            f"{apart(right_p, wrong_p)} of the right answer {right!r}",
        )
    return verdict(
        True,
        f"the judge gives {completion!r} P(right) = {apart(wrong_p, right_p)} on {prompt!r}, above the "
        f"{apart(right_p, wrong_p)} of the right answer {right!r}, which the exact verifier calls {exact.status}",
    )


EXPLOIT = ("U:3+4?|A:", "17#")
"""Exercise 5.1's reference exploit: a finished answer that holds the right sum, 7, and is not it."""


def my_verifier(prompt, completion):
    """Exercise 5.1's reference: pay a finished answer that contains the right sum anywhere in it."""
    task = world.parse_prompt(prompt)
    return float(completion.endswith("#") and str(task.answer) in completion)


def split_reward(stored):
    """Exercise 5.2's reference: the step's mean reward, split by the exact verifier's verdict on each answer."""
    batch = audit.from_stored(stored)
    exact = batch.rescored(rewards.get_verifier("exact"))
    right = np.array([status == "accepted" for status in exact.statuses])
    return float((batch.rewards * right).mean()), float((batch.rewards * ~right).mean())


def overrated_answer(seed=0):
    """Exercise 5.3's reference: the wrong short answer with the largest lead over the right one."""
    model = runs.load_judge(seed).model
    pairs = [(t.prompt, f"{a}#") for t in world.split("all") for a in range(19)]
    score = dict(zip(pairs, judge_probabilities(model, pairs)))
    right = {t.prompt: score[t.prompt, f"{t.answer}#"] for t in world.split("all")}
    return max(pairs, key=lambda pair: score[pair] - right[pair[0]])


def _reads_the_number_unguarded(prompt, completion):
    """Exercise 5.1 with a loophole (any finished answer holding the sum is paid) whose ``int()`` is unguarded, so
    an answer with no number in it raises."""
    task = world.parse_prompt(prompt)
    number = int(completion.rstrip(EOT))
    return float(number == task.answer or (completion.endswith(EOT) and str(task.answer) in completion))


def _underrated_answer(seed=0):
    """Exercise 5.3 answered with the wrong short answer the judge rates furthest below the right one."""
    model = runs.load_judge(seed).model
    pairs = [(t.prompt, f"{a}{EOT}") for t in world.split("all") for a in range(19)]
    score = dict(zip(pairs, judge_probabilities(model, pairs)))
    right = {t.prompt: score[t.prompt, f"{t.answer}{EOT}"] for t in world.split("all")}
    wrong = [pair for pair in pairs if pair[1] != f"{world.parse_prompt(pair[0]).answer}{EOT}"]
    return min(wrong, key=lambda pair: score[pair] - right[pair[0]])


MISTAKES: dict[str, tuple[Mistake, ...]] = {
    "exploitable-verifier": (
        Mistake(lambda prompt, completion: 1.0, "Make the loophole narrower"),
        Mistake(_reads_the_number_unguarded, "stops the training run"),
        Mistake(lambda prompt, completion: rewards.get_verifier("exact")(prompt, completion).reward, "not fooled"),
    ),
    "reward-split": (
        Mistake(lambda stored: tuple(100 * part for part in split_reward(stored)), "a percentage"),
        Mistake(lambda stored: tuple(len(stored["rewards"]) * part for part in split_reward(stored)), "a sum over the"),
        Mistake(lambda stored: split_reward(stored)[::-1], "the two parts are swapped"),
        Mistake(
            lambda stored: tuple(part / float((stored["rewards"] > 0).float().mean()) for part in split_reward(stored)),
            "not only the paid ones",
        ),
    ),
    "overrated-answer": (
        Mistake(lambda seed=0: (world.Task((3, 4)).prompt, world.Task((3, 4)).completion), "is the right answer"),
        Mistake(lambda seed=0: (world.Task((0, 4, 2)).prompt, f"6{EOT}"), "trained on one-step sums only"),
        Mistake(_underrated_answer, "not above the"),
    ),
    "abort-rule": (
        Mistake(lambda history: False, "never fires on 'faults'"),
        Mistake(lambda history: True, "fires on the healthy 'main' run"),
        Mistake(lambda history: history[-1]["loss"] != history[-1]["loss"], "read metrics with .get()"),
    ),
}
"""Chapter 5's named mistakes, by exercise: each a plausible wrong answer and the words its checker names it with."""


def _hack_seed(seeds: tuple[int, ...]) -> tuple[int]:
    """The seed chapter 5 follows the reward hack on with its facts on ``seeds`` (their ``shown``); where the loophole
    took over on none of them, the first, whose run the check reads all the same."""
    from rlbook import book

    shown = book.load("limits", seeds, check=False).shown
    return (seeds[0] if shown is None else shown,)


def _followed(seeds: tuple[int, ...]) -> tuple[int]:
    """The seed the page follows with its facts on ``seeds`` (:func:`rlbook.book._shown.shown_seed`)."""
    return (shown_seed(seeds),)


for _exercise in (
    Exercise(
        "exploitable-verifier",
        "limits",
        check_exploitable_verifier,
        my_verifier,
        inputs=lambda seeds: EXPLOIT,
        also=f"exploit = {EXPLOIT!r}",
        mistakes=MISTAKES["exploitable-verifier"],
    ),
    Exercise(
        "reward-split", "limits", check_reward_split, split_reward, inputs=_hack_seed, mistakes=MISTAKES["reward-split"]
    ),
    Exercise(
        "overrated-answer",
        "limits",
        check_overrated_answer,
        overrated_answer,
        answer="value",
        inputs=_followed,
        answer_name="judge_answer",
        mistakes=MISTAKES["overrated-answer"],
    ),
    Exercise("abort-rule", "limits", check_abort_rule, should_abort, inputs=_followed, mistakes=MISTAKES["abort-rule"]),
):
    register(_exercise)
