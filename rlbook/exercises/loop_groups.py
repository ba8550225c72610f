"""Checkers of chapter 1's exercises on a group of answers (the RL loop): Exercises 1.2 and 1.3.

- :func:`check_advantages` (Exercise 1.2): advantages from rewards with a
  group-mean baseline, tested against :func:`rlbook.core.advantages.group_centered`;
  then :func:`check_pushes`, how many answers of ``main``'s first and last batches
  it gives a positive, a negative and a zero advantage.
- :func:`check_chance_of_a_right_answer` (Exercise 1.3): the chance that ``n``
  samples contain at least one right answer, tested against
  :func:`rlbook.core.stats.prob_any_success`; then :func:`check_below_half`,
  on how many held-out sums that chance is below one half for each group size.

Their reference solutions are in :mod:`rlbook.exercises.ch1`, which registers
each exercise and through which the page calls these checkers. Each checker
tests the reader's answer on fresh inputs, returns a
:class:`~rlbook.exercises.CheckResult` and never raises on a wrong answer.
"""

from __future__ import annotations

import math
import random
from typing import cast

import numpy as np

from rlbook.core.advantages import group_centered
from rlbook.core.stats import prob_any_success

from . import CheckResult, as_count, as_number, as_numbers, never_raises, not_a_function, not_answered, verdict


def _returns_none(fn, *args) -> bool:
    """True when the reader's function still returns None (the unfilled stub)."""
    try:
        return fn(*args) is None
    except Exception:  # noqa: BLE001 - a raising function is reported by the check itself
        return False


def _fresh_groups(seed: int) -> list[list[float]]:
    rng = random.Random(seed)
    groups = [[1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0], [0.0] * 8, [0.5]]
    for _ in range(20):
        size = rng.choice([2, 3, 4, 8, 16])
        values = [0.0, 1.0] if rng.random() < 0.6 else [0.0, 0.25, 0.5, 1.0, 2.0]
        groups.append([rng.choice(values) for _ in range(size)])
    return groups


# Mistakes a reader's advantages can make, each as what it returns for a group, and what to tell them.
ADVANTAGE_MISTAKES = (
    (lambda r: r, "these are the rewards themselves: subtract the baseline (the group's mean reward)"),
    (lambda r: r - np.median(r), "you subtracted the group's median; the baseline here is its mean reward"),
    (lambda r: r.mean() - r, "the sign is flipped: an advantage is the reward minus the baseline, not the reverse"),
    (
        lambda r: (r - r.mean()) / (r.std() or 1.0),
        "you divided by the standard deviation: the exercise asks for the mean baseline only",
    ),
)


def _advantage_hint(answers: list[tuple[list[float], list[float], list[float]]]) -> str:
    """Which of :data:`ADVANTAGE_MISTAKES` explains every group's answer; judged on all groups at once, since on
    one group two mistakes can agree (a 0/1 group whose median is 0 gives its rewards back)."""
    for mistake, hint in ADVANTAGE_MISTAKES:
        if all(np.allclose(got, mistake(np.array(rewards)), atol=1e-6) for rewards, got, _ in answers):
            return hint
    return "subtract the group's mean reward from each reward"


