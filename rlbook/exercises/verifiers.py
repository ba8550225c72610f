"""Exercise 2.2's checkers (chapter 2): an outcome verifier for ``s1,s2#`` on adversarial cases, then its
blind spot. :mod:`rlbook.exercises.ch2` registers them with their references, which are here too.

Every check prints and returns a :class:`~rlbook.exercises.CheckResult` and
never raises on a wrong answer.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rlbook.core import rewards as rw
from rlbook.core.world import EOT, Task, parse_prompt

from . import CheckResult, as_count, never_raises, not_answered, verdict

SHOW = 3
"""How many failing examples a check message lists."""


def attempt(fn: Callable, *args):
    """``(value, None)`` or ``(None, "ExceptionName: message")`` when the reader's function raises."""
    try:
        return fn(*args), None
    except Exception as err:  # noqa: BLE001 - a reader's bug becomes a message, never a crash
        return None, f"{type(err).__name__}: {err}"


def is_canonical(text: str) -> bool:
    """Whether ``text`` is a number as the book writes it: ASCII digits only, no leading zero (Exercises 2.1, 2.2)."""
    return text.isascii() and text.isdigit() and (text == "0" or text[0] != "0")


def reference_verifier(prompt: str, completion: str) -> bool:
    """Exercise 2.2's reference verifier: the outcome rule for ``s1,s2#`` written out (its solution box shows it)."""
    task = parse_prompt(prompt)
    answer, mark, after = completion.partition(EOT)
    if task is None or not mark or after:
        return False
    fields = answer.split(",")
    if len(fields) != len(task.steps) or not all(is_canonical(f) for f in fields):
        return False
    return fields[-1] == str(task.answer)


BLIND_SPOT_PROMPT = Task((3, 4, 5)).prompt
"""The prompt for which Exercise 2.2 asks a completion in the verifier's blind spot."""

ADVERSARIAL_TASKS = [Task((3, 4, 5)), Task((9, 9, 9)), Task((0, 0, 0)), Task((1, 8, 0)), Task((5, 5, 9))]


