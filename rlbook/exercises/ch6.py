"""Checkers for chapter 6's exercises (exploration and rollouts), each registered with its reference solution.

- :func:`check_pass_at_k` (Exercise 6.1): the unbiased estimate of pass@k
  from ``c`` right answers among ``n`` samples, tested against
  :func:`rlbook.core.stats.pass_at_k` on fresh cases, then applied to the
  real samples of ``base`` and ``main`` on the held-out sums to compare them
  at equal budgets.

Each checker returns a :class:`~rlbook.exercises.CheckResult` and never
raises on a wrong answer.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable

import numpy as np

from rlbook.core.stats import pass_at_k as exact_pass_at_k

from . import CheckResult, apart, as_number, never_raises, not_a_function, not_answered, verdict
from .registry import Exercise, Mistake, register


def _cases(seed: int) -> list[tuple[int, int, int]]:
    """(n, c, k) cases: the edges (no right answer, fewer than k wrong ones, k = 1, k = n) and random ones."""
    rng = random.Random(seed)
    cases = [(10, 0, 3), (10, 9, 2), (10, 10, 10), (8, 3, 1), (256, 1, 256), (256, 40, 16), (5, 2, 5)]
    for _ in range(40):
        n = rng.randint(1, 300)
        cases.append((n, rng.randint(0, n), rng.randint(1, n)))
    return cases


def _diagnose(fn: Callable, cases: list[tuple[int, int, int]], got: list[float]) -> str:
    """The likeliest mistake behind wrong estimates: the plug-in formula, pass@1 for every k, or a plain miss."""
    want = [exact_pass_at_k(*case) for case in cases]
    plug_in = [1 - (1 - c / n) ** k for n, c, k in cases]
    if all(math.isclose(g, p, abs_tol=1e-9) for g, p in zip(got, plug_in)):
        return (
            "that is 1 - (1 - c/n)^k, which treats the share c/n as the true rate and draws with replacement: "
            "it is biased low. Draw k of the n samples without replacement instead: all k are wrong with "
            "probability C(n-c, k) / C(n, k)"
        )
    if all(math.isclose(g, c / n, abs_tol=1e-9) for g, (n, c, _) in zip(got, cases)):
        return "that is c/n, the estimate of pass@1, whatever k is: more attempts must raise the chance"
    n, c, k = next(case for case, g, w in zip(cases, got, want) if not math.isclose(g, w, abs_tol=1e-9))
    given, exact = fn(n, c, k), exact_pass_at_k(n, c, k)
    return f"for n = {n}, c = {c}, k = {k} your function gives {given!r:.30}, not {apart(exact, given, 6)}"


def _real_lead(fn: Callable, real) -> str:
    """What ``fn`` says of ``main``'s lead over ``base`` at k = 1 and k = n on real counts (chapter 6's facts).

    ``real`` holds ``n`` and each held-out sum's right answers among ``n`` samples, ``counts_before`` (``base``)
    and ``counts_after`` (``main``).
    """
    n = int(real["n"])
    lead = [
        np.mean([fn(n, int(a), k) for a in real["counts_after"]])
        - np.mean([fn(n, int(b), k) for b in real["counts_before"]])
        for k in (1, n)
    ]
    return f"; on the held-out sums main leads base by {lead[0]:.2f} with one attempt and by {lead[1]:.2f} with {n}"


@never_raises
def check_pass_at_k(fn: Callable | None, real=None, seed: int = 0) -> CheckResult:
    """Exercise 6.1: ``fn(n, c, k)`` estimates pass@k without bias from ``c`` right answers among ``n`` samples.

    Compared with :func:`rlbook.core.stats.pass_at_k` on edge cases and
    random ones drawn with ``seed``; the plug-in formula 1 - (1 - c/n)^k and
    pass@1 for every k are each named. A passing estimator is then applied
    to ``real``, the counts of ``base`` and ``main`` that chapter 6 shows
    (its facts' ``passk`` of one seed), when given.
    """
    if fn is None:
        return not_answered("`pass_at_k`")
    if not callable(fn):
        return not_a_function("pass_at_k", fn)
    cases = _cases(seed)
    got = []
    for n, c, k in cases:
        try:
            returned = fn(n, c, k)
        except Exception as err:  # noqa: BLE001 - report the reader's error, never raise it
            return verdict(False, f"`pass_at_k({n}, {c}, {k})` raised {type(err).__name__}: {err}")
        if returned is None:
            return not_answered("`pass_at_k`")
        value = as_number(returned)
        if value is None or not math.isfinite(value):
            return verdict(
                False,
                f"`pass_at_k({n}, {c}, {k})` returned {returned!r:.40}; return a probability, a number between 0 and 1",
            )
        got.append(value)
    want = [exact_pass_at_k(*case) for case in cases]
    if not all(math.isclose(g, w, abs_tol=1e-9) for g, w in zip(got, want)):
        return verdict(False, _diagnose(fn, cases, got))
    lead = "" if real is None else _real_lead(fn, real)
    return verdict(True, f"your estimator matches on {len(cases)} cases{lead}")


def pass_at_k(n, c, k):
    """Exercise 6.1's reference: one minus the chance that k of the n samples, drawn without replacement, are all
    wrong (Chen et al. 2021)."""
    if n - c < k:
        return 1.0  # every draw of k samples holds a right one
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def _shown_counts(seeds: tuple[int, ...]):
    """The counts chapter 6 shows with its facts on ``seeds``: ``base`` and ``main`` on the held-out sums, for its
    shown seed."""
    from rlbook import book

    facts = book.load("exploration", seeds, check=False)
    return facts.by_seed[facts.shown].passk


MISTAKES = (
    Mistake(lambda n, c, k: 1 - (1 - c / n) ** k, "biased low"),
    Mistake(lambda n, c, k: c / n, "estimate of pass@1"),
    Mistake(lambda n, c, k: 1 - math.comb(n - c, k) / math.comb(n, k) if c else 0.5, "for n = 10, c = 0, k = 3"),
)
"""Exercise 6.1's named mistakes: sampling with replacement, the pass@1 rate, and a wrong value where c = 0."""

register(
    Exercise(
        "pass-at-k",
        "exploration",
        check_pass_at_k,
        pass_at_k,
        inputs=lambda seeds: (_shown_counts(seeds),),
        mistakes=MISTAKES,
    )
)