@never_raises
def check_advantages(fn, seed: int = 0) -> CheckResult:
    """Exercise 1.2: ``fn(rewards) -> advantages`` for one group, against a group-mean baseline."""
    if fn is None or (callable(fn) and _returns_none(fn, [1.0, 0.0])):
        return not_answered("the function `advantages_from_rewards`")
    if not callable(fn):
        return not_a_function("advantages_from_rewards", fn)
    answers, problem = [], None
    for rewards in _fresh_groups(seed):
        expected = group_centered(rewards).tolist()
        try:
            returned = fn(list(rewards))
        except Exception as err:  # noqa: BLE001 - report any failure of the reader's code
            problem = f"calling it on {rewards} raised {type(err).__name__}: {err}"
            break
        got = as_numbers(returned)
        if got is None:
            problem = (
                f"for {rewards} it returned {returned!r:.80}; return a list of numbers (floats, not strings), "
                "one advantage per reward"
            )
            break
        if len(got) != len(expected):
            problem = f"for {rewards} it returned {len(got)} numbers; give one advantage per reward"
            break
        answers.append((rewards, got, expected))
    wrong = [(r, g, e) for r, g, e in answers if not np.allclose(g, e, atol=1e-6)]
    if wrong:  # a wrong value on an earlier group says more than a crash on a later one
        rewards, got, expected = wrong[0]
        return verdict(
            False,
            f"for rewards {rewards} expected {np.round(expected, 4).tolist()}, "
            f"got {np.round(got, 4).tolist()}: {_advantage_hint(answers)}",
        )
    if problem:
        return verdict(False, problem)
    return verdict(
        True,
        f"matches group_centered on {len(_fresh_groups(seed))} groups, "
        "including all-equal groups whose advantages are all 0",
    )


PUSHES = ("pushed up", "pushed down", "left alone")
"""What Exercise 1.2's second part counts in a batch: answers with a positive, a negative and a zero advantage."""


def _reward_rows(rewards) -> np.ndarray | None:
    """A batch of rewards as a (groups, G) array of finite numbers, or None when it is not one."""
    try:
        batch = np.array([[float(r) for r in row] for row in rewards], dtype=float)
    except (TypeError, ValueError):
        return None
    ok = batch.ndim == 2 and batch.shape[0] > 0 and batch.shape[1] > 1 and np.isfinite(batch).all()
    return batch if ok else None


def _pushes(rewards: np.ndarray) -> tuple[int, int, int]:
    """How many answers of ``rewards`` have a positive, a negative and a zero group-centred advantage."""
    advantages = rewards - rewards.mean(axis=1, keepdims=True)
    up, down = int((advantages > 1e-9).sum()), int((advantages < -1e-9).sum())
    return up, down, advantages.size - up - down


def _pushes_problem(got, rewards: np.ndarray, other: np.ndarray) -> str | None:
    """What is wrong with the reader's three counts for the batch ``rewards``, or None when they are right."""
    values = as_numbers(got)
    if values is None or len(values) != 3:
        return f"give three counts, ({', '.join(PUSHES)}); got {got!r:.60}"
    want, total = _pushes(rewards), rewards.size
    read = [as_count(v) for v in values]
    if None in read:
        if all(0 <= v <= 1 for v in values) and math.isclose(sum(values), 1, abs_tol=1e-3):
            return f"those are shares; give counts of answers, out of the batch's {total}"
        return f"give whole numbers, counts of answers; got {values}"
    counts = cast(list[int], read)  # no None: refused above
    if tuple(counts) == want:
        return None
    if tuple(counts) == _pushes(other):
        return "those are the other batch's counts: 'first' is F.rewards_first, 'last' F.rewards_last"
    groups, size = rewards.shape
    uniform = int((rewards.max(axis=1) == rewards.min(axis=1)).sum())
    above = int((rewards > rewards.mean()).sum())
    if tuple(counts) == (above, total - above, 0):
        return (
            "those are the right and the wrong answers (the answers above and below the batch's mean reward): "
            "the baseline is each answer's own group's mean, so every answer of a group whose rewards are all "
            "equal has advantage 0"
        )
    if tuple(counts) == (want[1], want[0], want[2]):
        return "pushed up and pushed down are the other way round: a positive advantage pushes an answer up"
    if tuple(counts) == (want[0], want[1], uniform):
        return (
            f"'left alone' counts answers, not groups: each of the {uniform} groups whose rewards are all equal "
            f"has {size} answers"
        )
    if sorted(counts) == sorted(want):
        return f"the counts are right but in another order: give ({', '.join(PUSHES)})"
    if sum(counts) != total:
        return (
            f"the three counts add up to {sum(counts)}, but the batch has {total} answers ({groups} groups of "
            f"{size}): every answer is pushed up, pushed down or left alone"
        )
    wrong = [name for name, c, w in zip(PUSHES, counts, want, strict=True) if c != w]
    return (
        f"{' and '.join(wrong)} {'differs' if len(wrong) == 1 else 'differ'}: apply advantages_from_rewards to "
        "each group (each row) and count the advantages above 0, below 0 and equal to 0"
    )


