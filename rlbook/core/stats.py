"""Small statistics for evaluating a policy: intervals, bootstraps and pass@k.

Every function is pure numpy and knows nothing about models. Chapter 1 uses
``prob_any_success`` (the chance that one of n samples earns reward), chapter 4
uses ``pass_at_k`` to measure what exploration can reach, and chapter 5 uses the
intervals and the paired difference to compare checkpoints under matched
inference.

Confidence intervals here are 95 % by default. Bootstraps are percentile
bootstraps (Efron and Tibshirani 1993, *An Introduction to the Bootstrap*,
ch. 13) with a fixed seed, so a chapter prints the same interval on every run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np


class Estimate(NamedTuple):
    """A point estimate with the ends of its confidence interval."""

    value: float
    lo: float
    hi: float


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval for a success probability from ``successes`` out of ``n`` trials.

    Used in chapters 4 and 5 for accuracies measured on a few dozen prompts.
    With p = successes / n the interval is (Wilson 1927, JASA 22:209)

        (p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n).

    Unlike the normal approximation p ± z·sqrt(p(1-p)/n) it stays inside
    [0, 1] and does not collapse to a single point at 0/n or n/n.
    """
    if n <= 0:
        raise ValueError(f"n must be positive, got {n}")
    if not 0 <= successes <= n:
        raise ValueError(f"successes must lie in [0, n={n}], got {successes}")
    p = successes / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, float(centre - half)), min(1.0, float(centre + half))


def _check_level(level: float) -> None:
    if not 0 < level < 1:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level}")


def _percentiles(boot_stats: np.ndarray, level: float) -> tuple[float, float]:
    """The two percentiles of bootstrap statistics that bound a ``level`` interval."""
    tail = (1 - level) / 2
    lo, hi = np.quantile(boot_stats, [tail, 1 - tail])
    return float(lo), float(hi)


