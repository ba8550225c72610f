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

from rlbook.analysis.disagreement import Judged, judge
from rlbook.core import rewards as rw
from rlbook.core.world import EOT, Task, parse_prompt

from . import CheckResult, not_answered, verdict

SHOW = 3
"""How many failing examples a check message lists."""


def _call(fn: Callable, *args):
    """``(value, None)`` or ``(None, "ExceptionName: message")`` when the reader's function raises."""
    try:
        return fn(*args), None
    except Exception as err:  # noqa: BLE001 - a reader's bug becomes a message, never a crash
        return None, f"{type(err).__name__}: {err}"


# ---------------------------------------------------------------- exercise 2


def check_process_scorer(scorer: Callable[[str, str], Sequence[bool] | None] | None, prompts: list[str],
                         completions: list[str]) -> CheckResult:
    """Exercise 2: does ``scorer(prompt, completion)`` give the same step verdicts as ``process_score``?

    ``scorer`` returns one bool per step (step 1 valid iff s1 = a + b; step 2
    valid iff s2 = the rollout's own s1 + c). It is run on the real rollouts
    given; the message lists up to three rollouts where it differs, with the
    reference scorer's reason.
    """
    if scorer is None:
        return not_answered("`my_process_score`")
    first, error = _call(scorer, prompts[0], completions[0])
    if error is None and first is None:
        return not_answered("the body of `my_process_score` (it still returns None)")
    pairs = sorted(set(zip(prompts, completions)))
    wrong = []
    for prompt, completion in pairs:
        expected = rw.process_score(prompt, completion)
        got, error = _call(scorer, prompt, completion)
        if error:
            return verdict(False, f"your scorer raised {error} on prompt {prompt!r}, completion {completion!r}; "
                                  "a scorer must judge every text, including malformed and budget-stopped ones")
        try:
            steps = tuple(bool(s) for s in got)
        except TypeError:
            return verdict(False, f"your scorer returned {got!r} for {completion!r}; return one True/False per "
                                  f"step, e.g. {list(expected.steps)}")
        if steps != expected.steps:
            wrong.append(f"{prompt} {completion!r}: you said {list(steps)}, process_score says "
                         f"{list(expected.steps)} ({expected.reason})")
    if wrong:
        listed = "\n  ".join(wrong[:SHOW])
        return verdict(False, f"your scorer differs from rewards.process_score on {len(wrong)} of {len(pairs)} "
                              f"distinct real rollouts, for example:\n  {listed}\nRemember: step 2 is judged "
                              "against the rollout's own first sum, and a step that is missing or not a plain "
                              "number is invalid.")
    return verdict(True, f"your scorer agrees with rewards.process_score on all {len(pairs)} distinct real "
                         f"rollouts ({len(prompts)} rollouts in all).")


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
            ("space after the comma", f"{s1}, {s2}{EOT}"),
            ("space before the end mark", f"{s1},{s2} {EOT}"),
            ("plus sign", f"{s1},+{s2}{EOT}"),
            ("a third number", f"{s1},{s2},{s2}{EOT}"),
            ("text after the end mark", f"{s1},{s2}{EOT}{s2}"),
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


def check_verifier(verify: Callable[[str, str], bool | None] | None, blind_spot: str | None) -> CheckResult:
    """Exercise 6: run the reader's outcome verifier on adversarial cases; check the named blind spot.

    The constrained output is ``s1,s2#``: two canonical numbers (ASCII
    digits, no sign, space or leading zero) separated by one comma, then the
    end mark and nothing after it; only the final number is judged. The
    reader's ``verify`` must accept exactly what :class:`rewards.ExactVerifier`
    accepts on the cases; the message lists what slips through (accepted but
    should not be) and what is wrongly refused. ``blind_spot`` must be a
    completion for :data:`BLIND_SPOT_PROMPT` that ``verify`` accepts although
    a step is wrong.
    """
    if verify is None:
        return not_answered("`my_verifier`")
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
        expected = exact(prompt, completion)
        if bool(got) and not expected.reward:
            slipped.append(f"{name}: {prompt} {completion!r} (should be {expected.status}: {expected.reason})")
        elif not got and expected.reward:
            refused.append(f"{name}: {prompt} {completion!r}")
        elif bool(got) and not rw.process_score(prompt, completion).score == 1.0:
            blind.append(completion)
    problems = []
    if slipped:
        problems.append(f"{len(slipped)} adversarial case(s) slip through, e.g.\n  " + "\n  ".join(slipped[:SHOW]))
    if refused:
        problems.append(f"{len(refused)} right answer(s) are refused, e.g.\n  " + "\n  ".join(refused[:SHOW]))
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
    accepted, error = _call(verify, BLIND_SPOT_PROMPT, blind_spot)
    process = rw.process_score(BLIND_SPOT_PROMPT, blind_spot)
    if error or not accepted:
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


def check_disagreement_pick(index: int | None, prompts: list[str], completions: list[str]) -> CheckResult:
    """Exercise 11: is rollout ``index`` of the listed real rollouts a case where the verdicts disagree?

    Disagreeing means one verdict passes the rollout and the other fails it:
    the outcome verifier accepts while a step is invalid, or every step is
    valid while the outcome verifier rejects.
    """
    if index is None:
        return not_answered("`my_pick`, the index of a rollout in the list")
    if not isinstance(index, int) or not 0 <= index < len(prompts):
        return verdict(False, f"{index!r} is not an index of the list: pick an int from 0 to {len(prompts) - 1}")
    j = judge([prompts[index]], [completions[index]])[0]
    said = (f"rollout {index} ({j.prompt} {j.completion!r}): the outcome verifier says {j.status} "
            f"(reward {j.reward:.0f}: {j.reason}); the process scorer says {j.process:.1f} ({j.process_reason})")
    if j.disagrees:
        return verdict(True, f"{said}. They disagree: {j.kind}.")
    hint = ("the process score gives partial credit, but both verdicts fail it" if j.process > 0 and not j.outcome_pass
            else "they agree")
    return verdict(False, f"{said}: {hint}. Look for a right final sum after a wrong first sum, or for right "
                          "sums with a broken ending.")
