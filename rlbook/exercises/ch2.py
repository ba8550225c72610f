"""Checkers for chapter 2's exercises (outcome and process rewards), each registered with its reference solution.

- :func:`check_process_scorer` (Exercise 2.1): a process scorer, run on the
  chapter's real multi-step rollouts and on constructed cases, compared
  with :func:`rlbook.core.rewards.process_score`; then
  :func:`check_disagreement_count`, on how many of those rollouts "every
  step valid" and the outcome verdict differ.
- :func:`check_verifier` and :func:`check_blind_spot` (Exercise 2.2): an
  outcome verifier for the constrained output ``s1,s2#`` run on adversarial
  cases, then a completion in its blind spot.
- :func:`check_disagreement_pick` and :func:`check_rule_change` (Exercise
  2.3): a rollout on which the two judges disagree, then what a different
  step rule (the true partial sum) would do to the chapter's rollouts.

Every check prints and returns a :class:`~rlbook.exercises.CheckResult` and
never raises on a wrong answer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

import numpy as np

from rlbook.analysis.disagreement import DISAGREEMENTS, RIGHT_INVALID, judge, partial_credit_summary, rule_change_of
from rlbook.core import rewards as rw
from rlbook.core.world import EOT, Task, parse_prompt

from . import CheckResult, as_count, never_raises, not_a_function, not_answered, verdict
from .registry import Exercise, register
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


def _rollout_lists(prompts, completions) -> str | None:
    """Why ``prompts`` and ``completions`` are not two equal-length lists of text, or None when they are."""
    if not isinstance(prompts, (list, tuple)) or not isinstance(completions, (list, tuple)):
        return "`prompts` and `completions` must be lists of text (the chapter's rollouts)"
    if len(prompts) != len(completions) or not prompts:
        return (
            f"`prompts` and `completions` must be non-empty lists of the same length, got {len(prompts)} and "
            f"{len(completions)}"
        )
    if not all(isinstance(x, str) for x in [*prompts, *completions]):
        return "every prompt and completion must be text (a str)"
    return None


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
    problem = _rollout_lists(prompts, completions)
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


def _disagreement_hints(got: int, judged: list, prompts, completions) -> list[str]:
    """Every likely mistake that gives ``got`` as the number of disagreements, as what the reader did."""
    pairs = sorted(set(zip(prompts, completions)))
    distinct = sum(j.disagrees for j in judge([p for p, _ in pairs], [c for _, c in pairs]))
    one_way = "a right answer with an invalid step differs too"
    other_way = "a rollout with every step valid whose answer the verifier rejects differs too"
    counts = [
        (sum(not j.disagrees for j in judged), "counting the rollouts the two verdicts agree on"),
        (distinct, "counting each distinct rollout once (count every rollout, repeats included)"),
        (sum(j.outcome_pass and not j.process_pass for j in judged), f"counting right answers only ({other_way})"),
        (sum(j.process_pass and not j.outcome_pass for j in judged), f"counting rejected answers only ({one_way})"),
        (
            sum(j.outcome_pass != (j.process > 0) for j in judged),
            "comparing the outcome with 'some step valid' (the process verdict needs every step valid)",
        ),
        (
            sum(j.reward != j.process for j in judged),
            "comparing the two scores as numbers, so that partial credit counts (compare pass with fail)",
        ),
    ]
    return [hint for count, hint in counts if count == got]


@never_raises
def check_disagreement_count(answer, prompts: list[str], completions: list[str]) -> CheckResult:
    """Exercise 2.1, second question: on how many of the chapter's rollouts does "every step valid" differ from
    the outcome verdict (the exact verifier accepts)?

    The count is over every rollout of the sample, repeats included. A wrong
    count is told each likely mistake that gives it: the agreements counted,
    repeats skipped, one direction of disagreement only, "some step valid"
    in place of "every step valid", or the scores compared as numbers.
    """
    if answer is None:
        return not_answered("`my_disagreements` (a count of rollouts)")
    problem = _multi_step_block(prompts, completions)
    if problem:
        return verdict(False, problem)
    got = as_count(answer)
    if got is None:
        return verdict(False, f"`my_disagreements` must be a whole number of rollouts, got {answer!r:.40}")
    judged = judge(list(prompts), list(completions))
    if not 0 <= got <= len(judged):
        return verdict(False, f"{got} is not a count of the {len(judged)} rollouts")
    want = sum(j.disagrees for j in judged)
    if got == want:
        cells = {kind: sum(j.kind == kind for j in judged) for kind in DISAGREEMENTS}
        split = "; ".join(f"{kind}: {n}" for kind, n in cells.items() if n)
        said = f"the two verdicts differ on {want} of the {len(judged)} rollouts"
        return verdict(True, said + (f" ({split})" if split else ""))
    hints = _disagreement_hints(got, judged, prompts, completions)
    why = f"; it is what you get by {' or by '.join(hints)}" if hints else ""
    return verdict(
        False,
        f"{got} is not right{why}. Count the rollouts where exactly one verdict passes: the exact verifier "
        "accepts the answer, or your scorer finds every step valid, but not both",
    )


def count_disagreements(prompts, completions):
    """Exercise 2.1's second reference: the rollouts on which "accepted" and "every step valid" differ."""
    verifier = rw.ExactVerifier()
    count = 0
    for prompt, completion in zip(prompts, completions):
        accepted = verifier(prompt, completion).status == "accepted"
        steps = rw.process_score(prompt, completion).steps
        count += accepted != (len(steps) > 0 and all(steps))
    return count


