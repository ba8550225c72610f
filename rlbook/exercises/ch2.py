"""Chapter 2's exercises (outcome and process rewards), each registered with its checker, reference and inputs.

- :func:`check_process_scorer` (Exercise 2.1): a process scorer, run on the
  chapter's real multi-step rollouts and on constructed cases, compared
  with :func:`rlbook.core.rewards.process_score`; its checker and reference
  are here. The exercise's second question, :func:`check_disagreement_count`,
  is checked in :mod:`rlbook.exercises.judges`.
- :func:`check_verifier` and :func:`check_blind_spot` (Exercise 2.2): an
  outcome verifier for the constrained output ``s1,s2#`` run on adversarial
  cases, then a completion in its blind spot (:mod:`rlbook.exercises.verifiers`).
- :func:`check_disagreement_pick` and :func:`check_rule_change` (Exercise
  2.3): a rollout on which the two judges disagree, then what a different
  step rule would do to the chapter's rollouts (:mod:`rlbook.exercises.judges`).

The page imports this module alone and calls every check through it
(``ch2.check_verifier``): the book's table of exercises reads a page's checks
from its ``chN.check_...`` calls. Every check prints and returns a
:class:`~rlbook.exercises.CheckResult` and never raises on a wrong answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

from rlbook.core import rewards as rw
from rlbook.core.world import EOT, Task, parse_prompt

from . import CheckResult, never_raises, not_a_function, not_answered, verdict
from .judges import (
    check_disagreement_count,
    check_disagreement_pick,
    check_rule_change,
    count_disagreements,
    pick_disagreement,
    rollout_lists_problem,
    rule_change_counts,
)
from .registry import Exercise, Mistake, register
from .verifiers import (
    ADVERSARIAL_TASKS,
    BLIND_SPOT_PROMPT,
    SHOW,
    adversarial_cases,
    attempt,
    check_blind_spot,
    check_verifier,
    find_blind_spot,
    is_canonical,
    reference_verifier,
)

# ---------------------------------------------------------------- Exercise 2.1


SCORER_CASES = [
    (Task((3, 4, 5)).prompt, c)
    for c in (
        "07,12#",
        "x,12#",
        " 7,12#",
        "+7,12#",
        ",12#",
        "\u0667,12#",  # step 2 after an unreadable step 1
        "7#,12",
        "#7,12",
        "7,1#2",
        "6#,11",  # only the text before the first end mark counts
        "7,12#",
        "6,11#",
        "6,12#",
        "7,012#",
        "7,12,5#",
        "7",
        "",
        "#",
    )
] + [(Task((9, 9, 9)).prompt, c) for c in ("18,27#", "018,27#", "18#,27", "17,26#", "27#")]
"""Constructed (prompt, completion) pairs on which Exercise 2.1's rules differ from the shortcuts students take."""


def _steps(got) -> tuple[bool, ...] | None:
    """A scorer's answer as a tuple of bools, or None when it is not a list of True/False."""
    if isinstance(got, (str, bytes, dict)) or not hasattr(got, "__iter__"):
        return None
    items = list(got)
    if not all(isinstance(x, (bool, np.bool_)) for x in items):
        return None
    return tuple(bool(x) for x in items)


