"""Checkers for chapter 7's exercises (written working), each registered with its reference solution.

- :func:`check_outcome_reward` (Exercise 7.1): an outcome-only reward for
  the worked world, compared with the book's exact verifier on worked and
  direct answers, right and wrong, finished and cut off; then applied to
  the answers the chapter shows.
- :func:`check_gain_split` (Exercise 7.2): the chapter's split of a change
  in accuracy into the switch of style and execution, taken the other way
  round (each part weighted at the other end of RL); then applied to the
  ``worked`` runs of every seed beside the chapter's split, to compare with
  the reader's prediction of which part is larger.

Each checker returns a :class:`~rlbook.exercises.CheckResult` and never
raises on a wrong answer.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable, Mapping, Sequence
from typing import cast

from rlbook.core import rewards, world
from rlbook.core.world import EOT, SEPARATOR, WorkedTask

from . import CheckResult, as_number, as_numbers, named_by, never_raises, not_a_function, not_answered, verdict
from .registry import Exercise, Mistake, register

# ------------------------------------------------------------------ exercise 7.1: an outcome-only reward


def _variants(task: WorkedTask, rng: random.Random) -> list[tuple[str, str]]:
    """Answers to ``task`` that a policy might write, each with the kind of mistake it tests."""
    right, working = str(task.answer), task.working
    wrong = str(task.answer + rng.choice((-10, -1, 1, 10)))
    bad_working = working.replace("=", "=1", 1)  # a wrong first column, the final number still right
    return [
        (f"{right}{EOT}", "direct"),
        (f"{working}{SEPARATOR}{right}{EOT}", "worked"),
        (f"{bad_working}{SEPARATOR}{right}{EOT}", "wrong working"),
        (f"{working}{SEPARATOR}{wrong}{EOT}", "wrong final"),
        (f"{wrong}{EOT}", "wrong direct"),
        (f"{working}{SEPARATOR}{right}", "no end mark"),
        (f"{right}", "no end mark"),
        (f"{working}{EOT}", "no final number"),
        (f"{right}{EOT}{right}", "after the end mark"),
        (f"0{right}{EOT}", "leading zero"),
        (f" {right}{EOT}", "stray character"),
        (f"{rng.choice('+=')}{right}{EOT}", "stray character"),
        (f"{working.rpartition('=')[0]}={right}{EOT}", "no separator"),
        (f"{working.replace(',', SEPARATOR)}{SEPARATOR}{right}{EOT}", "several separators"),
    ]


def _reward_cases(seed: int, count: int = 12) -> list[tuple[str, str, str, float]]:
    """(prompt, completion, kind, reward) on randomly drawn held-out sums, rewarded by the book's verifier."""
    verify = rewards.get_verifier("exact")
    tasks = random.Random(seed).sample(cast(list[WorkedTask], world.split("heldout", "worked")), count)
    rng = random.Random(seed + 1)
    return [(t.prompt, text, kind, verify(t.prompt, text).reward) for t in tasks for text, kind in _variants(t, rng)]


def _reward_of(value) -> float | None:
    """A reward as a number: a float, an int or a bool (True pays 1); None for anything else, text included."""
    if isinstance(value, bool):
        return float(value)
    number = as_number(value)
    return number if number is not None and math.isfinite(number) else None


DIAGNOSES = {
    "wrong working": "it refused an answer whose working is wrong but whose final number is right: the reward is "
    "outcome-only, so read only the number after the last ';' and never check the columns",
    "worked": "it refused a right worked answer: the answer is the number after the last ';', not the first number",
    "no end mark": "it paid an answer that never wrote the end mark '#': the budget stopped it, so it earns 0",
    "after the end mark": "it paid an answer with text after the end mark: that answer is malformed",
    "no final number": "it paid an answer that never wrote a final number",
    "leading zero": "it paid a final number with a leading zero: the book's verifier (version 1.0) reads digits "
    "with no leading zero",
    "stray character": "it paid an answer with a character before its final number: the final number is the whole "
    "text after the last ';' (or the whole answer), digits only, so ' 85#', '+85#' and '=85#' earn 0",
    "no separator": "it paid working with no ';' whose last number is the sum: without a ';' the whole answer must be "
    "the number, so searching the text for the last number pays answers the verifier calls malformed",
    "several separators": "it refused a right answer whose working holds more than one ';': the answer is the "
    "number after the last ';', not the first",
}