@never_raises
def check_pushes(answer, first=None, last=None) -> CheckResult:
    """Exercise 1.2, second part: how many answers of a real batch the update pushes up, pushes down, leaves alone.

    ``answer`` maps ``"first"`` and ``"last"`` to three counts, (answers with
    a positive advantage, with a negative one, with advantage 0), for
    ``first`` and ``last``, the rewards of ``main``'s first and last
    training batches (one row per prompt's group).
    """
    if answer is None or (isinstance(answer, dict) and all(answer.get(k) is None for k in ("first", "last"))):
        return not_answered("`pushes`, a dict with three counts for 'first' and for 'last'")
    if not isinstance(answer, dict):
        return verdict(False, "`pushes` must be a dict with the keys 'first' and 'last', each three counts")
    first_batch = _reward_rows(first) if first is not None else None
    last_batch = _reward_rows(last) if last is not None else None
    if first_batch is None or last_batch is None:
        return verdict(False, "give the chapter's batches of rewards (F.rewards_first, F.rewards_last) after `pushes`")
    for name, rewards, other in (("first", first_batch, last_batch), ("last", last_batch, first_batch)):
        if answer.get(name) is None:
            return verdict(False, f"'{name}' is still empty: give the {name} batch's ({', '.join(PUSHES)})")
        problem = _pushes_problem(answer[name], rewards, other)
        if problem:
            return verdict(False, f"{name} batch: {problem}")
    (u0, d0, z0), (u1, d1, z1) = _pushes(first_batch), _pushes(last_batch)
    right0, right1 = (int((b >= 1).sum()) for b in (first_batch, last_batch))
    size = first_batch.shape[1]
    return verdict(
        True,
        f"main's first batch: {u0} answers pushed up, {d0} pushed down, {z0} left alone ({z0 // size} groups "
        f"whose {size} answers all earned the same reward); its last: {u1} up, {d1} down, {z1} left alone "
        f"({z1 // size} groups). Of the last batch's {right1} right answers (reward 1), {u1} were pushed up "
        f"(first batch: {u0} of {right0}): a right answer is pushed up only where another answer of its "
        "group was wrong",
    )


CHANCE_MISTAKES = (
    (lambda p, n: (1 - p) ** n, "that is the chance that every sample is wrong; you want its complement"),
    (lambda p, n: p**n, "that is the chance that every sample is right; 'at least one' is 1 minus 'none'"),
    (lambda p, n: 1 - (1 - p) ** (n - 1), "that counts n - 1 samples: every one of the n samples may be right"),
    (
        lambda p, n: 1 - (1 - p) ** n - p**n,
        "that is the chance of a mixed group (some right, some wrong); a group of right answers only counts too",
    ),
    (lambda p, n: 1 - (1 - p) ** (n + 1), "that counts n + 1 samples; there are n"),
    (lambda p, n: 1 - p**n, "that is 1 minus the chance that all are right; take 1 minus the chance that none is"),
)
"""Formulas students write instead of 1 - (1 - p)^n, each with what it computes (Exercise 1.3's messages)."""


def _chance_cases(seed: int) -> list[tuple[float, int]]:
    rng = random.Random(seed)
    cases = [(0.0, 32), (1.0, 1), (0.5, 1), (0.1, 16), (0.02, 32), (0.3, 2)]
    return cases + [(round(rng.uniform(0.01, 0.99), 3), rng.choice([2, 3, 4, 8, 16, 32, 64])) for _ in range(20)]