def adversarial_cases() -> list[tuple[str, str, str]]:
    """(description, prompt, completion) for Exercise 2.2: right answers, near misses and format tricks.

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


def _verifier_problem(verify: Callable[[str, str], bool | None] | None) -> str | None:
    """What is wrong with a reader's verifier on the adversarial cases, or None when it judges them all right.

    The message lists what slips through (accepted but should not be) and
    what is wrongly refused, with the exact verifier's reason.
    """
    if verify is None:
        return "no answer yet: fill in `my_verifier` and run the cell again"
    if not callable(verify):
        return f"`my_verifier` must be a function, got {type(verify).__name__} {verify!r:.60}"
    probe, error = attempt(verify, *adversarial_cases()[0][1:])
    if error is None and probe is None:
        return "no answer yet: fill in the body of `my_verifier` (it still returns None) and run the cell again"
    exact = rw.ExactVerifier()
    slipped, refused = [], []
    for name, prompt, completion in adversarial_cases():
        got, error = attempt(verify, prompt, completion)
        if error:
            return (
                f"your verifier raised {error} on {prompt} {completion!r} ({name}); a verifier must answer for "
                "every text"
            )
        accepted = _accepts(got)
        if accepted is None:
            return (
                f"your verifier returned {got!r:.40} for {prompt} {completion!r}; return True to accept and "
                "False to refuse (a string such as 'yes' or '' is not a verdict)"
            )
        expected = exact(prompt, completion)
        if accepted and not expected.reward:
            slipped.append((name, f"{name}: {prompt} {completion!r} (should be {expected.status}: {expected.reason})"))
        elif not accepted and expected.reward:
            refused.append((name, f"{name}: {prompt} {completion!r}"))
    problems = []
    for found, what in ((slipped, "adversarial case(s) slip through"), (refused, "right answer(s) are refused")):
        if found:
            kinds = ", ".join(dict.fromkeys(name for name, _ in found))
            problems.append(f"{len(found)} {what} ({kinds}), e.g.\n  " + "\n  ".join(t for _, t in found[:SHOW]))
    return "\n".join(problems) or None


@never_raises
def check_verifier(verify: Callable[[str, str], bool | None] | None) -> CheckResult:
    """Exercise 2.2, first half: run the reader's outcome verifier on :func:`adversarial_cases`.

    The constrained output is ``s1,s2#``: two canonical numbers (ASCII
    digits, no sign, space or leading zero) separated by one comma, then the
    end mark and nothing after it; only the final number is judged. The
    reader's ``verify`` must return True or False and accept exactly what
    :class:`rewards.ExactVerifier` accepts on the cases.
    """
    problem = _verifier_problem(verify)
    if problem:
        return verdict(False, problem)
    return verdict(
        True,
        f"your verifier judges all {len(adversarial_cases())} adversarial cases as the book's exact "
        "verifier does: it accepts exactly the well-formed answers with the right final sum",
    )


@never_raises
def check_blind_spot(blind_spot: str | None, verify: Callable[[str, str], bool | None] | None) -> CheckResult:
    """Exercise 2.2, second half: a completion for :data:`BLIND_SPOT_PROMPT` that ``verify`` accepts
    although a step is wrong (the process scorer finds a step invalid).

    ``verify`` must pass :func:`check_verifier` first, so that the blind spot
    named is one of a sound outcome verifier, not of a bug.
    """
    if blind_spot is None:
        return not_answered(
            f"`my_blind_spot`, a completion for {BLIND_SPOT_PROMPT} that your verifier accepts although a step is wrong"
        )
    if not isinstance(blind_spot, str):
        return verdict(
            False,
            f"`my_blind_spot` must be a completion, a str such as the policy writes, got {type(blind_spot).__name__}",
        )
    problem = _verifier_problem(verify)
    if problem:
        return verdict(
            False,
            "first make `my_verifier` pass its own check (the cell above); the blind spot to "
            f"name is that of a verifier that works. Its check says: {problem}",
        )
    assert verify is not None  # _verifier_problem names a missing verifier
    accepted, error = attempt(verify, BLIND_SPOT_PROMPT, blind_spot)
    process = rw.process_score(BLIND_SPOT_PROMPT, blind_spot)
    if error or not _accepts(accepted):
        return verdict(
            False,
            f"your verifier does not accept {blind_spot!r} for {BLIND_SPOT_PROMPT}, so it is not "
            "a blind spot of it: name a completion it accepts",
        )
    if process.score == 1.0:
        return verdict(
            False,
            f"{blind_spot!r} is right in every step ({process.reason}); a blind spot is a "
            "completion the verifier accepts although the reasoning is wrong",
        )
    others = [
        c
        for _, p, c in adversarial_cases()
        if _accepts(attempt(verify, p, c)[0]) and rw.process_score(p, c).score < 1.0 and c != blind_spot
    ]
    return verdict(
        True,
        f"{blind_spot!r} is in your verifier's blind spot: accepted, yet {process.reason}. It also "
        f"accepts {len(others)} adversarial cases with a wrong step, e.g. {others[:SHOW]}: an "
        "outcome check cannot see how the answer was reached.",
    )


def find_blind_spot(verify: Callable[[str, str], bool]) -> str | None:
    """Exercise 2.2's reference blind spot, found rather than guessed: a wrong first sum before the right total."""
    task = parse_prompt(BLIND_SPOT_PROMPT)
    assert task is not None  # the prompt of a Task, so well formed
    prompt, total = BLIND_SPOT_PROMPT, task.answer
    for first in range(total + 1):
        answer = f"{first},{total}#"
        if verify(prompt, answer) and not all(rw.process_score(prompt, answer).steps):
            return answer
    return None