@never_raises
def check_outcome_reward(fn: Callable | None, shown: Mapping | None = None, seed: int = 0) -> CheckResult:
    """Exercise 7.1: ``fn(prompt, completion) -> 1.0 or 0.0``, the worked world's outcome-only reward.

    Compared with the exact verifier on fourteen kinds of answer to held-out sums
    drawn with ``seed``; the likeliest mistake (checking the working, reading
    the first number, paying an unfinished answer) is named. A passing
    reward is then applied to ``shown``, the answers chapter 7 shows before
    and after RL (its facts' ``samples``), when given.
    """
    if fn is None:
        return not_answered("`reward`")
    if not callable(fn):
        return not_a_function("reward", fn)
    wrong_kinds = []
    for prompt, text, kind, want in _reward_cases(seed):
        try:
            returned = fn(prompt, text)
        except Exception as err:  # noqa: BLE001 - report the reader's error, never raise it
            return verdict(False, f"`reward({prompt!r}, {text!r})` raised {type(err).__name__}: {err}")
        if returned is None:
            return not_answered("`reward`")
        got = _reward_of(returned)
        if got is None:
            return verdict(
                False, f"`reward({prompt!r}, {text!r})` returned {returned!r:.40}; return a number, 1.0 or 0.0"
            )
        if got != want:
            wrong_kinds.append((kind, prompt, text, got, want))
    if wrong_kinds:
        kind, prompt, text, got, want = wrong_kinds[0]
        why = DIAGNOSES.get(kind, "compare it with the rules of the exercise")
        return verdict(False, f"`reward({prompt!r}, {text!r})` gave {got:g}, the verifier {want:g}: {why}")
    tail = "" if shown is None else _paid(fn, shown)
    return verdict(True, f"your reward agrees with the verifier on {len(_reward_cases(seed))} answers{tail}")


def _paid(fn: Callable, shown: Mapping) -> str:
    """How many of the shown answers, before and after RL, ``fn`` pays."""
    counts = []
    for when in ("before", "after"):
        answers = shown[when]
        paid = sum(a["count"] for a in answers if _reward_of(fn(shown["prompt"], a["text"])) == 1.0)
        counts.append(f"{paid} of {sum(a['count'] for a in answers)} {when} RL")
    return f"; on {shown['prompt']} it pays {counts[0]} and {counts[1]}"


def reward(prompt, completion):
    """Exercise 7.1's reference: read the sum from the prompt and only the final number from the answer."""
    a, b = (int(x) for x in prompt.strip("#=").split("+"))
    answer, mark, after = completion.partition("#")
    if not mark or after:
        return 0.0  # cut off by the budget, or text after the end mark
    final = answer.rpartition(";")[2]  # the working before the last ';' is never read
    if not final.isdigit() or (final.startswith("0") and final != "0"):
        return 0.0
    return 1.0 if int(final) == a + b else 0.0


# ------------------------------------------------------------------ exercise 7.2: the split taken the other way

STYLES = ("worked", "direct")
"""The two styles of the worked world, in the order a split sums over them."""


def _shares(p: Mapping) -> dict[str, float]:
    """Each style's share of answers, from a reader's dict (its ``share`` is the share of worked answers)."""
    return {"worked": p["share"], "direct": 1 - p["share"]}


def _split(before: Mapping, after: Mapping, switch_at: str, execution_at: str) -> tuple[float, float]:
    """(switch, execution) with the change in shares weighted by the accuracies ``switch_at`` ("before" or
    "after" RL) and the change in accuracies by the shares ``execution_at``."""
    point = {"before": before, "after": after}
    shares = {"before": _shares(before), "after": _shares(after)}
    switch = sum((shares["after"][s] - shares["before"][s]) * point[switch_at][s] for s in STYLES)
    execution = sum(shares[execution_at][s] * (after[s] - before[s]) for s in STYLES)
    return switch, execution