def _diagnose_chance(got: list[float], cases: list[tuple[float, int]]) -> str:
    """The mistake whose formula gives every value the reader's function gave, else a general hint."""
    if any(not 0 <= g <= 1 for g in got):
        return "a probability lies between 0 and 1 (adding up p once per sample, for one, can exceed 1)"
    for formula, hint in CHANCE_MISTAKES:
        if np.allclose(got, [formula(p, n) for p, n in cases], atol=1e-9, rtol=1e-6):
            return hint
    return "compute the chance that no sample is right, then take 1 minus it"


@never_raises
def check_chance_of_a_right_answer(fn, seed: int = 0) -> CheckResult:
    """Exercise 1.3: ``fn(p, n)`` = probability that ``n`` samples of success rate ``p`` contain a right one.

    Tested on scalar rates and on a NumPy array of rates (the exercise applies
    it to every prompt's rate at once), against :func:`prob_any_success`.
    """
    if fn is None or (callable(fn) and _returns_none(fn, 0.5, 1)):
        return not_answered("the function `chance_of_a_right_answer`")
    if not callable(fn):
        return not_a_function("chance_of_a_right_answer", fn)
    cases = _chance_cases(seed)
    got = []
    for p, n in cases:
        try:
            value = fn(p, n)
        except Exception as err:  # noqa: BLE001 - report any failure of the reader's code
            return verdict(False, f"calling it with p={p}, n={n} raised {type(err).__name__}: {err}")
        number = as_number(value)
        if number is None:
            return verdict(False, f"for p={p}, n={n} it returned {value!r:.60}; return a number (a float)")
        got.append(number)
    expected = cast(list[float], [prob_any_success(p, n) for p, n in cases])  # a float p gives a float
    if not np.allclose(got, expected, atol=1e-9, rtol=1e-6):
        i = next(i for i, (g, e) in enumerate(zip(got, expected)) if not math.isclose(g, e, abs_tol=1e-9, rel_tol=1e-6))
        return verdict(
            False,
            f"for p={cases[i][0]}, n={cases[i][1]} expected {expected[i]:.6f}, got {got[i]:.6f}: "
            f"{_diagnose_chance(got, cases)}",
        )
    rates = np.array([p for p, _ in cases[:8]])
    try:
        values = fn(rates, 16)
        array = np.asarray(values, dtype=float) if not isinstance(values, str) else None
    except Exception as err:  # noqa: BLE001 - report any failure of the reader's code
        return verdict(
            False,
            f"it works for one p, but calling it with a NumPy array of {len(rates)} rates raised "
            f"{type(err).__name__}: {err}; use operations that work elementwise (**, not math.pow)",
        )
    if array is None or array.shape != rates.shape or not np.allclose(array, prob_any_success(rates, 16)):
        return verdict(
            False,
            f"it works for one p, but given an array of {len(rates)} rates it must return one "
            "chance per rate, elementwise",
        )
    return verdict(
        True,
        f"matches 1 - (1 - p)^n on {len(cases)} cases, including p = 0 (never) and p = 1 (always), "
        "and on an array of rates",
    )


def _rates(per_prompt) -> np.ndarray | None:
    """The held-out sums' rates as an array, or None when ``per_prompt`` is not a non-empty list of rates in [0, 1]."""
    rates = as_numbers(per_prompt)
    if not rates or not all(0.0 <= r <= 1.0 for r in rates):
        return None
    return np.array(rates)


def _size(value) -> int | None:
    """A group size written as ``16``, ``16.0`` or ``"16"``; None for anything that is not a positive whole number."""
    if isinstance(value, str):
        text = value.strip()
        value = int(text) if text.isascii() and text.isdigit() else None
    size = as_count(value)
    return size if size is not None and size > 0 else None


