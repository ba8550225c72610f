"""Checkers for chapter 10's exercises (preferences and DPO), each registered with its reference solution.

- :func:`check_dpo_loss` (Exercise 10.1): DPO's loss of each pair from four
  sequence log-probabilities and beta, then applied to pairs of the ``dpo``
  learner's training data before and after it trained, beside the reader's
  guess of how many of them it ranks right.
- :func:`check_preference_probability` (Exercise 10.2): the Bradley–Terry
  probability that the chosen answer is preferred, then applied to ``dpo``'s
  implicit rewards of the same pairs.

Each checker returns a :class:`~rlbook.exercises.CheckResult` and never
raises on a wrong answer.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping

import numpy as np
import torch

from rlbook.core import preferences

from . import CheckResult, as_number, call, named_by, never_raises, not_a_function, not_answered, verdict
from .registry import Exercise, Mistake, register

TOL = 1e-6

# ------------------------------------------------------------------ exercise 10.1: DPO's loss


def _loss_cases(seed: int) -> list[tuple[list[float], list[float], list[float], list[float], float]]:
    """Made-up pairs: log-probabilities of chosen and rejected answers under a policy and a reference, and beta."""
    rng = random.Random(seed)
    cases = []
    for n, beta in ((5, 1.0), (3, 0.1), (4, 0.5)):
        ref_c = [-rng.uniform(0.1, 6) for _ in range(n)]
        ref_r = [-rng.uniform(0.1, 6) for _ in range(n)]
        cases.append(
            ([x + rng.uniform(-2, 2) for x in ref_c], [x + rng.uniform(-2, 2) for x in ref_r], ref_c, ref_r, beta)
        )
    return cases


def _truth(c, r, rc, rr, beta) -> list[float]:
    """The reference losses, from :func:`rlbook.core.preferences.dpo_loss` one pair at a time."""
    t = torch.tensor
    return [
        float(preferences.dpo_loss(t([a]), t([b]), t([x]), t([y]), beta))
        for a, b, x, y in zip(c, r, rc, rr, strict=True)
    ]


def _softplus(x: float) -> float:
    """log(1 + e^x), as the slips below need it."""
    return math.log1p(math.exp(-abs(x))) + max(x, 0.0)


LOSS_SLIPS = (
    (
        lambda c, r, rc, rr, beta: [_softplus(-beta * (a - b)) for a, b in zip(c, r)],
        (
            "you left out the reference: DPO compares each answer's log-probability with the reference's, "
            "log pi - log pi_ref, before it compares the two answers"
        ),
    ),
    (
        lambda c, r, rc, rr, beta: [_softplus(beta * ((a - x) - (b - y))) for a, b, x, y in zip(c, r, rc, rr)],
        "your sign is turned round: the loss is small when the chosen answer's log-ratio is the larger",
    ),
    (
        lambda c, r, rc, rr, beta: [_softplus(-((a - x) - (b - y))) for a, b, x, y in zip(c, r, rc, rr)],
        "you left out beta: it multiplies the difference of the log-ratios inside the sigmoid",
    ),
    (
        lambda c, r, rc, rr, beta: [
            1 - 1 / (1 + math.exp(-beta * ((a - x) - (b - y)))) for a, b, x, y in zip(c, r, rc, rr)
        ],
        "you took 1 - sigmoid: the loss is minus the log of the sigmoid, -log sigmoid(beta * margin)",
    ),
)
"""Losses a reader may compute instead of DPO's, each with what the check says of it."""


def _as_values(got, n: int) -> list[float] | None:
    """The reader's answer as ``n`` floats; None when it has another length or holds anything else."""
    try:
        got = got.detach() if isinstance(got, torch.Tensor) else got
        values = np.asarray(got, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError, RuntimeError):
        return None
    return values.tolist() if len(values) == n and np.isfinite(values).all() else None


def _named_slip(slips, got: list[float], args: tuple) -> str | None:
    """The message of the first slip whose values ``got`` matches, or None."""
    for wrong, message in slips:
        if np.allclose(got, wrong(*args), atol=TOL):
            return message
    return None