def _other_way(before: Mapping, after: Mapping) -> tuple[float, float]:
    """Exercise 7.2's split: the change in shares at the accuracies after RL, the change in accuracies at the
    shares before."""
    return _split(before, after, "after", "before")


def _chapters_way(before: Mapping, after: Mapping) -> tuple[float, float]:
    """The split of the chapter's table: the change in shares at the accuracies before RL, the change in accuracies
    at the shares after (:func:`rlbook.analysis.working.gain_split`)."""
    return _split(before, after, "before", "after")


def _reader(share: float, worked: float, direct: float) -> dict:
    """A before or after as the reader's function is handed it."""
    return {"share": share, "worked": worked, "direct": direct}


def _split_cases(seed: int, count: int = 30) -> list[tuple[dict, dict]]:
    """(before, after) pairs in which both styles are written before and after RL (so each style's accuracy after
    RL is known), the first three worked by hand."""
    rng = random.Random(seed)
    cases = [
        (_reader(0.5, 0.7, 0.4), _reader(0.9, 0.9, 0.3)),
        (_reader(0.2, 0.6, 0.5), _reader(0.2, 0.8, 0.5)),
        (_reader(0.6, 0.8, 0.3), _reader(0.9, 0.8, 0.3)),
    ]
    for _ in range(count):
        shares = [round(rng.uniform(0.05, 0.95), 3) for _ in range(2)]
        cases.append(tuple(_reader(s, rng.random(), rng.random()) for s in shares))  # type: ignore[arg-type]
    return cases


def _matches(got: list[tuple[float, float]], want: list[tuple[float, float]]) -> bool:
    return all(math.isclose(g, w, abs_tol=1e-9) for pair, pairs in zip(got, want) for g, w in zip(pair, pairs))


SPLIT_SLIPS = (
    (lambda b, a: _other_way(b, a)[::-1], "the two parts are swapped: return (switch, execution)"),
    (
        _chapters_way,
        (
            "that is the chapter's split, the one in its table: take it the other way, the change in shares "
            "at the accuracies after RL and the change in accuracies at the shares before"
        ),
    ),
    (
        lambda b, a: _chapters_way(b, a)[::-1],
        (
            "that is the chapter's split with its parts swapped: return (switch, execution), the change in shares at "
            "the accuracies after RL and the change in accuracies at the shares before"
        ),
    ),
    (
        lambda b, a: _split(b, a, "after", "after"),
        (
            "both your parts are weighted after RL, so the term in which share and accuracy both changed, "
            "(s' - s)(a' - a), is counted twice and the parts do not add up to the change: weigh the change in "
            "accuracies by the shares before RL"
        ),
    ),
    (
        lambda b, a: _split(b, a, "before", "before"),
        (
            "both your parts are weighted before RL, so the term in which share and accuracy both changed, "
            "(s' - s)(a' - a), is left out and the parts do not add up to the change: weigh the change in shares by "
            "the accuracies after RL"
        ),
    ),
)
"""Splits a reader may return instead of Exercise 7.2's, each with what the check says about it."""


def _split_problem(cases: list[tuple[dict, dict]], got: list[tuple[float, float]]) -> str | None:
    """None when every split matches Exercise 7.2's; else the likeliest mistake, named."""
    if _matches(got, [_other_way(b, a) for b, a in cases]):
        return None
    for wrong, message in SPLIT_SLIPS:
        if _matches(got, [wrong(b, a) for b, a in cases]):
            return message
    totals = [_other_way(b, a) for b, a in cases]
    for (b, a), g, w in zip(cases, got, totals):
        if not math.isclose(g[0] + g[1], w[0] + w[1], abs_tol=1e-9):
            return (
                f"for before {b} and after {a} your parts add up to a change of {g[0] + g[1]:+.4f}, not "
                f"{w[0] + w[1]:+.4f}: the two parts must add up to the change in accuracy"
            )
    return (
        "your parts add up to the change, but split it another way: weigh the change in shares by the "
        "accuracies after RL, and the change in accuracies by the shares before"
    )