@never_raises
def check_process_scorer(
    scorer: Callable[[str, str], Sequence[bool] | None] | None, prompts: list[str], completions: list[str]
) -> CheckResult:
    """Exercise 2.1: does ``scorer(prompt, completion)`` give the same step verdicts as ``process_score``?

    ``scorer`` returns one bool per step (step 1 valid iff s1 = a + b; step 2
    valid iff s2 = the rollout's own s1 + c; a step after an unreadable one is
    invalid; only the text before the first end mark is read). It is run on
    the constructed :data:`SCORER_CASES`, which test those rules, and on the
    real rollouts given; the message lists up to three cases where it
    differs, with the reference scorer's reason.
    """
    if scorer is None:
        return not_answered("`my_process_score`")
    if not callable(scorer):
        return not_a_function("my_process_score", scorer)
    problem = rollout_lists_problem(prompts, completions)
    if problem:
        return verdict(False, problem)
    first, error = attempt(scorer, prompts[0], completions[0])
    if error is None and first is None:
        return not_answered("the body of `my_process_score` (it still returns None)")
    real = sorted(set(zip(prompts, completions)))
    wrong: dict[str, list] = {"constructed": [], "real": []}
    for kind, pairs in (("constructed", SCORER_CASES), ("real", real)):
        for prompt, completion in pairs:
            expected = rw.process_score(prompt, completion)
            got, error = attempt(scorer, prompt, completion)
            if error:
                return verdict(
                    False,
                    f"your scorer raised {error} on prompt {prompt!r}, completion {completion!r}; "
                    "a scorer must judge every text, including malformed and budget-stopped ones",
                )
            steps = _steps(got)
            if steps is None:
                return verdict(
                    False,
                    f"your scorer returned {got!r:.60} for {completion!r}; return a list of "
                    f"True/False, one per step ({len(expected.steps)} steps)",
                )
            if steps != expected.steps:
                wrong[kind].append(
                    f"{prompt} {completion!r}: you said {list(steps)}, process_score says "
                    f"{list(expected.steps)} ({expected.reason})"
                )
    if wrong["constructed"] or wrong["real"]:
        listed = "\n  ".join((wrong["real"] + wrong["constructed"])[:SHOW])
        return verdict(
            False,
            f"your scorer differs from rewards.process_score on {len(wrong['real'])} of "
            f"{len(real)} distinct real rollouts and {len(wrong['constructed'])} of "
            f"{len(SCORER_CASES)} constructed cases, for example:\n  {listed}\nRemember: read "
            "only the text before the first end mark; step 2 is judged against the rollout's own "
            "first sum; a step that is missing or not a plain number is invalid, and so is the "
            "step after it.",
        )
    return verdict(
        True,
        f"your scorer agrees with rewards.process_score on all {len(real)} distinct real "
        f"rollouts ({len(prompts)} rollouts in all) and on {len(SCORER_CASES)} constructed cases.",
    )


def reference_process_score(prompt: str, completion: str) -> list[bool] | None:
    """Exercise 2.1's reference solution, written from the rules alone (the chapter's solution box shows it).

    Read the text before the first end mark, split it at commas, and judge
    each expected step against the previous value the rollout itself wrote;
    a step that is missing or not a canonical number is invalid and leaves
    nothing to judge the next step against.
    """
    task = parse_prompt(prompt)
    if task is None:
        return None
    fields = completion.split(EOT)[0].split(",")
    previous: int | None
    steps, previous = [], task.operands[0]
    for i, operand in enumerate(task.operands[1:]):
        text = fields[i] if i < len(fields) else ""
        value = int(text) if is_canonical(text) else None
        steps.append(value is not None and previous is not None and value == previous + operand)
        previous = value
    return steps


# ---------------------------------------------------------------- the mistakes each check names


def _against_the_true_sum(prompt: str, completion: str) -> list[bool]:
    """Exercise 2.1 with every step judged against the true partial sum, not the rollout's own previous value."""
    task = parse_prompt(prompt)
    fields = completion.split(EOT)[0].split(",")
    steps = task.steps if task is not None else ()
    return [i < len(fields) and is_canonical(fields[i]) and int(fields[i]) == s for i, s in enumerate(steps)]


def _past_the_end_mark(prompt: str, completion: str) -> list[bool] | None:
    """Exercise 2.1 reading the whole text, end marks dropped, instead of the text before the first end mark."""
    return reference_process_score(prompt, completion.replace(EOT, "") + EOT)


def _verdicts(prompts, completions) -> list[tuple[bool, list[bool], float]]:
    """Each rollout's outcome verdict (the exact verifier accepts), step verdicts and process score."""
    verify = rw.ExactVerifier()
    return [
        (verify(p, c).status == "accepted", list(rw.process_score(p, c).steps), rw.process_score(p, c).score)
        for p, c in zip(prompts, completions)
    ]


