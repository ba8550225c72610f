"""Chapter 6's exercise check (rlbook.exercises.ch6): the pass@k estimator, right in several spellings, and the
mistakes a student makes, each named."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rlbook.core.stats import pass_at_k as library
from rlbook.exercises import ch6


def test_the_reference_passes_and_applies_itself_to_real_counts():
    real = {"n": 8, "counts_before": [0, 2, 8], "counts_after": [1, 6, 8]}
    result = ch6.check_pass_at_k(ch6.pass_at_k, real)
    assert result.passed
    lead_1 = np.mean([1 / 8, 6 / 8, 1]) - np.mean([0, 2 / 8, 1])
    assert f"by {lead_1:.2f} with one attempt" in result.message and "with 8" in result.message


def _product_form(n, c, k):
    return 1.0 if n - c < k else float(1 - np.prod(1 - k / np.arange(n - c + 1, n + 1)))


def _by_counting(n, c, k):
    return 1 - math.comb(n - c, k) / math.comb(n, k)


@pytest.mark.parametrize("right", [library, _product_form, _by_counting, lambda n, c, k: np.float64(library(n, c, k))])
def test_right_answers_in_every_spelling_pass(right):
    assert ch6.check_pass_at_k(right).passed


@pytest.mark.parametrize(
    ("wrong", "says"),
    [
        *((m.wrong, m.says) for m in ch6.MISTAKES),
        (lambda n, c, k: 1 - math.comb(n - c, k) / math.comb(n, k) ** 2, "your function gives"),
        (lambda n, c, k: None, "no answer yet"),
        (lambda n, c, k: "0.5", "return a probability"),
        (lambda n, c, k: float("nan"), "return a probability"),
        (lambda n, c, k: 1 / (c - c), "ZeroDivisionError"),
        (None, "no answer yet"),
        (0.5, "must be a function"),
    ],
)
def test_mistakes_are_named(wrong, says):
    result = ch6.check_pass_at_k(wrong)
    assert not result.passed and says in result.message


def test_the_exact_value_is_printed_with_the_digits_that_tell_it_from_the_answer():
    from rlbook.core.stats import pass_at_k

    wrong = ch6.check_pass_at_k(lambda n, c, k: round(pass_at_k(n, c, k), 5))  # right to five decimals only
    given, shown = wrong.message.split("your function gives ")[1].split(", not ")
    digits = len(shown.split(".")[1])
    assert not wrong.passed and digits >= 6 and f"{float(given):.{digits}f}" != shown