@never_raises
def check_dpo_loss(fn: Callable | None, pairs: Mapping | None = None, predicted=None) -> CheckResult:
    """Exercise 10.1: ``fn(chosen, rejected, ref_chosen, ref_rejected, beta)`` must return DPO's loss of each pair.

    Tried on made-up pairs, then applied to ``pairs`` (the first pairs of
    ``dpo``'s data: log-probabilities under the reference and under ``dpo``
    after training, and its beta), beside the reader's ``predicted`` count of
    those pairs whose chosen answer ``dpo`` ranks above the rejected one.
    """
    if fn is None:
        return not_answered("`dpo_loss`")
    if not callable(fn):
        return not_a_function("dpo_loss", fn)
    cases = _loss_cases(10)
    for case in cases:
        got, error = call(fn, *(list(x) if isinstance(x, list) else x for x in case))
        if error:
            return verdict(False, error)
        if got is None:
            return not_answered("`dpo_loss` (it returned None)")
        values = _as_values(got, len(case[0]))
        if values is None:
            return verdict(False, f"return one finite loss per pair: {len(case[0])} values for {len(case[0])} pairs")
        truth = _truth(*case)
        if not np.allclose(values, truth, atol=TOL):
            slip = _named_slip(LOSS_SLIPS, values, case)
            return verdict(False, slip or f"for beta {case[4]} expected {np.round(truth, 4).tolist()}, got {values}")
    tail = "" if pairs is None else _on_run(fn, pairs, predicted)
    return verdict(True, f"your losses match on {len(cases)} sets of pairs{tail}")


def _on_run(fn: Callable, pairs: Mapping, predicted) -> str:
    """What the reader's loss says of ``dpo``'s pairs before and after training, beside the guess."""
    beta = float(pairs["beta"])
    rc, rr = list(pairs["ref_chosen"]), list(pairs["ref_rejected"])
    before = float(np.mean(fn(rc, rr, rc, rr, beta)))
    after = fn(list(pairs["policy_chosen"]), list(pairs["policy_rejected"]), rc, rr, beta)
    ranked = sum(value < math.log(2) for value in np.asarray(after, dtype=float).reshape(-1).tolist())
    said = (
        f"; on the first {len(rc)} pairs of dpo's data the mean loss is {before:.3f} (log 2) before training and "
        f"{float(np.mean(after)):.3f} after, and dpo ranks {ranked} of the {len(rc)} chosen answers above the rejected "
        "(a loss below log 2)"
    )
    guess = as_number(predicted)
    if guess is not None:
        said += f". You predicted {guess:g}"
    return said


def dpo_loss(chosen, rejected, ref_chosen, ref_rejected, beta):
    """Exercise 10.1's reference: -log sigmoid(beta * margin of the log-ratios), one value per pair."""
    return [
        math.log1p(math.exp(-beta * ((c - rc) - (r - rr))))
        for c, r, rc, rr in zip(chosen, rejected, ref_chosen, ref_rejected)
    ]


# ------------------------------------------------------------------ exercise 10.2: the Bradley–Terry probability


def _score_cases(seed: int) -> list[tuple[list[float], list[float]]]:
    """Made-up scores of chosen and rejected answers, some far apart, some equal."""
    rng = random.Random(seed)
    cases = [([0.0, 2.0, -1.0], [0.0, -2.0, 3.0])]
    for n in (4, 6):
        cases.append(([rng.uniform(-5, 5) for _ in range(n)], [rng.uniform(-5, 5) for _ in range(n)]))
    return cases


def _preferred(chosen, rejected) -> list[float]:
    """The truth: sigmoid of each score difference."""
    return torch.sigmoid(
        torch.tensor(chosen, dtype=torch.float64) - torch.tensor(rejected, dtype=torch.float64)
    ).tolist()


PROBABILITY_SLIPS = (
    (
        lambda c, r: [1 / (1 + math.exp(-a)) for a in c],
        "you read the chosen answer's score alone: Bradley–Terry compares two scores, sigmoid(r_chosen - r_rejected)",
    ),
    (
        lambda c, r: [1 / (1 + math.exp(a - b)) for a, b in zip(c, r)],
        "your difference is turned round: the chosen answer is preferred when its score is the larger",
    ),
    (
        lambda c, r: [a / (a + b) if a + b else 0.5 for a, b in zip(c, r)],
        "you divided the scores: Bradley–Terry divides their exponentials, e^r_w / (e^r_w + e^r_l)",
    ),
)
"""Probabilities a reader may compute instead of Bradley–Terry's, each with what the check says of it."""