def bootstrap_ci(
    values: Sequence[float] | np.ndarray,
    stat: Callable[[np.ndarray], float] = np.mean,
    n_boot: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval for ``stat`` of independent ``values``.

    Used in chapters 4 and 5. Draws ``n_boot`` resamples of the values with
    replacement, applies ``stat`` to each, and returns the (1-level)/2 and
    (1+level)/2 quantiles of the results (Efron 1979, Annals of Statistics 7:1).
    The values must be independent: for rewards of several samples of the
    same prompt use ``clustered_bootstrap_ci``.
    """
    _check_level(level)
    data = np.asarray(values, dtype=float)
    if data.ndim != 1 or data.size == 0:
        raise ValueError(f"values must be a non-empty 1-D array, got shape {data.shape}")
    rng = np.random.default_rng(seed)
    resamples = data[rng.integers(0, data.size, size=(n_boot, data.size))]
    return _percentiles(np.array([stat(row) for row in resamples]), level)


def clustered_bootstrap_ci(
    per_prompt_values: Sequence[Sequence[float]] | np.ndarray, n_boot: int = 1000, level: float = 0.95, seed: int = 0
) -> tuple[float, float]:
    """Bootstrap interval for the mean reward of a (prompts, samples) array, resampling prompts.

    Used in chapters 4 and 5. The G samples of one prompt are not independent:
    they share the prompt's difficulty, so a prompt the policy has memorised
    gives G rewards of 1 and a confidently wrong one gives G rewards of 0.
    Treating all P × G rewards as independent draws would pretend there is
    P × G times as much evidence as there is, and give an interval that is far
    too narrow. The unit that was sampled from the task distribution is the
    prompt, so each bootstrap resample draws P prompts with replacement and
    keeps all of a drawn prompt's samples together (the cluster bootstrap:
    Davison and Hinkley 1997, *Bootstrap Methods and their Application*, §3.8;
    for model evaluations, Miller 2024, "Adding Error Bars to Evals",
    arXiv:2411.00640). With the same number of samples per prompt the mean
    over all rewards equals the mean of the prompts' mean rewards.
    """
    data = np.asarray(per_prompt_values, dtype=float)
    if data.ndim != 2 or data.size == 0:
        raise ValueError(f"per_prompt_values must be a non-empty 2-D array (prompts, samples), got shape {data.shape}")
    return bootstrap_ci(data.mean(axis=1), np.mean, n_boot=n_boot, level=level, seed=seed)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased estimate of pass@k from ``c`` correct answers among ``n`` samples of one prompt.

    Used in chapter 4. pass@k is the probability that at least one of k samples
    is correct. Drawing k of the n samples without replacement, the chance
    that all k are wrong is C(n-c, k) / C(n, k), so (Chen et al. 2021,
    "Evaluating Large Language Models Trained on Code", arXiv:2107.03374)

        pass@k = 1 - C(n-c, k) / C(n, k) = 1 - prod_{i=n-c+1}^{n} (1 - k/i).

    The product form avoids the huge binomial coefficients. It is exactly 1
    when fewer than k samples are wrong (every draw of k contains a correct one).
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    if not 0 <= c <= n:
        raise ValueError(f"c must lie in [0, n={n}], got {c}")
    if not 1 <= k <= n:
        raise ValueError(f"k must lie in [1, n={n}], got {k}")
    if n - c < k:
        return 1.0
    return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


def pass_at_k_curve(n: int, correct_counts: Sequence[int] | np.ndarray, ks: Sequence[int]) -> np.ndarray:
    """Mean pass@k over prompts for each k in ``ks``, given each prompt's count of correct samples.

    Used in chapter 4. ``correct_counts[j]`` is how many of the ``n`` samples of
    prompt j were correct; entry i of the result is the mean over prompts of
    ``pass_at_k(n, correct_counts[j], ks[i])``.
    """
    counts = np.asarray(correct_counts, dtype=int)
    if counts.ndim != 1 or counts.size == 0:
        raise ValueError(f"correct_counts must be a non-empty 1-D array, got shape {counts.shape}")
    return np.array([np.mean([pass_at_k(n, int(c), k) for c in counts]) for k in ks])


def prob_any_success(p: float | np.ndarray, n: int) -> float | np.ndarray:
    """Probability that at least one of ``n`` independent samples succeeds when each does with probability ``p``.

    Used in chapter 1 (Exercise 1.3): 1 - (1 - p)^n. A prompt the policy solves
    with p = 0.1 gives a group of 16 at least one rewarded sample with
    probability 1 - 0.9^16 ≈ 0.81; one with p = 0 never does, whatever n is.
    Works elementwise on an array of p.
    """
    if n < 0:
        raise ValueError(f"n must be non-negative, got {n}")
    probs = np.asarray(p, dtype=float)
    if np.any((probs < 0) | (probs > 1)):
        raise ValueError(f"p must lie in [0, 1], got {p}")
    result = 1.0 - (1.0 - probs) ** n
    return float(result) if result.ndim == 0 else result


def mean_with_ci(
    per_prompt_rates: Sequence[float] | np.ndarray, n_boot: int = 1000, level: float = 0.95, seed: int = 0
) -> Estimate:
    """Mean of per-prompt success rates with a bootstrap confidence interval over prompts.

    Used in chapter 5 to report expected reward on the held-out prompts.
    ``per_prompt_rates`` holds one rate per prompt (1-D), or the raw rewards
    as a (prompts, samples) array, which is averaged over samples first; the
    interval resamples prompts, as ``clustered_bootstrap_ci`` explains.
    """
    data = np.asarray(per_prompt_rates, dtype=float)
    if data.ndim == 2:
        data = data.mean(axis=1)
    lo, hi = bootstrap_ci(data, np.mean, n_boot=n_boot, level=level, seed=seed)
    return Estimate(float(data.mean()), lo, hi)


def difference_ci(
    a_per_prompt: Sequence[float] | np.ndarray,
    b_per_prompt: Sequence[float] | np.ndarray,
    paired: bool = True,
    n_boot: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> Estimate:
    """Difference of means, mean(a) - mean(b), with a bootstrap confidence interval.

    Used in chapter 5 to compare a post-RL policy (a) with the pre-RL policy (b)
    under matched inference. When both were evaluated on the same prompts
    (``paired=True``, the matched comparison) prompt j's two rates are
    resampled together, so the prompt-to-prompt spread in difficulty, which
    both policies share, cancels out of the difference and the interval is
    much narrower than comparing two separate intervals. With
    ``paired=False`` the two sets are resampled independently.
    """
    a = np.asarray(a_per_prompt, dtype=float)
    b = np.asarray(b_per_prompt, dtype=float)
    if a.ndim != 1 or b.ndim != 1 or a.size == 0 or b.size == 0:
        raise ValueError("a_per_prompt and b_per_prompt must be non-empty 1-D arrays")
    value = float(a.mean() - b.mean())
    if paired:
        if a.size != b.size:
            raise ValueError(f"paired comparison needs one value per prompt in each, got {a.size} and {b.size}")
        lo, hi = bootstrap_ci(a - b, np.mean, n_boot=n_boot, level=level, seed=seed)
        return Estimate(value, lo, hi)
    _check_level(level)
    rng = np.random.default_rng(seed)
    boot_a = a[rng.integers(0, a.size, size=(n_boot, a.size))].mean(axis=1)
    boot_b = b[rng.integers(0, b.size, size=(n_boot, b.size))].mean(axis=1)
    lo, hi = _percentiles(boot_a - boot_b, level)
    return Estimate(value, lo, hi)
