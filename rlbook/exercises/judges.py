"""Chapter 2's two judges compared on its real rollouts: Exercise 2.1's second question and Exercise 2.3.

- :func:`check_disagreement_count` (Exercise 2.1): on how many of the
  chapter's multi-step rollouts "every step valid" and the outcome verdict
  differ; reference :func:`count_disagreements`.
- :func:`check_disagreement_pick` and :func:`check_rule_change` (Exercise
  2.3): a rollout on which the two judges disagree, then what a different
  step rule (the true partial sum) would do to the chapter's rollouts;
  references :func:`pick_disagreement` and :func:`rule_change_counts`.

Here too are the checks that the rollouts handed to a checker are the
chapter's (:func:`rollout_lists_problem`, :func:`multi_step_problem`).
:mod:`rlbook.exercises.ch2` registers these exercises, and the page calls
these checkers through it. Every check prints and returns a
:class:`~rlbook.exercises.CheckResult` and never raises on a wrong answer.
"""

from __future__ import annotations

from typing import cast

from rlbook.analysis.disagreement import DISAGREEMENTS, RIGHT_INVALID, judge, partial_credit_summary, rule_change_of
from rlbook.core import rewards as rw
from rlbook.core.world import parse_prompt

from . import CheckResult, as_count, never_raises, not_answered, verdict
from .verifiers import is_canonical


def rollout_lists_problem(prompts, completions) -> str | None:
    """Why ``prompts`` and ``completions`` are not two equal-length lists of text, or None (Exercises 2.1, 2.3)."""
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


def multi_step_problem(prompts, completions) -> str | None:
    """Why ``prompts``/``completions`` are not a block of chapter 2's multi-step rollouts, or None (2.1, 2.3)."""
    problem = rollout_lists_problem(prompts, completions)
    if problem:
        return problem
    if len(prompts) < 4 or any((t := parse_prompt(p)) is None or t.world != "multi" for p in prompts):
        return "give the exercise's real multi-step rollouts (the chapter's lists), not a list of your own"
    return None


# ---------------------------------------------------------------- Exercise 2.1, second question


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
    problem = multi_step_problem(prompts, completions)
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
    problem = multi_step_problem(prompts, completions)
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
    problem = rollout_lists_problem(prompts, completions)
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