def _larger(parts: tuple[float, float]) -> str:
    """Which part of a split carries more of the change: "the switch", "execution" or "neither" (equal)."""
    switch, execution = parts
    return "the switch" if switch > execution else "execution" if execution > switch else "neither"


def _on_the_runs(fn: Callable, real: Sequence, seeds: Sequence | None, predicted) -> str:
    """What ``fn`` gives on ``worked``'s runs, seed by seed, beside the chapter's split; which part is larger in
    each; and how that compares with the reader's prediction."""
    real = [(dict(b), dict(a)) for b, a in real]
    by_seed = seeds is not None and len(seeds) == len(real)
    noun = "seed" if by_seed else "run"
    labels = [f"seed {s}" for s in seeds or ()] if by_seed else [f"run {i + 1}" for i in range(len(real))]
    # a split that passed the cases returns two numbers
    theirs = [cast(list[float], as_numbers(fn(dict(b), dict(a)))) for b, a in real]
    table = [_chapters_way(b, a) for b, a in real]
    lines = [
        f"{label}: switch {p[0]:+.2f}, execution {p[1]:+.2f} (the table's: {t[0]:+.2f} and {t[1]:+.2f})"
        for label, p, t in zip(labels, theirs, table)
    ]
    where = {way: [_larger((p[0], p[1])) for p in parts] for way, parts in (("yours", theirs), ("table", table))}
    said = []
    for way, text in (("yours", "Taken your way"), ("table", "taken the table's way")):
        larger = sorted(set(where[way]))
        if len(larger) == 1:
            said.append(f"{text}, {larger[0]} is the larger part on every {noun}")
        else:
            said.append(
                f"{text}, the larger part is "
                + ", ".join(f"{part} on {label}" for part, label in zip(where[way], labels))
            )
    guess = ""
    if predicted is not None:
        named = {"switch": "the switch", "execution": "execution"}[str(predicted).strip().lower()]
        right = [label for label, part in zip(labels, where["yours"]) if part == named]
        guess = (
            f". You predicted {named}; taken your way, it is the larger part on {len(right)} of the {len(labels)} {noun}s"
            + (f" ({', '.join(right)})" if 0 < len(right) < len(labels) else "")
        )
    return "; ".join(lines) + ". " + "; ".join(said) + guess


@never_raises
def check_gain_split(
    fn: Callable | None, real: Sequence | None = None, seeds: Sequence | None = None, seed: int = 0, predicted=None
) -> CheckResult:
    """Exercise 7.2: ``fn(before, after) -> (switch, execution)``, the chapter's split of a change in accuracy
    taken the other way round.

    ``before`` and ``after`` are dicts with ``share`` (of worked answers) and
    each style's accuracy, ``worked`` and ``direct``. The switch is the
    change in shares weighted by the accuracies after RL, execution the
    change in accuracies weighted by the shares before. Compared on cases
    drawn with ``seed``; swapped parts, the chapter's own order and parts
    weighted at the same point (so that they miss, or count twice, the term
    where both changed) are named. A passing split is then applied to
    ``real``, the (before, after) dicts of ``worked`` on each of ``seeds``,
    beside the chapter's split, and the larger part of each is compared with
    ``predicted`` ("switch" or "execution"; None: no prediction).
    """
    if fn is None:
        return not_answered("`split_other_way`")
    if not callable(fn):
        return not_a_function("split_other_way", fn)
    if predicted is not None and str(predicted).strip().lower() not in ("switch", "execution"):
        return verdict(False, f"`larger` is {predicted!r:.40}: predict 'switch' or 'execution'")
    cases = _split_cases(seed)
    got = []
    for before, after in cases:
        try:
            returned = fn(dict(before), dict(after))
        except Exception as err:  # noqa: BLE001 - report the reader's error, never raise it
            return verdict(False, f"`split_other_way` raised {type(err).__name__} for before {before}: {err}")
        if returned is None:
            return not_answered("`split_other_way`")
        pair = as_numbers(returned)
        if pair is None or len(pair) != 2 or not all(math.isfinite(x) for x in pair):
            return verdict(
                False, f"`split_other_way` returned {returned!r:.60}; return two numbers, (switch, execution)"
            )
        got.append((pair[0], pair[1]))
    problem = _split_problem(cases, got)
    if problem:
        return verdict(False, problem)
    tail = f". On worked: {_on_the_runs(fn, real, seeds, predicted)}" if real else ""
    return verdict(True, f"your split matches on {len(cases)} cases{tail}")


