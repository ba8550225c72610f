"""Tests for rlbook.core.stats, with values worked by hand."""

from __future__ import annotations

from math import comb

import numpy as np
import pytest

from rlbook.core.stats import (
    Estimate,
    bootstrap_ci,
    clustered_bootstrap_ci,
    difference_ci,
    mean_with_ci,
    pass_at_k,
    pass_at_k_curve,
    prob_any_success,
    wilson_interval,
)


# Wilson, n = 10, z = 1.96: z²/n = 0.38416, so the denominator is 1.38416.
# 0/10: centre = 0.19208/1.38416 = 0.138770, half = 1.96·sqrt(3.8416/400)/1.38416 = 0.138770.
# 5/10: centre = 0.5, half = 1.96·sqrt(0.025 + 0.009604)/1.38416 = 1.96·0.186022/1.38416 = 0.263410.
@pytest.mark.parametrize(
    "successes, expected", [(0, (0.0, 0.277540)), (5, (0.236590, 0.763410)), (10, (0.722460, 1.0))]
)
def test_wilson_known_values(successes, expected):
    lo, hi = wilson_interval(successes, 10)
    assert lo == pytest.approx(expected[0], abs=1e-5)
    assert hi == pytest.approx(expected[1], abs=1e-5)


def test_wilson_shrinks_with_n_and_rejects_bad_input():
    small = wilson_interval(5, 10)
    large = wilson_interval(500, 1000)
    assert large[1] - large[0] < small[1] - small[0]
    with pytest.raises(ValueError):
        wilson_interval(0, 0)
    with pytest.raises(ValueError):
        wilson_interval(11, 10)


def test_pass_at_k_hand_values():
    assert pass_at_k(4, 1, 1) == pytest.approx(0.25)
    assert pass_at_k(4, 1, 4) == 1.0
    assert pass_at_k(4, 0, 2) == 0.0
    assert pass_at_k(4, 4, 1) == 1.0
    # n=4, c=2, k=2: 1 - C(2,2)/C(4,2) = 1 - 1/6.
    assert pass_at_k(4, 2, 2) == pytest.approx(5 / 6)


def test_pass_at_k_matches_binomial_formula():
    for n, c, k in [(32, 3, 5), (16, 8, 4), (100, 1, 10), (10, 0, 10)]:
        expected = 1 - comb(n - c, k) / comb(n, k)
        assert pass_at_k(n, c, k) == pytest.approx(expected, rel=1e-12, abs=1e-12)


def test_pass_at_k_rejects_bad_input():
    with pytest.raises(ValueError):
        pass_at_k(4, 1, 5)
    with pytest.raises(ValueError):
        pass_at_k(4, 1, 0)
    with pytest.raises(ValueError):
        pass_at_k(4, 5, 1)


def test_pass_at_k_curve_averages_over_prompts():
    # Prompts with 0, 1 and 4 correct out of 4: pass@1 = (0 + 0.25 + 1)/3, pass@4 = (0 + 1 + 1)/3.
    curve = pass_at_k_curve(4, [0, 1, 4], [1, 4])
    assert curve == pytest.approx([1.25 / 3, 2 / 3])


def test_prob_any_success():
    assert prob_any_success(0.5, 2) == pytest.approx(0.75)
    assert prob_any_success(0.0, 100) == 0.0
    assert prob_any_success(0.3, 0) == 0.0
    assert isinstance(prob_any_success(0.5, 3), float)
    np.testing.assert_allclose(prob_any_success(np.array([0.1, 1.0]), 16), [1 - 0.9**16, 1.0])
    with pytest.raises(ValueError):
        prob_any_success(1.5, 2)


def test_bootstrap_of_two_points_covers_all_outcomes():
    # Resampling [0, 1] gives mean 0 (p=1/4), 0.5 (p=1/2) or 1 (p=1/4): the 95 % interval is [0, 1].
    assert bootstrap_ci([0.0, 1.0], n_boot=2000) == (0.0, 1.0)


def test_bootstrap_constant_and_deterministic():
    assert bootstrap_ci([0.3] * 5) == pytest.approx((0.3, 0.3))
    values = np.random.default_rng(1).random(30)
    assert bootstrap_ci(values, seed=3) == bootstrap_ci(values, seed=3)
    lo, hi = bootstrap_ci(values, stat=np.median)
    assert lo <= np.median(values) <= hi
    with pytest.raises(ValueError):
        bootstrap_ci([])
    with pytest.raises(ValueError):
        bootstrap_ci([1.0, 2.0], level=1.0)


def test_clustered_bootstrap_is_wider_than_naive_for_clustered_rewards():
    # 20 prompts, each all right or all wrong over 16 samples: only 20 independent units.
    rows = np.repeat(np.array([1.0] * 10 + [0.0] * 10)[:, None], 16, axis=1)
    clustered = clustered_bootstrap_ci(rows)
    naive = bootstrap_ci(rows.ravel())
    assert clustered[0] <= 0.5 <= clustered[1]
    assert clustered[1] - clustered[0] > 3 * (naive[1] - naive[0])
    assert clustered == bootstrap_ci(rows.mean(axis=1))
    with pytest.raises(ValueError):
        clustered_bootstrap_ci([1.0, 0.0])


def test_mean_with_ci_accepts_rates_or_reward_matrix():
    rates = [0.0, 0.5, 1.0, 0.5]
    est = mean_with_ci(rates)
    assert isinstance(est, Estimate)
    assert est.value == pytest.approx(0.5)
    assert est.lo <= 0.5 <= est.hi
    matrix = [[0, 0], [1, 0], [1, 1], [0, 1]]
    assert mean_with_ci(matrix) == est


def test_paired_difference_cancels_shared_prompt_difficulty():
    b = np.random.default_rng(0).random(40)
    a = b + 0.1
    paired = difference_ci(a, b)
    assert paired.value == pytest.approx(0.1)
    assert paired.lo == pytest.approx(0.1) and paired.hi == pytest.approx(0.1)
    unpaired = difference_ci(a, b, paired=False)
    assert unpaired.value == pytest.approx(0.1)
    assert unpaired.lo < 0.0 and unpaired.hi > 0.1
    with pytest.raises(ValueError):
        difference_ci([1.0, 0.0], [1.0])