@never_raises
def check_preference_probability(fn: Callable | None, pairs: Mapping | None = None, predicted=None) -> CheckResult:
    """Exercise 10.2: ``fn(chosen, rejected)`` must return the Bradley–Terry probability of each preference.

    Tried on made-up scores, then applied to ``dpo``'s implicit rewards of
    ``pairs`` (those of Exercise 10.1), beside the reader's ``predicted``
    mean probability.
    """
    if fn is None:
        return not_answered("`preference_probability`")
    if not callable(fn):
        return not_a_function("preference_probability", fn)
    cases = _score_cases(3)
    for chosen, rejected in cases:
        got, error = call(fn, list(chosen), list(rejected))
        if error:
            return verdict(False, error)
        if got is None:
            return not_answered("`preference_probability` (it returned None)")
        values = _as_values(got, len(chosen))
        if values is None:
            return verdict(False, f"return one probability per pair: {len(chosen)} values for {len(chosen)} pairs")
        truth = _preferred(chosen, rejected)
        if not np.allclose(values, truth, atol=TOL):
            slip = _named_slip(PROBABILITY_SLIPS, values, (chosen, rejected))
            return verdict(False, slip or f"for scores {chosen} and {rejected} expected {truth}, got {values}")
    tail = "" if pairs is None else _implicit(fn, pairs, predicted)
    return verdict(True, f"your probabilities match on {len(cases)} sets of scores{tail}")


def _implicit(fn: Callable, pairs: Mapping, predicted) -> str:
    """The reader's probabilities of ``dpo``'s implicit rewards of the pairs, beside the guess."""
    beta = float(pairs["beta"])
    reward = {
        side: [beta * (p - r) for p, r in zip(pairs[f"policy_{side}"], pairs[f"ref_{side}"])]
        for side in ("chosen", "rejected")
    }
    probability = np.asarray(fn(reward["chosen"], reward["rejected"]), dtype=float).reshape(-1)
    said = (
        f"; dpo's implicit rewards give its first {len(probability)} pairs a mean probability of "
        f"{probability.mean():.3f} that the chosen answer is preferred (lowest {probability.min():.3f}, "
        f"highest {probability.max():.3f})"
    )
    guess = as_number(predicted)
    if guess is not None:
        said += f". You predicted {guess:g}"
    return said


def preference_probability(chosen, rejected):
    """Exercise 10.2's reference: sigmoid(r_chosen - r_rejected) for each pair."""
    return [1 / (1 + math.exp(r - c)) for c, r in zip(chosen, rejected)]


# ------------------------------------------------------------------ registration


def _facts(seeds: tuple[int, ...]):
    """Chapter 10's facts on ``seeds``, unchecked (what the page's cells hand the checkers)."""
    from rlbook import book

    return book.load("preference", seeds, check=False).exercise


MISTAKES: dict[str, tuple[Mistake, ...]] = {
    "dpo-loss": tuple(Mistake(wrong, named_by(message)) for wrong, message in LOSS_SLIPS),
    "preference-probability": tuple(Mistake(wrong, named_by(message)) for wrong, message in PROBABILITY_SLIPS),
}
"""Chapter 10's named mistakes, by exercise, from its checkers' tables."""

register(
    Exercise(
        "dpo-loss",
        "preference",
        check_dpo_loss,
        dpo_loss,
        inputs=lambda seeds: (_facts(seeds),),
        mistakes=MISTAKES["dpo-loss"],
    )
)
register(
    Exercise(
        "preference-probability",
        "preference",
        check_preference_probability,
        preference_probability,
        inputs=lambda seeds: (_facts(seeds),),
        mistakes=MISTAKES["preference-probability"],
    )
)

__all__ = ["MISTAKES", "check_dpo_loss", "check_preference_probability", "dpo_loss", "preference_probability"]
