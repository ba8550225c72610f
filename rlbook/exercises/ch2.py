"""Checks for chapter 2's exercises: outcome and process rewards.

- Exercise 2: write a process scorer; :func:`check_process_scorer` runs it on
  real multi-step rollouts and compares it with :func:`rlbook.core.rewards.process_score`.
- Exercise 6: design a verifier for the constrained output ``s1,s2#`` and
  name its blind spot; :func:`check_verifier` runs it on adversarial cases
  and lists what slips through.
- Exercise 11: pick a rollout on which the outcome and process verdicts
  disagree; :func:`check_disagreement_pick` confirms it.

Every check prints and returns a :class:`~rlbook.exercises.CheckResult` and
never raises on a wrong answer.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from rlbook.analysis.disagreement import Judged, judge
from rlbook.core import rewards as rw
from rlbook.core.world import EOT, Task, parse_prompt

from . import CheckResult, Option, as_count, check_choice, never_raises, not_a_function, not_answered, verdict

SHOW = 3
"""How many failing examples a check message lists."""


def _call(fn: Callable, *args):
    """``(value, None)`` or ``(None, "ExceptionName: message")`` when the reader's function raises."""
    try:
        return fn(*args), None
    except Exception as err:  # noqa: BLE001 - a reader's bug becomes a message, never a crash
        return None, f"{type(err).__name__}: {err}"


# ---------------------------------------------------------------- exercise 2


SCORER_CASES = [(Task((3, 4, 5)).prompt, c) for c in (
    "07,12#", "x,12#", " 7,12#", "+7,12#", ",12#", "\u0667,12#",  # step 2 after an unreadable step 1
    "7#,12", "#7,12", "7,1#2", "6#,11",  # only the text before the first end mark counts
    "7,12#", "6,11#", "6,12#", "7,012#", "7,12,5#", "7", "", "#")] + [
    (Task((9, 9, 9)).prompt, c) for c in ("18,27#", "018,27#", "18#,27", "17,26#", "27#")]
"""Constructed (prompt, completion) pairs on which exercise 2's rules differ from the shortcuts students take."""