# ---------------------------------------------------------------- Exercise 2.3


def _multi_step_block(prompts, completions) -> str | None:
    """Why ``prompts``/``completions`` are not a block of the chapter's multi-step rollouts, or None."""
    problem = _rollout_lists(prompts, completions)
    if problem:
        return problem
    if len(prompts) < 4 or any((t := parse_prompt(p)) is None or t.world != "multi" for p in prompts):
        return "give the exercise's real multi-step rollouts (the chapter's lists), not a list of your own"
    return None


@never_raises
def check_disagreement_pick(index: int | None, prompts: list[str], completions: list[str]) -> CheckResult:
    """Exercise 2.3, first half: is rollout ``index`` of the listed real rollouts one the verdicts disagree on?

    Disagreeing means one verdict passes the rollout and the other fails it:
    the outcome verifier accepts while a step is invalid, or every step is
    valid while the outcome verifier rejects. The list is checked first: at
    least four multi-step rollouts, some on which the judges agree and some
    on which they do not, so that picking is a choice. The index may be
    written ``3`` or ``3.0``, not ``True``.
    """
    if index is None:
        return not_answered("`my_pick`, the index of a rollout in the list")
    problem = _multi_step_block(prompts, completions)
    if problem:
        return verdict(False, problem)
    judged = judge(list(prompts), list(completions))
    if all(j.disagrees for j in judged) or not any(j.disagrees for j in judged):
        return verdict(
            False,
            "in the list given, the judges agree on every rollout or on none, so there is nothing "
            "to pick: give the exercise's block (F.block.prompts and F.block.completions)",
        )
    position = as_count(index)
    if position is None or not 0 <= position < len(prompts):
        return verdict(
            False, f"{index!r} is not an index of the list: pick a whole number from 0 to {len(prompts) - 1}"
        )
    j = judged[position]
    said = (
        f"rollout {position} ({j.prompt} {j.completion!r}): the outcome verifier says {j.status} "
        f"(reward {j.reward:.0f}: {j.reason}); the process scorer says {j.process:.1f} ({j.process_reason})"
    )
    if j.disagrees:
        return verdict(True, f"{said}. They disagree: {j.kind}.")
    hint = (
        "the process score gives partial credit, but both verdicts fail it"
        if j.process > 0 and not j.outcome_pass
        else "they agree"
    )
    return verdict(
        False,
        f"{said}: {hint}. Look for a right final sum after a wrong first sum, or for right sums with a broken ending.",
    )


def pick_disagreement(prompts: list[str], completions: list[str]) -> int | None:
    """Exercise 2.3's reference pick: the first row that exactly one of the two judges passes."""
    verify = rw.ExactVerifier()
    for i, (prompt, completion) in enumerate(zip(prompts, completions)):
        outcome = verify(prompt, completion).status == "accepted"
        process = all(rw.process_score(prompt, completion).steps)
        if outcome != process:
            return i
    return None


MOVES = ("gained", "lost")
"""The counts Exercise 2.3's second half asks for."""


def _moves(answer) -> tuple[int, int] | str:
    """The reader's (gained, lost) from a dict (keys in any case) or a pair; a message when it is neither."""
    if isinstance(answer, dict):
        keys = {str(k).strip().lower(): v for k, v in answer.items()}
        if not set(MOVES) <= set(keys):
            return "`my_moves` needs the keys 'gained' and 'lost'"
        values = [keys[k] for k in MOVES]
    elif isinstance(answer, (list, tuple)) and len(answer) == 2:
        values = list(answer)
    else:
        return "`my_moves` must be a dict {'gained': number, 'lost': number}"
    if any(v is None for v in values):
        return "no answer yet: fill in both numbers of `my_moves` and run the cell again"
    counts = [as_count(v) for v in values]
    if any(c is None for c in counts):
        return f"each count must be a whole number of rollouts, got {values[0]!r:.20} and {values[1]!r:.20}"
    whole = cast(list[int], counts)  # no None: refused above
    if any(c < 0 for c in whole):
        return (
            f"a count is never negative: 'lost' counts the rollouts whose reward fell, as a number of rollouts "
            f"(got {values[0]!r:.20} and {values[1]!r:.20})"
        )
    return whole[0], whole[1]


def _distinct_moves(prompts, completions) -> dict[str, object]:
    """:func:`rule_change_of` on each distinct rollout once: what a count that skips repeats gives."""
    pairs = sorted(set(zip(prompts, completions)))
    return rule_change_of([p for p, _ in pairs], [c for _, c in pairs])