def _agreements(prompts, completions) -> int:
    """Exercise 2.1's second question answered with the rollouts the two verdicts agree on."""
    return len(prompts) - count_disagreements(prompts, completions)


def _some_step_valid(prompts, completions) -> int:
    """Exercise 2.1's second question with "some step valid" in place of "every step valid"."""
    return sum(accepted != any(steps) for accepted, steps, _ in _verdicts(prompts, completions))


def _scores_as_numbers(prompts, completions) -> int:
    """Exercise 2.1's second question comparing the reward with the process score as numbers."""
    return sum(float(accepted) != score for accepted, _, score in _verdicts(prompts, completions))


def _regex_to_the_end(prompt: str, completion: str) -> bool:
    """Exercise 2.2 with a regular expression anchored by ``$``, which also matches before a final newline."""
    match = re.match(r"(0|[1-9][0-9]*),(0|[1-9][0-9]*)#$", completion)
    task = parse_prompt(prompt)
    return match is not None and task is not None and match.group(2) == str(task.answer)


def _stripped_first(prompt: str, completion: str) -> bool:
    """Exercise 2.2 stripping the answer's white space before judging it."""
    return reference_verifier(prompt, completion.strip())


def _loose_first_number(prompt: str, completion: str) -> bool:
    """Exercise 2.2 reading any digits as the first sum, a leading zero or a space included."""
    task = parse_prompt(prompt)
    answer, mark, after = completion.partition(EOT)
    fields = answer.split(",")
    return (
        task is not None
        and bool(mark)
        and not after
        and len(fields) == 2
        and fields[0].strip().isdigit()
        and is_canonical(fields[1])
        and fields[1] == str(task.answer)
    )


def _canonical_only(prompt: str, completion: str) -> bool:
    """Exercise 2.2 accepting the canonical completion alone, so a right total after a wrong first sum is refused."""
    task = parse_prompt(prompt)
    return task is not None and completion == task.completion


def _first(rows: list[bool]) -> int | None:
    """The index of the first True of ``rows``, or None."""
    return next((i for i, row in enumerate(rows) if row), None)


def _agreeing_pick(prompts, completions) -> int | None:
    """Exercise 2.3 picking a rollout the two judges agree on outright: both pass it, or both fail it with no step
    valid."""
    return _first(
        [accepted == all(steps) and score in (0.0, 1.0) for accepted, steps, score in _verdicts(prompts, completions)]
    )


def _partial_credit_pick(prompts, completions) -> int | None:
    """Exercise 2.3 picking a rejected rollout with partial step credit, on which both verdicts still fail."""
    return _first([not accepted and 0 < score < 1 for accepted, _, score in _verdicts(prompts, completions)])


def _swapped_moves(prompts, completions) -> dict[str, int]:
    """Exercise 2.3's rescoring with its two counts swapped."""
    moves = rule_change_counts(prompts, completions)
    return {"gained": moves["lost"], "lost": moves["gained"]}


def _every_partial_credit_lost(prompts, completions) -> dict[str, int]:
    """Exercise 2.3's rescoring counting every rejected rollout with partial credit as lost."""
    partial = sum(not accepted and 0 < score < 1 for accepted, _, score in _verdicts(prompts, completions))
    return {"gained": rule_change_counts(prompts, completions)["gained"], "lost": partial}


def _blind_spot_answers() -> tuple[str, str]:
    """For Exercise 2.2's prompt: its right answer, and a wrong total after a right first sum."""
    task = parse_prompt(BLIND_SPOT_PROMPT)
    assert task is not None  # the prompt of a Task
    first, total = task.steps
    return task.completion, f"{first},{total + 1}{EOT}"