def _below_half_counts(answer, sizes: list[int]) -> dict[int, int] | str:
    """The reader's count for each group size, from a dict keyed by size or a pair in the question's order; else
    what is wrong with the answer."""
    wanted = " and ".join(map(str, sizes))
    if isinstance(answer, dict):
        keyed = {_size(k): v for k, v in answer.items()}
        missing = [n for n in sizes if n not in keyed]
        if missing:
            return f"`below_half` needs one count per group size, keyed {wanted}; it has no key {missing[0]}"
        values = [keyed[n] for n in sizes]
    elif isinstance(answer, (list, tuple)) and len(answer) == len(sizes):
        values = list(answer)
    else:
        example = f"{{{sizes[0]}: a count, ...}}"
        return f"`below_half` must be a dict with one count per group size, keyed {wanted}: {example}"
    if any(v is None for v in values):
        return "no answer yet: fill in the count for every group size in `below_half` and run the cell again"
    counts = [as_count(v) for v in values]
    if any(c is None for c in counts):
        shown = ", ".join(f"{v!r:.20}" for v in values)
        share = any((x := as_number(v)) is not None and 0 < x < 1 for v in values)
        return f"each count must be a whole number of sums{' (a count, not a share)' if share else ''}, got {shown}"
    return dict(zip(sizes, cast(list[int], counts)))


def _below_half_hints(got: int, n: int, rates: np.ndarray, sizes: list[int]) -> list[str]:
    """Every mistake that gives ``got`` as the count for groups of ``n``, as what to tell the reader."""
    chance = 1 - (1 - rates) ** n
    hints = []
    if got == int((chance > 0.5).sum()):
        hints.append("counting the sums whose chance is above one half, not below")
    if got == int((rates < 0.5).sum()):
        hints.append("counting the sums whose own rate p is below one half, before turning p into a group's chance")
    others = [m for m in sizes if m != n and got == int((1 - (1 - rates) ** m < 0.5).sum())]
    if others:
        hints.append(f"using groups of {others[0]} instead of {n}")
    return hints


@never_raises
def check_below_half(answer, per_prompt, *sizes) -> CheckResult:
    """Exercise 1.3, second question: for each group size in ``sizes``, on how many held-out sums does a group
    hold a right answer with probability below one half?

    ``per_prompt`` is the base policy's share of right answers on each held-out
    sum (the chapter's ``S.per_prompt``); the expected counts are
    :func:`rlbook.core.stats.prob_any_success` below 0.5 on it. ``answer`` is a
    dict from each size to its count (keys may be ``16`` or ``"16"``), or the
    counts in the order of ``sizes``. A wrong count is told which mistake gives
    it: counting above one half, counting the sums whose own rate is below one
    half, or using the other group size.
    """
    if answer is None or (isinstance(answer, dict) and all(v is None for v in answer.values())):
        return not_answered("`below_half` (one count per group size)")
    rates = _rates(per_prompt)
    read_sizes = [_size(n) for n in sizes]
    if rates is None or not read_sizes or None in read_sizes:
        return verdict(
            False,
            "give the check the chapter's rates and group sizes: "
            "ch1.check_below_half(below_half, S.per_prompt, F.group, F.samples)",
        )
    group_sizes = cast(list[int], read_sizes)  # no None: refused above
    counts = _below_half_counts(answer, group_sizes)
    if isinstance(counts, str):
        return verdict(False, counts)
    expected = {n: int(np.sum(prob_any_success(rates, n) < 0.5)) for n in group_sizes}
    wrong = [n for n in group_sizes if counts[n] != expected[n]]
    if not wrong:
        listed = "; ".join(f"groups of {n}: {expected[n]} of {len(rates)} sums" for n in group_sizes)
        return verdict(
            True,
            f"{listed}. On those sums a group more often than not holds no right answer, and a group "
            "whose rewards are all 0 carries no signal to learn from",
        )
    problems = []
    for n in wrong:
        got = counts[n]
        if got < 0 or got > len(rates):
            problems.append(f"for groups of {n}, {got} is not a count of the {len(rates)} held-out sums")
            continue
        hints = _below_half_hints(got, n, rates, group_sizes)
        why = f"; it is what you get by {' or by '.join(hints)}" if hints else ""
        problems.append(f"for groups of {n}, {got} is not right{why}")
    return verdict(
        False,
        "; ".join(problems) + ". Compute chance_of_a_right_answer(S.per_prompt, n) for each group size n and "
        "count the sums whose chance is below 0.5",
    )