def _rollout_lists(prompts, completions) -> str | None:
    """Why ``prompts`` and ``completions`` are not two equal-length lists of text, or None when they are."""
    if not isinstance(prompts, (list, tuple)) or not isinstance(completions, (list, tuple)):
        return "`prompts` and `completions` must be lists of text (the chapter's rollouts)"
    if len(prompts) != len(completions) or not prompts:
        return (f"`prompts` and `completions` must be non-empty lists of the same length, got {len(prompts)} and "
                f"{len(completions)}")
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
def check_process_scorer(scorer: Callable[[str, str], Sequence[bool] | None] | None, prompts: list[str],
                         completions: list[str]) -> CheckResult:
    """Exercise 2: does ``scorer(prompt, completion)`` give the same step verdicts as ``process_score``?

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
    first, error = _call(scorer, prompts[0], completions[0])
    if error is None and first is None:
        return not_answered("the body of `my_process_score` (it still returns None)")
    real = sorted(set(zip(prompts, completions)))
    wrong = {"constructed": [], "real": []}
    for kind, pairs in (("constructed", SCORER_CASES), ("real", real)):
        for prompt, completion in pairs:
            expected = rw.process_score(prompt, completion)
            got, error = _call(scorer, prompt, completion)
            if error:
                return verdict(False, f"your scorer raised {error} on prompt {prompt!r}, completion {completion!r}; "
                                      "a scorer must judge every text, including malformed and budget-stopped ones")
            steps = _steps(got)
            if steps is None:
                return verdict(False, f"your scorer returned {got!r:.60} for {completion!r}; return a list of "
                                      f"True/False, one per step ({len(expected.steps)} steps)")
            if steps != expected.steps:
                wrong[kind].append(f"{prompt} {completion!r}: you said {list(steps)}, process_score says "
                                   f"{list(expected.steps)} ({expected.reason})")
    if wrong["constructed"] or wrong["real"]:
        listed = "\n  ".join((wrong["real"] + wrong["constructed"])[:SHOW])
        return verdict(False, f"your scorer differs from rewards.process_score on {len(wrong['real'])} of "
                              f"{len(real)} distinct real rollouts and {len(wrong['constructed'])} of "
                              f"{len(SCORER_CASES)} constructed cases, for example:\n  {listed}\nRemember: read "
                              "only the text before the first end mark; step 2 is judged against the rollout's own "
                              "first sum; a step that is missing or not a plain number is invalid, and so is the "
                              "step after it.")
    return verdict(True, f"your scorer agrees with rewards.process_score on all {len(real)} distinct real "
                         f"rollouts ({len(prompts)} rollouts in all) and on {len(SCORER_CASES)} constructed cases.")


def reference_process_score(prompt: str, completion: str) -> list[bool] | None:
    """A solution to exercise 2, written from the rules alone (the chapter's solution cell shows this source).

    Read the text before the first end mark, split it at commas, and judge
    each expected step against the previous value the rollout itself wrote;
    a step that is missing or not a canonical number is invalid and leaves
    nothing to judge the next step against.
    """
    task = parse_prompt(prompt)
    if task is None:
        return None
    fields = completion.split(EOT)[0].split(",")
    steps, previous = [], task.operands[0]
    for i, operand in enumerate(task.operands[1:]):
        text = fields[i] if i < len(fields) else ""
        value = int(text) if is_canonical(text) else None
        steps.append(value is not None and previous is not None and value == previous + operand)
        previous = value
    return steps


def is_canonical(text: str) -> bool:
    """Whether ``text`` is a number as the book writes it: ASCII digits only, no leading zero (exercises 2 and 6)."""
    return text.isascii() and text.isdigit() and (text == "0" or text[0] != "0")


def reference_verifier(prompt: str, completion: str) -> bool:
    """A solution to exercise 6: the outcome rule for ``s1,s2#`` written out (the chapter shows this source)."""
    task = parse_prompt(prompt)
    answer, mark, after = completion.partition(EOT)
    if task is None or not mark or after:
        return False
    fields = answer.split(",")
    if len(fields) != len(task.steps) or not all(is_canonical(f) for f in fields):
        return False
    return fields[-1] == str(task.answer)


REFERENCE_BLIND_SPOT = "6,12#"
"""A solution to exercise 6's second half: 6 is not 3+4, yet the final sum 12 is right."""


# ---------------------------------------------------------------- exercise 6

BLIND_SPOT_PROMPT = Task((3, 4, 5)).prompt
"""The prompt for which exercise 6 asks a completion in the verifier's blind spot."""

ADVERSARIAL_TASKS = [Task((3, 4, 5)), Task((9, 9, 9)), Task((0, 0, 0)), Task((1, 8, 0)), Task((5, 5, 9))]


def adversarial_cases() -> list[tuple[str, str, str]]:
    """(description, prompt, completion) for exercise 6: right answers, near misses and format tricks.

    Each is built for several tasks from the same template, so a verifier
    that special-cases one prompt is caught on another.
    """
    cases = []
    for task in ADVERSARIAL_TASKS:
        s1, s2 = task.steps
        arabic = str(s2)[:-1] + chr(0x0660 + int(str(s2)[-1]))
        templates = [
            ("the canonical answer", f"{s1},{s2}{EOT}"),
            ("right final through a wrong first sum", f"{s1 + 1},{s2}{EOT}"),
            ("final sum written twice", f"{s2},{s2}{EOT}"),
            ("wrong final sum", f"{s1},{s2 + 1}{EOT}"),
            ("final sum only", f"{s2}{EOT}"),
            ("leading zero on the final sum", f"{s1},0{s2}{EOT}"),
            ("leading zero on the first sum", f"0{s1},{s2}{EOT}"),
            ("space before the first sum", f" {s1},{s2}{EOT}"),
            ("space after the comma", f"{s1}, {s2}{EOT}"),
            ("space before the end mark", f"{s1},{s2} {EOT}"),
            ("plus sign", f"{s1},+{s2}{EOT}"),
            ("a third number", f"{s1},{s2},{s2}{EOT}"),
            ("text after the end mark", f"{s1},{s2}{EOT}{s2}"),
            ("newline after the end mark", f"{s1},{s2}{EOT}\n"),
            ("space after the end mark", f"{s1},{s2}{EOT} "),
            ("two end marks", f"{s1},{s2}{EOT}{EOT}"),
            ("no end mark (budget)", f"{s1},{s2}"),
            ("non-ASCII digit", f"{s1},{arabic}{EOT}"),
            ("newline before the end mark", f"{s1},{s2}\n{EOT}"),
            ("empty answer", EOT),
            ("missing first sum", f",{s2}{EOT}"),
            ("an equation", f"{s1}+{task.operands[2]}={s2}{EOT}"),
        ]
        cases += [(name, task.prompt, completion) for name, completion in templates]
    return cases


def _accepts(got) -> bool | None:
    """A verifier's answer as a bool: True/False (or 1/0); None for anything else, such as ``"yes"``."""
    if isinstance(got, (bool, np.bool_)):
        return bool(got)
    count = as_count(got)
    return None if count not in (0, 1) else bool(count)


@never_raises
def check_verifier(verify: Callable[[str, str], bool | None] | None, blind_spot: str | None) -> CheckResult:
    """Exercise 6: run the reader's outcome verifier on adversarial cases; check the named blind spot.

    The constrained output is ``s1,s2#``: two canonical numbers (ASCII
    digits, no sign, space or leading zero) separated by one comma, then the
    end mark and nothing after it; only the final number is judged. The
    reader's ``verify`` must return True or False and accept exactly what
    :class:`rewards.ExactVerifier` accepts on the cases; the message lists
    what slips through (accepted but should not be) and what is wrongly
    refused. ``blind_spot`` must be a completion for
    :data:`BLIND_SPOT_PROMPT` that ``verify`` accepts although a step is wrong.
    """
    if verify is None:
        return not_answered("`my_verifier`")
    if not callable(verify):
        return not_a_function("my_verifier", verify)
    probe, error = _call(verify, *adversarial_cases()[0][1:])
    if error is None and probe is None:
        return not_answered("the body of `my_verifier` (it still returns None)")
    exact = rw.ExactVerifier()
    slipped, refused, blind = [], [], []
    for name, prompt, completion in adversarial_cases():
        got, error = _call(verify, prompt, completion)
        if error:
            return verdict(False, f"your verifier raised {error} on {prompt} {completion!r} ({name}); "
                                  "a verifier must answer for every text")
        accepted = _accepts(got)
        if accepted is None:
            return verdict(False, f"your verifier returned {got!r:.40} for {prompt} {completion!r}; return True to "
                                  "accept and False to refuse (a string such as 'yes' or '' is not a verdict)")
        expected = exact(prompt, completion)
        if accepted and not expected.reward:
            slipped.append((name, f"{name}: {prompt} {completion!r} (should be {expected.status}: "
                                  f"{expected.reason})"))
        elif not accepted and expected.reward:
            refused.append((name, f"{name}: {prompt} {completion!r}"))
        elif accepted and not rw.process_score(prompt, completion).score == 1.0:
            blind.append(completion)
    problems = []
    for found, what in ((slipped, "adversarial case(s) slip through"), (refused, "right answer(s) are refused")):
        if found:
            kinds = ", ".join(dict.fromkeys(name for name, _ in found))
            problems.append(f"{len(found)} {what} ({kinds}), e.g.\n  " + "\n  ".join(t for _, t in found[:SHOW]))
    if problems:
        return verdict(False, "\n".join(problems))
    return _check_blind_spot(verify, blind_spot, blind)


def _check_blind_spot(verify: Callable[[str, str], bool | None], blind_spot: str | None,
                      blind: list[str]) -> CheckResult:
    """The second half of exercise 6: a completion the verifier accepts although its reasoning is wrong."""
    if blind_spot is None:
        return not_answered("`my_blind_spot`, a completion for "
                            f"{BLIND_SPOT_PROMPT} that your verifier accepts although a step is wrong "
                            "(your verifier itself passes every adversarial case)")
    if not isinstance(blind_spot, str):
        return verdict(False, f"`my_blind_spot` must be a completion, a str such as the policy writes, got "
                              f"{type(blind_spot).__name__}")
    accepted, error = _call(verify, BLIND_SPOT_PROMPT, blind_spot)
    process = rw.process_score(BLIND_SPOT_PROMPT, blind_spot)
    if error or not _accepts(accepted):
        return verdict(False, f"your verifier does not accept {blind_spot!r} for {BLIND_SPOT_PROMPT}, so it is not "
                              "a blind spot of it: name a completion it accepts")
    if process.score == 1.0:
        return verdict(False, f"{blind_spot!r} is right in every step ({process.reason}); a blind spot is a "
                              "completion the verifier accepts although the reasoning is wrong")
    return verdict(True, f"your verifier passes every adversarial case, and {blind_spot!r} is in its blind spot: "
                         f"accepted, yet {process.reason}. Among the cases it also accepted "
                         f"{len(blind)} with a wrong step, e.g. {blind[:SHOW]}: an outcome check cannot see "
                         "how the answer was reached.")


# ---------------------------------------------------------------- exercise 11


def exercise_rows(judged: list[Judged], k: int = 12, avoid: frozenset[str] = frozenset()) -> list[Judged]:
    """The ``k`` consecutive rollouts shown in exercise 11: the first block of the sample holding a disagreement.

    Blocks start at multiples of ``k``. A block holding a prompt in
    ``avoid`` (say, the one the chapter's figure already shows) is skipped
    when another block qualifies; with no disagreement at all, the first block.
    """
    blocks = [judged[i:i + k] for i in range(0, len(judged), k)]
    useful = [b for b in blocks if any(j.disagrees for j in b)]
    fresh = [b for b in useful if not any(j.prompt in avoid for j in b)]
    return (fresh or useful or blocks)[0]


@never_raises
def check_disagreement_pick(index: int | None, prompts: list[str], completions: list[str]) -> CheckResult:
    """Exercise 11: is rollout ``index`` of the listed real rollouts a case where the verdicts disagree?

    Disagreeing means one verdict passes the rollout and the other fails it:
    the outcome verifier accepts while a step is invalid, or every step is
    valid while the outcome verifier rejects. The list is checked first: at
    least four multi-step rollouts, some on which the judges agree and some
    on which they do not, so that picking is a choice. The index may be
    written ``3`` or ``3.0``, not ``True``.
    """
    if index is None:
        return not_answered("`my_pick`, the index of a rollout in the list")
    problem = _rollout_lists(prompts, completions)
    if problem:
        return verdict(False, problem)
    if len(prompts) < 4 or any(parse_prompt(p) is None or parse_prompt(p).world != "multi" for p in prompts):
        return verdict(False, "give the exercise's block of real multi-step rollouts (shown_prompts and "
                              "shown_completions), not a list of your own")
    judged = judge(list(prompts), list(completions))
    if all(j.disagrees for j in judged) or not any(j.disagrees for j in judged):
        return verdict(False, "in the list given, the judges agree on every rollout or on none, so there is nothing "
                              "to pick: give the exercise's block (shown_prompts and shown_completions)")
    position = as_count(index)
    if position is None or not 0 <= position < len(prompts):
        return verdict(False, f"{index!r} is not an index of the list: pick a whole number from 0 to "
                              f"{len(prompts) - 1}")
    j = judged[position]
    said = (f"rollout {position} ({j.prompt} {j.completion!r}): the outcome verifier says {j.status} "
            f"(reward {j.reward:.0f}: {j.reason}); the process scorer says {j.process:.1f} ({j.process_reason})")
    if j.disagrees:
        return verdict(True, f"{said}. They disagree: {j.kind}.")
    hint = ("the process score gives partial credit, but both verdicts fail it" if j.process > 0 and not j.outcome_pass
            else "they agree")
    return verdict(False, f"{said}: {hint}. Look for a right final sum after a wrong first sum, or for right "
                          "sums with a broken ending.")


JUDGES = {
    "a": Option("The outcome verifier: only the final answer counts, and it is right or wrong.", False,
                "the final answer is the verifier's whole view, so it cannot see a wrong step behind a right sum; "
                "believing it alone says the reasoning does not matter"),
    "b": Option("Each, about what it checks: the verifier about the final answer, the scorer about the steps.", True,
                "right: each judge is sound about what it reads, and the disagreement says that one verdict alone "
                "does not describe the rollout"),
    "c": Option("The process scorer: a right answer reached through a wrong step is luck.", False,
                "the scorer judges each step, but it does not check the format of the ending, which the verifier "
                "does; believing it alone would pay a broken answer with valid sums"),
}
"""Exercise 11's second half, as stated options: which judge to believe when they disagree."""


@never_raises
def check_judge(choice: str | None) -> CheckResult:
    """Exercise 11, second half: which judge to believe when the verdicts disagree, a pick among :data:`JUDGES`."""
    return check_choice(choice, JUDGES, "my_judge")