MISTAKES: dict[str, tuple[Mistake, ...]] = {
    "process-scorer": (
        Mistake(_against_the_true_sum, "step 2 is judged against the rollout's own first sum"),
        Mistake(_past_the_end_mark, "read only the text before the first end mark"),
    ),
    "disagreement-count": (
        Mistake(_agreements, "counting the rollouts the two verdicts agree on"),
        Mistake(_some_step_valid, "comparing the outcome with 'some step valid'"),
        Mistake(_scores_as_numbers, "comparing the two scores as numbers"),
    ),
    "verifier": (
        Mistake(_regex_to_the_end, "newline after the end mark"),
        Mistake(_stripped_first, "space before the first sum"),
        Mistake(_loose_first_number, "leading zero on the first sum"),
        Mistake(_canonical_only, "right answer(s) are refused"),
    ),
    "blind-spot": (
        Mistake(lambda verify: _blind_spot_answers()[0], "right in every step"),
        Mistake(lambda verify: _blind_spot_answers()[1], "does not accept"),
    ),
    "disagreement-pick": (
        Mistake(_agreeing_pick, "they agree"),
        Mistake(_partial_credit_pick, "the process score gives partial credit, but both verdicts fail it"),
    ),
    "rule-change": (
        Mistake(_swapped_moves, "the two counts are swapped"),
        Mistake(_every_partial_credit_lost, "counts every wrong answer with partial credit"),
        Mistake(lambda prompts, completions: dict(rule_change_counts(prompts, completions), gained=0), "cannot be 0"),
    ),
}
"""Chapter 2's named mistakes, by exercise: each a plausible wrong answer and the words its checker names it with."""


def _sample(seeds: tuple[int, ...]) -> tuple[list[str], list[str]]:
    """The chapter's multi-step sample (its facts on ``seeds``), as the page passes it to Exercises 2.1 and 2.3."""
    from rlbook import book

    sample = book.load("rewards", seeds, check=False).sample
    return list(sample.prompts), list(sample.completions)


def _block(seeds: tuple[int, ...]) -> tuple[list[str], list[str]]:
    """Exercise 2.3's block of rollouts (the chapter's facts on ``seeds``)."""
    from rlbook import book

    block = book.load("rewards", seeds, check=False).block
    return list(block.prompts), list(block.completions)


for _exercise in (
    Exercise(
        "process-scorer",
        "rewards",
        check_process_scorer,
        reference_process_score,
        inputs=_sample,
        answer_name="my_process_score",
        mistakes=MISTAKES["process-scorer"],
    ),
    Exercise(
        "disagreement-count",
        "rewards",
        check_disagreement_count,
        count_disagreements,
        answer="value",
        inputs=_sample,
        answer_name="my_disagreements",
        call="prompts, completions",
        mistakes=MISTAKES["disagreement-count"],
    ),
    Exercise(
        "verifier",
        "rewards",
        check_verifier,
        reference_verifier,
        answer_name="my_verifier",
        mistakes=MISTAKES["verifier"],
    ),
    Exercise(
        "blind-spot",
        "rewards",
        check_blind_spot,
        find_blind_spot,
        answer="value",
        inputs=lambda seeds: (reference_verifier,),
        answer_name="my_blind_spot",
        call="my_verifier",
        mistakes=MISTAKES["blind-spot"],
    ),
    Exercise(
        "disagreement-pick",
        "rewards",
        check_disagreement_pick,
        pick_disagreement,
        answer="value",
        inputs=_block,
        answer_name="my_pick",
        call="*block",
        mistakes=MISTAKES["disagreement-pick"],
    ),
    Exercise(
        "rule-change",
        "rewards",
        check_rule_change,
        rule_change_counts,
        answer="value",
        inputs=_sample,
        answer_name="my_moves",
        call="prompts, completions",
        mistakes=MISTAKES["rule-change"],
    ),
):
    register(_exercise)

__all__ = [
    "ADVERSARIAL_TASKS",
    "BLIND_SPOT_PROMPT",
    "MISTAKES",
    "SCORER_CASES",
    "adversarial_cases",
    "check_blind_spot",
    "check_disagreement_count",
    "check_disagreement_pick",
    "check_process_scorer",
    "check_rule_change",
    "check_verifier",
    "count_disagreements",
    "find_blind_spot",
    "is_canonical",
    "pick_disagreement",
    "reference_process_score",
    "reference_verifier",
    "rule_change_counts",
]