def split_other_way(before, after):
    """Exercise 7.2's reference: shares change at the accuracies after RL, accuracies at the shares before."""
    shares_before = {"worked": before["share"], "direct": 1 - before["share"]}
    shares_after = {"worked": after["share"], "direct": 1 - after["share"]}
    switch = execution = 0.0
    for style in ("worked", "direct"):
        switch += (shares_after[style] - shares_before[style]) * after[style]
        execution += shares_before[style] * (after[style] - before[style])
    return switch, execution


def _gain_inputs(seeds: tuple[int, ...]) -> tuple:
    """Exercise 7.2's inputs with chapter 7's facts on ``seeds``: ``worked``'s (before, after) dicts and the seeds."""
    from rlbook import book

    facts = book.load("working", seeds, check=False)
    return facts.exercise.split, facts.seeds


def _shown_samples(seeds: tuple[int, ...]):
    """The answers chapter 7 shows with its facts on ``seeds``, before and after RL."""
    from rlbook import book

    return book.load("working", seeds, check=False).samples


def _operands(prompt: str) -> tuple[int, int]:
    """The two numbers of a worked-world prompt such as ``#47+38=``."""
    a, b = (int(x) for x in prompt.strip("#=").split("+"))
    return a, b


def _last_number_anywhere(prompt, completion):
    """Exercise 7.1 paying a finished answer whose last run of digits is the sum, wherever it stands."""
    numbers = re.findall(r"[0-9]+", completion)
    return float(completion.endswith(EOT) and bool(numbers) and numbers[-1] == str(sum(_operands(prompt))))


def _after_the_first_separator(prompt, completion):
    """Exercise 7.1 reading the number after the first ';' instead of the last."""
    answer, mark, after = completion.partition(EOT)
    final = answer.split(SEPARATOR)[1] if SEPARATOR in answer else answer
    right = final.isdigit() and not final.startswith("0") and int(final) == sum(_operands(prompt))
    return float(bool(mark) and not after and right)


def _checks_the_working(prompt, completion):
    """Exercise 7.1 refusing an answer whose working differs from the right working, its final number aside."""
    working = completion.split(SEPARATOR)[0]
    if SEPARATOR in completion and working != WorkedTask(_operands(prompt)).working:
        return 0.0
    return reward(prompt, completion)


MISTAKES: dict[str, tuple[Mistake, ...]] = {
    "outcome-reward": (
        Mistake(_last_number_anywhere, named_by(DIAGNOSES["stray character"])),
        Mistake(_after_the_first_separator, named_by(DIAGNOSES["several separators"])),
        Mistake(_checks_the_working, named_by(DIAGNOSES["wrong working"])),
        Mistake(
            lambda prompt, completion: reward(prompt, completion.rstrip(EOT) + EOT), named_by(DIAGNOSES["no end mark"])
        ),
    ),
    "gain-split": tuple(Mistake(SPLIT_SLIPS[i][0], named_by(SPLIT_SLIPS[i][1])) for i in (0, 1, 3, 4)),
}
"""Chapter 7's named mistakes, by exercise: each a plausible wrong answer and the words its checker names it with
(from its checker's tables, :data:`DIAGNOSES` and :data:`SPLIT_SLIPS`)."""

register(
    Exercise(
        "outcome-reward",
        "working",
        check_outcome_reward,
        reward,
        inputs=lambda seeds: (_shown_samples(seeds),),
        mistakes=MISTAKES["outcome-reward"],
    )
)
register(
    Exercise(
        "gain-split", "working", check_gain_split, split_other_way, inputs=_gain_inputs, mistakes=MISTAKES["gain-split"]
    )
)