@never_raises
def check_rule_change(answer, prompts: list[str], completions: list[str]) -> CheckResult:
    """Exercise 2.3, second half: how many of the chapter's rollouts gain and lose process score when step 2 is
    judged against the true partial sum (:func:`rlbook.analysis.disagreement.true_sum_steps`)?

    ``answer`` is ``{"gained": n, "lost": n}`` (keys in any case; the
    numbers may be floats such as ``318.0`` or NumPy ints) or the pair
    ``(gained, lost)``. Wrong counts are told the mistake they most likely
    come from: the two swapped, repeats skipped, every partial credit counted
    as lost, or no gain at all.
    """
    if answer is None:
        return not_answered("`my_moves`")
    problem = _rollout_lists(prompts, completions)
    if problem:
        return verdict(False, problem)
    read = _moves(answer)
    if isinstance(read, str):
        return verdict(False, read)
    gained, lost = read
    truth = rule_change_of(list(prompts), list(completions))
    want = (truth["gained"], truth["lost"])
    if (gained, lost) == want:
        right_invalid = cast(dict, truth["gained_from"]).get(RIGHT_INVALID, 0)
        gains = (
            "every gain is a right answer reached through a wrong first sum"
            if right_invalid == gained
            else f"{right_invalid:,} of the gains are right answers reached through a wrong first sum, and the others "
            "write the true second sum after an unreadable first sum or in an answer the verifier rejects"
        )
        return verdict(
            True,
            f"{gained:,} rollouts gain and {lost:,} lose: {gains} (the new rule finds their step 2 "
            "valid), and every loss is a wrong first sum carried forward consistently. A different "
            "judge of the same steps moves rollouts both ways between the cells of the matrix.",
        )
    if (lost, gained) == want:
        return verdict(
            False,
            "the two counts are swapped: a right total after a wrong first sum gains under the new "
            "rule, and a wrong first sum carried forward loses",
        )
    distinct = _distinct_moves(prompts, completions)
    if (gained, lost) == (distinct["gained"], distinct["lost"]):
        return verdict(
            False,
            "those are counts of distinct rollouts: count every rollout of the sample, repeats "
            "included, as the matrix does",
        )
    problems = []
    if lost != want[1]:
        partial = partial_credit_summary(judge(list(prompts), list(completions)))["total"]
        problems.append(
            "`lost` counts every wrong answer with partial credit, but a right first sum followed by a "
            "slip keeps its credit for step 1 under both rules."
            if lost == partial
            else "`lost` is not right: which rollouts have step 2 valid only because it follows their own "
            "wrong first sum?"
        )
    if gained != want[0]:
        problems.append(
            "`gained` cannot be 0: a right total after a wrong first sum has step 2 valid under the new rule."
            if gained == 0
            else "`gained` is not right: which rollouts write the true second sum after a first sum that is not a + b?"
        )
    return verdict(
        False,
        " ".join(problems) + " Rescore every rollout with the new rule and compare its score "
        "with rewards.process_score's.",
    )


def rule_change_counts(prompts: list[str], completions: list[str]) -> dict[str, int]:
    """Exercise 2.3's reference rescoring: every step judged against the true partial sum, then compared."""
    moves = {"gained": 0, "lost": 0}
    for prompt, completion in zip(prompts, completions):
        fields = completion.split("#")[0].split(",")
        task = parse_prompt(prompt)
        if task is None:
            raise ValueError(f"{prompt!r} is not a task prompt")
        truth = task.steps  # a + b, then a + b + c
        steps = [i < len(fields) and is_canonical(fields[i]) and int(fields[i]) == s for i, s in enumerate(truth)]
        new, old = sum(steps) / len(steps), rw.process_score(prompt, completion).score
        if new != old:
            moves["gained" if new > old else "lost"] += 1
    return moves


def _sample() -> tuple[list[str], list[str]]:
    """The chapter's multi-step sample (its facts), as the page passes it to Exercises 2.1 and 2.3."""
    from rlbook import book

    sample = book.load("rewards", check=False).sample
    return list(sample.prompts), list(sample.completions)


def _block() -> tuple[list[str], list[str]]:
    """Exercise 2.3's block of rollouts (the chapter's facts)."""
    from rlbook import book

    block = book.load("rewards", check=False).block
    return list(block.prompts), list(block.completions)


for _exercise in (
    Exercise(
        "process-scorer",
        "rewards",
        check_process_scorer,
        reference_process_score,
        inputs=_sample,
        answer_name="my_process_score",
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
    ),
    Exercise("verifier", "rewards", check_verifier, reference_verifier, answer_name="my_verifier"),
    Exercise(
        "blind-spot",
        "rewards",
        check_blind_spot,
        find_blind_spot,
        answer="value",
        inputs=lambda: (reference_verifier,),
        answer_name="my_blind_spot",
        call="my_verifier",
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
    ),
):
    register(_exercise)

__all__ = [
    "ADVERSARIAL_TASKS",
    "BLIND_SPOT_PROMPT",
    "MOVES",
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
